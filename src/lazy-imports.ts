/**
 * The override slot for the modules the library loads on first use: empty in
 * the default entry, filled by the `webgpu-openai/static` entry.
 *
 * Pages keep their main bundle small: EngineHost (the whole pipeline) is
 * loaded only for `worker: false`, the web-llm adapter and web-llm itself
 * (6 MB) only when a web-llm model or the prebuilt catalog is needed, a cache
 * backend only when chosen. Each consumer writes its own `import()` as a
 * literal beside its `loadModule` call (the app's bundler finds it there and
 * emits a chunk), so this file imports nothing and sits below every folder.
 *
 * A service worker may not call `import()` at all (HTML spec; Chrome rejects
 * it with "import() is disallowed on ServiceWorkerGlobalScope"), and a
 * code-splitting bundler keeps these as `import()` of its chunks. The
 * `webgpu-openai/static` entry (static.ts) imports each of them statically and
 * hands them over with `provideModules`, after which no consumer calls
 * `import()`.
 */

/** The modules loaded on first use, by the name the static entry provides them under. */
export type LazyModuleName = "engineHost" | "webllmEngine" | "webllm" | "cacheManager" | "idbStore" | "cacheApiStore" | "opfsStore" | "mcpSdk";

const provided: Partial<Record<LazyModuleName, unknown>> = {};

/**
 * The module `name`: the one the static entry provided, or else `importer()`,
 * the consumer's own `import()` of it.
 */
export function loadModule<T>(name: LazyModuleName, importer: () => Promise<T>): Promise<T> {
  return name in provided ? Promise.resolve(provided[name] as T) : importer();
}

/** Replaces every lazy load by its already imported module (the static entry). */
export function provideModules(modules: Record<LazyModuleName, unknown>): void {
  for (const key of Object.keys(modules) as LazyModuleName[]) provided[key] = modules[key];
}
