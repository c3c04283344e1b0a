/**
 * Where web-llm 0.2.86 looks for a model's files: the URL normalization it
 * applies to `ModelRecord.model` and the cache scope of each file. Our
 * downloader must key records exactly as web-llm reads them, or web-llm
 * downloads everything again.
 */

/** The weight cache backends this library can fill (web-llm's `appConfig.cacheBackend`). */
export type CacheBackend = "indexeddb" | "cache" | "opfs";

/**
 * Cache scopes: an IndexedDB database / Cache API cache / OPFS folder each.
 * web-llm's three, and `wllama/gguf` for GGUF files (the wllama engine reads
 * them from there; web-llm never looks in it).
 */
export type Scope = "webllm/config" | "webllm/wasm" | "webllm/model" | "wllama/gguf";

export const SCOPES: readonly Scope[] = ["webllm/config", "webllm/wasm", "webllm/model", "wllama/gguf"];

/**
 * web-llm's `cleanModelUrl` (bundle L11280): a trailing `/`, then
 * `resolve/main/` unless the URL already has `/resolve/<rev>/`. Relative URLs
 * are resolved against the page (web-llm would throw on them).
 */
export function cleanModelUrl(model: string): string {
  let url = model.endsWith("/") ? model : `${model}/`;
  if (!/.+\/resolve\/.+\//.test(url)) url += "resolve/main/";
  const base = (globalThis as { location?: { href: string } }).location?.href;
  return new URL(url, base).href;
}

/** The URL of `file` inside the model folder, as web-llm computes it (`new URL(file, modelUrl)`). */
export function fileUrl(modelUrl: string, file: string): string {
  return new URL(file, modelUrl).href;
}

/**
 * Whether web-llm reads the model library from its cache. It fetches
 * `localhost` and relative `model_lib` URLs every time (bundle L18251–18264),
 * so storing those would only waste space.
 */
export function isWasmCacheable(modelLib: string): boolean {
  return modelLib.startsWith("http") && !modelLib.includes("localhost");
}
