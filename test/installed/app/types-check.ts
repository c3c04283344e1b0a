// Every public subpath resolves with its types (tsc runs this under moduleResolution bundler, node16 and node10).
import { createClient, ApiError, type ChatCompletionChunk } from "webgpu-openai";
import { createScriptedEngine } from "webgpu-openai/testing";
import { exposeEngineHost } from "webgpu-openai/worker";
import { createClient as createStaticClient, type Client } from "webgpu-openai/static";

const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }) });
const chunk: ChatCompletionChunk | undefined = undefined;
export const staticClient: Client = createStaticClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }) });
export const checks: [typeof client.fetch, typeof ApiError, typeof exposeEngineHost, typeof chunk] = [client.fetch, ApiError, exposeEngineHost, chunk];
