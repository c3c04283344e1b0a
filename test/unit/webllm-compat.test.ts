import { describe, expect, it } from "vitest";
import * as webllm086 from "@mlc-ai/web-llm";
import * as webllm079 from "webllm-0279";
import { cacheConfig, detectWebLlmCompat } from "../../src/engine/webllm/webllm-compat.js";

describe("web-llm version detection (the real 0.2.86 and 0.2.79 packages)", () => {
  it("0.2.86: cacheBackend, tensor-cache.json, KV reset after abort/length", () => {
    const compat = detectWebLlmCompat(webllm086);
    expect(compat).toMatchObject({ modelVersion: "v0_2_86/base", version: "0.2.86", cacheOption: "cacheBackend", tensorCacheFile: "tensor-cache.json", resetsKvAfterAbort: true, completionTokensMissFirst: false, structuralTags: true });
    expect(cacheConfig(compat, "indexeddb")).toEqual({ cacheBackend: "indexeddb" });
    expect(cacheConfig(compat, "opfs")).toEqual({ cacheBackend: "opfs" });
  });

  it("0.2.79: useIndexedDBCache, ndarray-cache.json, no KV reset after abort", () => {
    const compat = detectWebLlmCompat(webllm079);
    expect(compat).toMatchObject({ modelVersion: "v0_2_48", version: "≤0.2.79", cacheOption: "useIndexedDBCache", tensorCacheFile: "ndarray-cache.json", resetsKvAfterAbort: false, completionTokensMissFirst: true, structuralTags: false });
    expect(cacheConfig(compat, "indexeddb")).toEqual({ useIndexedDBCache: true });
    expect(cacheConfig(compat, "cache")).toEqual({ useIndexedDBCache: false });
    expect(() => cacheConfig(compat, "opfs")).toThrow(/OPFS/);
  });

  it("a module without the markers: cacheBackend, but the old manifest name and no KV reset", () => {
    expect(detectWebLlmCompat({})).toEqual({ modelVersion: null, version: null, cacheOption: "cacheBackend", tensorCacheFile: "ndarray-cache.json", resetsKvAfterAbort: false, completionTokensMissFirst: false, structuralTags: true });
  });
});
