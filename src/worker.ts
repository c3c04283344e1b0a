/**
 * `webgpu-openai/worker`: for apps that host the engine worker themselves
 * (their own bundling, CSP or build setup). In `my-worker.ts`:
 *
 *   import { exposeEngineHost } from "webgpu-openai/worker";
 *   exposeEngineHost();
 *
 * and in the page:
 *
 *   createClient({ worker: new Worker(new URL("./my-worker.ts", import.meta.url), { type: "module" }) });
 */
export { exposeEngineHost } from "./worker/expose.js";
export { EngineHost } from "./host/engine-host.js";
export type { EngineHostOptions } from "./host/engine-host.js";
