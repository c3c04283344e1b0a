/**
 * `webgpu-openai/static`: the API of `webgpu-openai`, with everything the
 * library otherwise loads on first use imported up front: EngineHost, the
 * web-llm adapter, `@mlc-ai/web-llm` itself, the weight-cache backends.
 *
 * For a context that may not call `import()`: a service worker, such as a
 * browser extension's MV3 background script running `createClient()` itself
 * (no Worker there, so the engine runs in that thread). A bundler that splits
 * code keeps the default entry's lazy loads as `import()` of its chunks, which
 * a service worker rejects. Pages should keep `webgpu-openai`: its lazy loads
 * keep web-llm (6 MB) out of the page until a model needs it.
 *
 * Why an entry point and not an option that takes the web-llm module: web-llm
 * is one of eight lazy loads (lazy-imports.ts names them); an option for it alone would
 * still leave `import()` of the pipeline and the cache backends, and making
 * those static in the default entry would put the whole pipeline into every
 * page's bundle. The entry keeps the same names, so code moves between a page
 * and a service worker by changing the import path.
 */
import * as webllm from "@mlc-ai/web-llm";
import * as engineHost from "./host/engine-host.js";
import * as webllmEngine from "./engine/webllm/webllm-engine.js";
import * as cacheManager from "./cache/manager.js";
import * as idbStore from "./cache/idb-store.js";
import * as cacheApiStore from "./cache/cache-api-store.js";
import * as opfsStore from "./cache/opfs-store.js";
import * as mcpSdk from "./mcp/sdk.js";
import { provideModules } from "./lazy-imports.js";
import { createClient as createClientOnDemand, type Client, type ClientOptions } from "./client/create-client.js";

export * from "./index.js";

/**
 * `createClient` of `webgpu-openai`, after handing the library its statically
 * imported modules (done here, not at module top level: the package declares
 * `sideEffects: false`, so a bundler may drop a module whose only effect is a
 * top-level statement).
 */
export function createClient(options?: ClientOptions): Client {
  provideModules({ webllm, engineHost, webllmEngine, cacheManager, idbStore, cacheApiStore, opfsStore, mcpSdk });
  return createClientOnDemand(options);
}
