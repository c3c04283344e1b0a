// Every public subpath resolves with its types (tsc runs this under moduleResolution bundler, node16 and node10).
import { createClient, ApiError, type ChatCompletionChunk } from "webgpu-openai";
import { createScriptedEngine } from "webgpu-openai/testing";
import { exposeEngineHost } from "webgpu-openai/worker";

const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }) });
const chunk: ChatCompletionChunk | undefined = undefined;
export const checks: [typeof client.fetch, typeof ApiError, typeof exposeEngineHost, typeof chunk] = [client.fetch, ApiError, exposeEngineHost, chunk];
