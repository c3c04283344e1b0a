/**
 * Which web-llm is running, told from what the module exports and how its
 * code behaves, so one adapter drives 0.2.79 through 0.2.86 (the range this
 * adapter was checked against). Differences handled:
 *
 * - cache option: `appConfig.useIndexedDBCache: boolean` (≤ 0.2.79) vs
 *   `appConfig.cacheBackend: "cache" | "indexeddb" | "opfs" | …` (later);
 * - weight manifest: `ndarray-cache.json` (≤ 0.2.79) vs `tensor-cache.json`
 *   (exported as `TENSOR_CACHE_MANIFEST_FILENAME` where it exists);
 * - after a reply that ended by abort or `length`, ≥ 0.2.84 never continues
 *   the KV cache (the last sampled token is not in it); older ones do and the
 *   next turn starts from a cache missing that token, so the adapter resets
 *   the chat itself there;
 * - `resetChat()` takes `(keepStats, modelId)` in 0.2.79 and nothing in 0.2.86;
 *   calling it with no argument is right for both.
 * - structural tags: 0.2.79 has no `response_format: {type: "structural_tag"}`
 *   and ignores it without a word; its `grammar` (EBNF) format is used instead
 *   (told from whether its chat request check knows the field).
 *
 * Pure: the module is passed in. Tested in Node with stand-in modules.
 */

/** What the adapter needs to know about the web-llm it drives. */
export interface WebLlmCompat {
  /** web-llm's `modelVersion` (folder of the prebuilt model libraries), e.g. `v0_2_48`, `v0_2_86/base`. */
  modelVersion: string | null;
  /** `0.2.79`-style version inferred from modelVersion and exports; `null` when unknown. */
  version: string | null;
  cacheOption: "cacheBackend" | "useIndexedDBCache";
  tensorCacheFile: string;
  /** web-llm itself drops the KV cache after an abort/length finish (≥ 0.2.84). */
  resetsKvAfterAbort: boolean;
  /**
   * `usage.completion_tokens` counts only decode steps, not the token sampled
   * at the end of prefill (≤ 0.2.79: seen on the real engine, 1 token → 0).
   */
  completionTokensMissFirst: boolean;
  /** `response_format: {type: "structural_tag"}` is enforced (absent ≤ 0.2.79: silently ignored). */
  structuralTags: boolean;
}

/** The parts of the web-llm module that version detection reads. */
export interface WebLlmModuleShape {
  modelVersion?: unknown;
  prebuiltAppConfig?: unknown;
  TENSOR_CACHE_MANIFEST_FILENAME?: unknown;
  MLCEngine?: unknown;
  postInitAndCheckFieldsChatCompletion?: unknown;
}

export function detectWebLlmCompat(webllm: WebLlmModuleShape): WebLlmCompat {
  const modelVersion = typeof webllm.modelVersion === "string" ? webllm.modelVersion : null;
  const prebuilt = (webllm.prebuiltAppConfig ?? {}) as Record<string, unknown>;
  const cacheOption = "cacheBackend" in prebuilt || !("useIndexedDBCache" in prebuilt) ? "cacheBackend" : "useIndexedDBCache";
  const tensorCacheFile = typeof webllm.TENSOR_CACHE_MANIFEST_FILENAME === "string" ? webllm.TENSOR_CACHE_MANIFEST_FILENAME : "ndarray-cache.json";
  const proto = (webllm.MLCEngine as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  const prepare = proto?.preparePrefillInput;
  // The ≥ 0.2.84 guard lives in preparePrefillInput (absent before): it tests the previous finish reason.
  const resetsKvAfterAbort = typeof prepare === "function" && /getFinishReason\(\)/.test(Function.prototype.toString.call(prepare));
  const completionTokensMissFirst = cacheOption === "useIndexedDBCache";
  // The chat request check validates `structural_tag` where web-llm supports it; a module without the check is assumed current.
  const check = webllm.postInitAndCheckFieldsChatCompletion;
  const structuralTags = typeof check !== "function" || /structural_tag/.test(Function.prototype.toString.call(check));
  return { modelVersion, version: versionOf(modelVersion, cacheOption), cacheOption, tensorCacheFile, resetsKvAfterAbort, completionTokensMissFirst, structuralTags };
}

function versionOf(modelVersion: string | null, cacheOption: WebLlmCompat["cacheOption"]): string | null {
  const m = modelVersion ? /^v(\d+)_(\d+)_(\d+)/.exec(modelVersion) : null;
  if (!m) return null;
  // modelVersion only moves when the library ABI changes: v0_2_48 served 0.2.48–0.2.79.
  if (m[3] === "48" && cacheOption === "useIndexedDBCache") return "≤0.2.79";
  return `${m[1]}.${m[2]}.${m[3]}`;
}

/** The appConfig fields that select the weight cache, in the dialect of this web-llm. */
export function cacheConfig(compat: WebLlmCompat, backend: "indexeddb" | "cache" | "opfs"): Record<string, unknown> {
  if (compat.cacheOption === "useIndexedDBCache") {
    if (backend === "opfs") throw new Error("This web-llm (≤ 0.2.79) has no OPFS cache; use cache: \"indexeddb\" or \"cache\".");
    return { useIndexedDBCache: backend === "indexeddb" };
  }
  return { cacheBackend: backend };
}
