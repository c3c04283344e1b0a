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
