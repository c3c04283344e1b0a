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
/** One host for every tab of the origin, in an app's own SharedWorker: `createClient({ worker: new SharedWorker(url, { type: "module" }) })`. */
export { exposeSharedEngineHost } from "./worker/shared-host.js";
export { EngineHost } from "./host/engine-host.js";
export type { EngineHostOptions } from "./host/engine-host.js";
