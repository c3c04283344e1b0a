// The extension's own engine worker (the README's self-hosted worker).
import { exposeEngineHost } from "webgpu-openai/worker";

exposeEngineHost();
