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
/**
 * Another engine behind the seam, in the worker that runs the host: call it
 * in the worker's module before exposeEngineHost, then name the kind in a
 * record's `engine.kind` or in createClient's `engine` (docs/internals/architecture.md).
 */
export { registerEngineKind } from "./engine/registry.js";
export type { Engine, EngineKind, EngineCapabilities, EngineSettings, EngineFamilyHints, LoadOptions } from "./engine/types.js";
export type { EngineHostOptions } from "./host/engine-host.js";
