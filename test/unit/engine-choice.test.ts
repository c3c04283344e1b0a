/**
 * `createClient({ engine: "auto" })`'s rule (host/engine-choice.ts): web-llm
 * where the adapter serves the record, else the record's `fallback`.
 */
import { describe, expect, it } from "vitest";
import { chooseEngine, engineMode } from "../../src/host/engine-choice.js";
import { createCatalog } from "../../src/models/catalog.js";
import { engineKindOf } from "../../src/engine/registry.js";
import type { GpuProbe } from "../../src/gpu/probe.js";
import type { ModelRecord } from "../../src/models/record.js";

const gguf: ModelRecord = { model: "https://example.com/m/qwen3-0.6b-q4_k_m.gguf", model_id: "qwen3-0.6b-gguf", model_lib: "", engine: { kind: "wllama", wasm: "/w.wasm" } };
const f16: ModelRecord = { model: "https://example.com/Qwen3-0.6B-q4f16_1-MLC", model_id: "Qwen3-0.6B-q4f16_1-MLC", model_lib: "https://example.com/lib.wasm", fallback: gguf.model_id };
const catalog = createCatalog([f16, gguf]);
const adapter = (features: string[]): GpuProbe => ({
  available: true,
  info: { vendor: "v", architecture: "a", device: "d", description: "", features, limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 1024 }, isFallbackAdapter: false },
});
const none: GpuProbe = { available: false, reason: "no navigator.gpu" };
const choose = (record: ModelRecord, gpu: GpuProbe, auto = true, records = catalog) => chooseEngine(record, { auto, gpu, catalog: records, kindOf: (r) => engineKindOf(r) });

describe('engine: "auto"', () => {
  it("a WebGPU adapter the record fits: web-llm", () => {
    expect(choose(f16, adapter(["shader-f16"]))).toMatchObject({ record: f16, engine: "webllm", reason: "a WebGPU adapter is present and the model fits it" });
  });

  it("no adapter: the fallback on wllama, saying why", () => {
    const choice = choose(f16, none);
    expect(choice).toMatchObject({ requested: f16, record: gguf, engine: "wllama" });
    expect(choice.reason).toMatch(/^no WebGPU adapter: no navigator.gpu; its fallback qwen3-0.6b-gguf runs on wllama/);
  });

  it("an adapter the record does not fit (no shader-f16 for a q4f16 model): the fallback", () => {
    const choice = choose(f16, adapter([]));
    expect(choice).toMatchObject({ record: gguf, engine: "wllama" });
    expect(choice.reason).toMatch(/cannot run it: .*shader-f16/);
  });

  it("without auto, or without a fallback, the record itself (its request gets the GPU's 503)", () => {
    expect(choose(f16, none, false)).toMatchObject({ record: f16, engine: "webllm" });
    const lone = { ...f16, fallback: undefined };
    expect(choose(lone, none)).toMatchObject({ record: lone, engine: "webllm", reason: expect.stringMatching(/names no fallback/) });
  });

  it("a GGUF record runs on wllama with or without an adapter", () => {
    expect(choose(gguf, none)).toMatchObject({ record: gguf, engine: "wllama" });
    expect(choose(gguf, adapter(["shader-f16"]))).toMatchObject({ record: gguf, engine: "wllama" });
  });

  it("a fallback missing from the catalog, or one that needs a GPU too, is a catalog error naming it", () => {
    expect(() => choose({ ...f16, fallback: "nope" }, none)).toThrow(expect.objectContaining({ status: 500, code: "invalid_model_record", message: expect.stringContaining('"nope"') }));
    const other: ModelRecord = { ...f16, model_id: "Other-q4f32_1-MLC", fallback: undefined };
    expect(() => choose({ ...f16, fallback: other.model_id }, none, true, createCatalog([f16, other]))).toThrow(/needs a GPU too/);
  });

  it("gpu.info().engine: what runs the GPU's records here", () => {
    expect(engineMode(true, none)).toMatchObject({ auto: true, gpu_records: "fallback" });
    expect(engineMode(false, none)).toMatchObject({ auto: false, gpu_records: "webllm" });
    expect(engineMode(true, adapter([]))).toMatchObject({ gpu_records: "webllm" });
  });
});
