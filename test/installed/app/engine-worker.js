// The app's own engine worker: webgpu-openai/worker serves the client's requests.
import { exposeEngineHost } from "webgpu-openai/worker";

exposeEngineHost();
