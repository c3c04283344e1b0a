/**
 * The catalog's default GGUF (issue 37): the wllama kind brings Qwen3 0.6B's
 * GGUF, and web-llm's Qwen3-0.6B records fall back to it under
 * `engine: "auto"` where WebGPU cannot run them.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { createCatalog } from "../../src/models/catalog.js";
import { chooseEngine } from "../../src/host/engine-choice.js";
import { engineKindOf, kindCatalogs } from "../../src/engine/registry.js";
import { DEFAULT_GGUF_ID, DEFAULT_GGUF_PIN, WLLAMA_VERSION, WLLAMA_WASM_URL, wllamaCatalog } from "../../src/engine/wllama/wllama-catalog.js";
import { checkRecordUrls } from "../../src/cache/url-policy.js";
import { ggufPlan } from "../../src/cache/gguf-artifacts.js";
import type { ModelRecord } from "../../src/models/record.js";

const mlc = (id: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({ model: `https://huggingface.co/mlc-ai/${id}`, model_id: id, model_lib: "https://example.com/lib.wasm", ...extra });
const noGpu = { available: false as const, reason: "no navigator.gpu" };

describe("the default GGUF", () => {
  it("is a Qwen3 0.6B GGUF on Hugging Face, run by wllama with our Qwen3 prompt, its wasm the installed wllama version's", () => {
    const [record] = wllamaCatalog();
    expect(record).toMatchObject({ model_id: DEFAULT_GGUF_ID, family: "qwen3", engine: { kind: "wllama", wasm: WLLAMA_WASM_URL }, fallback_for: "Qwen3-0.6B" });
    expect(record.model).toMatch(/^https:\/\/huggingface\.co\/Qwen\/Qwen3-0\.6B-GGUF\/resolve\/[^/]+\/[^/]+\.gguf$/);
    const installed = JSON.parse(readFileSync(new URL("../../node_modules/@wllama/wllama/package.json", import.meta.url), "utf8")) as { version: string };
    const declared = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { dependencies: Record<string, string> }).dependencies["@wllama/wllama"];
    expect(WLLAMA_VERSION).toBe(installed.version);
    expect(WLLAMA_VERSION).toBe(declared);
    expect(() => checkRecordUrls(record)).not.toThrow();
  });

  it("is pinned: a commit of the hub repository, not main, and the file's SHA-256 as the download's integrity", () => {
    const [record] = wllamaCatalog();
    expect(record.model).toBe(`https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/${DEFAULT_GGUF_PIN.revision}/Qwen3-0.6B-Q8_0.gguf`);
    expect(DEFAULT_GGUF_PIN.revision).toMatch(/^[0-9a-f]{40}$/);
    // The SRI the download checks is the pinned hex digest, and it is the plan's (the file the downloader fetches).
    const sri = record.integrity?.[DEFAULT_GGUF_PIN.file];
    expect(sri).toBe(`sha256-${Buffer.from(DEFAULT_GGUF_PIN.sha256Hex, "hex").toString("base64")}`);
    expect(ggufPlan(record).artifacts).toEqual([expect.objectContaining({ name: DEFAULT_GGUF_PIN.file, sri })]);
  });

  it("is in every catalog (the registered kinds' records)", async () => {
    const ids = (await kindCatalogs()).map((r) => r.model_id);
    expect(ids).toContain(DEFAULT_GGUF_ID);
  });

  it("web-llm's Qwen3-0.6B variants fall back to it; other models, and records naming their own fallback, do not change", () => {
    const own = { ...wllamaCatalog()[0], model_id: "my-gguf", fallback_for: undefined };
    const catalog = createCatalog([mlc("Qwen3-0.6B-q4f16_1-MLC"), mlc("Qwen3-0.6B-q4f32_1-MLC"), mlc("Qwen3-1.7B-q4f32_1-MLC"), mlc("qwen3-0.6b-q0f32-MLC", { fallback: "my-gguf" }), own, ...wllamaCatalog()]);
    expect(catalog.find("Qwen3-0.6B-q4f16_1-MLC")?.fallback).toBe(DEFAULT_GGUF_ID);
    expect(catalog.find("Qwen3-0.6B-q4f32_1-MLC")?.fallback).toBe(DEFAULT_GGUF_ID);
    expect(catalog.records.find((r) => r.model_id === "Qwen3-0.6B-q4f32_1-MLC")?.fallback).toBe(DEFAULT_GGUF_ID);
    expect(catalog.find("Qwen3-1.7B-q4f32_1-MLC")?.fallback).toBeUndefined();
    expect(catalog.find("qwen3-0.6b-q0f32-MLC")?.fallback).toBe("my-gguf");
    expect(catalog.find(DEFAULT_GGUF_ID)?.fallback).toBeUndefined();
    // The alias still picks a web-llm variant, never the GGUF.
    expect(catalog.resolve("Qwen3-0.6B", new Set()).model_id).toBe("Qwen3-0.6B-q4f32_1-MLC");
  });

  it('engine: "auto" without WebGPU runs Qwen3-0.6B on it', () => {
    const catalog = createCatalog([mlc("Qwen3-0.6B-q4f32_1-MLC"), ...wllamaCatalog()]);
    const choice = chooseEngine(catalog.resolve("Qwen3-0.6B", new Set()), { auto: true, gpu: noGpu, catalog, kindOf: (r) => engineKindOf(r) });
    expect(choice).toMatchObject({ engine: "wllama", record: { model_id: DEFAULT_GGUF_ID } });
  });

  afterEach(() => vi.unstubAllGlobals());

  it("models.list() lists it as Q8_0, with its pinned size, without a request to the hub (its header is several MB of vocabulary)", async () => {
    const requested: string[] = [];
    const realFetch = globalThis.fetch;
    vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) => {
      requested.push(String(input instanceof Request ? input.url : input));
      return realFetch(input, init);
    });
    const client = createClient({ engine: createScriptedEngine({ replies: [] }), worker: false });
    const listed = (await client.models.list()).data.find((m) => m.id === DEFAULT_GGUF_ID);
    expect(listed).toMatchObject({ quantization: "Q8_0", size_bytes: DEFAULT_GGUF_PIN.bytes });
    expect(requested.filter((url) => url.includes("huggingface.co"))).toEqual([]);
  });
});
