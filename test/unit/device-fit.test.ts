/** The adapter checks that refuse a model before any download, each a 503 saying what is missing. */
import { describe, expect, it } from "vitest";
import { checkDeviceFit } from "../../src/gpu/fit.js";
import type { GpuProbe } from "../../src/gpu/probe.js";
import type { ModelRecord } from "../../src/models/record.js";

const record = (model_id: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({ model: "http://127.0.0.1/m/", model_id, model_lib: "http://127.0.0.1/m.wasm", ...extra });
const adapter = (features: string[], maxBufferSize = 2 ** 30, maxStorageBufferBindingSize = 2 ** 27): GpuProbe => ({
  available: true,
  info: { vendor: "v", architecture: "a", device: "", description: "", features, limits: { maxBufferSize, maxStorageBufferBindingSize, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false },
});
const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
};

describe("device fit", () => {
  it("no WebGPU → 503 webgpu_unavailable with the reason", () => {
    expect(refusal(() => checkDeviceFit(record("Qwen3-0.6B-q4f32_1-MLC"), { available: false, reason: "no navigator.gpu" }, undefined))).toMatchObject({ status: 503, code: "webgpu_unavailable", message: "no navigator.gpu" });
  });

  it("an f16 model on an adapter without shader-f16 → 503 unsupported_device; the f32 variant fits", () => {
    expect(refusal(() => checkDeviceFit(record("Qwen3-0.6B-q4f16_1-MLC"), adapter([]), undefined))).toMatchObject({ status: 503, code: "unsupported_device", param: "model" });
    expect(refusal(() => checkDeviceFit(record("Qwen3-0.6B-q4f32_1-MLC"), adapter([]), undefined))).toBeNull();
    expect(refusal(() => checkDeviceFit(record("Qwen3-0.6B-q4f16_1-MLC"), adapter(["shader-f16"]), undefined))).toBeNull();
  });

  it("provider requirements the adapter cannot meet → 503 naming the provider field", () => {
    expect(refusal(() => checkDeviceFit(record("a-q4f32_1-MLC"), adapter([]), { require_features: ["subgroups"] }))).toMatchObject({ status: 503, param: "provider.require_features" });
    expect(refusal(() => checkDeviceFit(record("a-q4f32_1-MLC"), adapter([], 2 ** 30), { min_memory_mb: 4096 }))).toMatchObject({ status: 503, param: "provider.min_memory_mb" });
  });

  it("a model whose buffers exceed the adapter's binding size → 503 model_does_not_fit", () => {
    expect(refusal(() => checkDeviceFit(record("a-q4f32_1-MLC", { buffer_size_required_bytes: 2 ** 28 }), adapter([], 2 ** 30, 2 ** 27), undefined))).toMatchObject({ status: 503, code: "model_does_not_fit" });
  });
});

describe("a chat model and an embedding model together", () => {
  it("counts both records' memory against navigator.deviceMemory (75%); 8 GB (Chrome's cap) or unknown sets no limit", async () => {
    const { fitsTogether } = await import("../../src/gpu/fit.js");
    const chat = record("Qwen3-0.6B-q4f32_1-MLC", { vram_required_MB: 1924.7 });
    const embed = record("snowflake-arctic-embed-s-q0f32-MLC-b32", { vram_required_MB: 1022.8 });
    expect(fitsTogether([chat, embed], 4)).toEqual({ fits: true, needMb: 2948, budgetMb: 3072 });
    expect(fitsTogether([chat, embed], 2)).toEqual({ fits: false, needMb: 2948, budgetMb: 1536 });
    expect(fitsTogether([chat], 2).fits).toBe(false);
    expect(fitsTogether([chat, embed], 8)).toMatchObject({ fits: true, budgetMb: null });
    expect(fitsTogether([chat, embed], undefined)).toMatchObject({ fits: true, budgetMb: null });
  });
});
