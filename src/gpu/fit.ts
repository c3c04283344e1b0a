/**
 * Whether this adapter can serve a model, checked before anything is
 * downloaded. Every refusal is a 503 that says what is missing and what to do.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ProviderPreferences } from "../protocol/types.js";
import { needsShaderF16, type ModelRecord } from "../models/record.js";
import type { GpuProbe } from "./probe.js";

export function checkDeviceFit(record: ModelRecord, gpu: GpuProbe, provider: ProviderPreferences | undefined): void {
  if (!gpu.available) throw new ApiError({ status: 503, code: "webgpu_unavailable", message: gpu.reason });
  const { info } = gpu;
  const features = new Set(info.features);
  if (needsShaderF16(record) && !features.has("shader-f16")) {
    throw new ApiError({
      status: 503,
      code: "unsupported_device",
      param: "model",
      message: `${record.model_id} needs the WebGPU feature shader-f16, which this adapter (${info.vendor} ${info.architecture}) lacks. Use its q4f32_1 variant, or name the model without a quantization suffix to get the right one.`,
    });
  }
  const missing = (provider?.require_features ?? []).filter((feature) => !features.has(feature));
  if (missing.length > 0) {
    throw new ApiError({ status: 503, code: "provider_requirements_unmet", param: "provider.require_features", message: `This adapter lacks the required WebGPU features: ${missing.join(", ")}.` });
  }
  const bufferMb = info.limits.maxBufferSize / (1024 * 1024);
  const minMemoryMb = provider?.min_memory_mb;
  if (minMemoryMb !== undefined && bufferMb < minMemoryMb) {
    throw new ApiError({ status: 503, code: "provider_requirements_unmet", param: "provider.min_memory_mb", message: `This adapter's largest buffer is ${Math.round(bufferMb)} MB, below provider.min_memory_mb ${minMemoryMb}.` });
  }
  if (record.buffer_size_required_bytes && info.limits.maxStorageBufferBindingSize < record.buffer_size_required_bytes) {
    throw new ApiError({
      status: 503,
      code: "model_does_not_fit",
      param: "model",
      message: `${record.model_id} needs storage buffers of ${record.buffer_size_required_bytes} bytes; this adapter allows ${info.limits.maxStorageBufferBindingSize}. Pick a smaller model.`,
    });
  }
}

/** What the browser says about the device's memory: `navigator.deviceMemory` (GB; Chrome rounds it down and caps it at 8). */
export function deviceMemoryGb(): number | undefined {
  const value = (globalThis as { navigator?: { deviceMemory?: unknown } }).navigator?.deviceMemory;
  return typeof value === "number" && value > 0 ? value : undefined;
}

/**
 * Whether models stay resident together (a chat model and an embedding model),
 * counting every record's `vram_required_MB` against the device's memory as
 * far as the browser tells it: WebGPU reports no memory size, so the only
 * figure is `navigator.deviceMemory`, and Chrome's cap at 8 means "8 GB or
 * more", where no limit is inferred. Most WebGPU devices (laptops, phones)
 * share system memory with the GPU; a quarter is left for the page and the
 * browser. Unknown → they fit.
 */
export function fitsTogether(records: readonly ModelRecord[], memoryGb: number | undefined): { fits: boolean; needMb: number; budgetMb: number | null } {
  const needMb = Math.round(records.reduce((sum, r) => sum + (r.vram_required_MB ?? 0), 0));
  if (memoryGb === undefined || memoryGb >= 8) return { fits: true, needMb, budgetMb: null };
  const budgetMb = Math.round(memoryGb * 1024 * 0.75);
  return { fits: needMb <= budgetMb, needMb, budgetMb };
}
