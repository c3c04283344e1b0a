/**
 * Every module the library loads on first use, in one table, and the one
 * switch that makes them all static.
 *
 * Pages keep their main bundle small: EngineHost (the whole pipeline) is
 * loaded only for `worker: false`, the web-llm adapter and web-llm itself
 * (6 MB) only when a web-llm model or the prebuilt catalog is needed, a cache
 * backend only when chosen. Each `import()` below stays a literal, so the
 * app's bundler finds it and emits a chunk.
 *
 * A service worker may not call `import()` at all (HTML spec; Chrome rejects
 * it with "import() is disallowed on ServiceWorkerGlobalScope"), and a
 * code-splitting bundler keeps these as `import()` of its chunks. The
 * `webgpu-openai/static` entry (static.ts) imports each of them statically and
 * hands them over with `provideModules`, after which nothing here calls
 * `import()`.
 */
export interface Loaders {
  engineHost: () => Promise<typeof import("./host/engine-host.js")>;
  webllmEngine: () => Promise<typeof import("./engine/webllm-engine.js")>;
  webllm: () => Promise<typeof import("@mlc-ai/web-llm")>;
  cacheManager: () => Promise<typeof import("./cache/manager.js")>;
  idbStore: () => Promise<typeof import("./cache/idb-store.js")>;
  cacheApiStore: () => Promise<typeof import("./cache/cache-api-store.js")>;
  opfsStore: () => Promise<typeof import("./cache/opfs-store.js")>;
}

export const load: Loaders = {
  engineHost: () => import("./host/engine-host.js"),
  webllmEngine: () => import("./engine/webllm-engine.js"),
  webllm: () => import("@mlc-ai/web-llm"),
  cacheManager: () => import("./cache/manager.js"),
  idbStore: () => import("./cache/idb-store.js"),
  cacheApiStore: () => import("./cache/cache-api-store.js"),
  opfsStore: () => import("./cache/opfs-store.js"),
};

/** The modules themselves, as the static entry imports them. */
export type StaticModules = { [K in keyof Loaders]: Awaited<ReturnType<Loaders[K]>> };

/** Replaces every loader by its already imported module. */
export function provideModules(modules: StaticModules): void {
  for (const key of Object.keys(modules) as (keyof Loaders)[]) {
    const module = modules[key];
    (load as unknown as Record<string, () => Promise<unknown>>)[key] = () => Promise.resolve(module);
  }
}
