/**
 * What the WebGPU adapter offers, read once. Drives the f16/f32 variant choice
 * and the "does it fit" check before anything is downloaded.
 */
export interface GpuInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** e.g. `shader-f16`, `subgroups`. */
  features: string[];
  limits: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
  };
  isFallbackAdapter: boolean;
}

export type GpuProbe =
  | { available: true; info: GpuInfo }
  | { available: false; reason: string };

/** Never throws: a missing `navigator.gpu` or adapter is a reason, not an error. */
export async function probeGpu(): Promise<GpuProbe> {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) {
    return {
      available: false,
      reason:
        "WebGPU is not available here (no navigator.gpu). Use a recent Chrome or Edge over https or http://localhost, or enable WebGPU in your browser's flags.",
    };
  }
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  } catch (error) {
    return { available: false, reason: `WebGPU adapter request failed: ${String(error)}` };
  }
  if (!adapter) {
    return {
      available: false,
      reason: "WebGPU found no compatible GPU adapter. Check that hardware acceleration is on (chrome://gpu).",
    };
  }
  const info = adapter.info;
  return {
    available: true,
    info: {
      vendor: info?.vendor ?? "",
      architecture: info?.architecture ?? "",
      device: info?.device ?? "",
      description: info?.description ?? "",
      features: [...adapter.features].sort(),
      limits: {
        maxBufferSize: adapter.limits.maxBufferSize,
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
        maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
        maxComputeInvocationsPerWorkgroup: adapter.limits.maxComputeInvocationsPerWorkgroup,
      },
      isFallbackAdapter: Boolean((info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter),
    },
  };
}
