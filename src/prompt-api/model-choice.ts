/**
 * Which model backs `LanguageModel` when the app names none: the catalog's
 * best fit for this device. Chat models that take tools and every expected
 * input type, in the quantization this adapter runs (q4f16 with shader-f16,
 * else q4f32), with a context window of at least 4096 tokens, within the
 * memory budget; the largest of those (more parameters answer better), the
 * longer context breaking ties.
 */
import type { GpuProbe } from "../gpu/probe.js";
import type { ModelObject } from "../protocol/types.js";

/** MB of model we allow when the browser does not say how much memory the device has, or says 8 GB or more (its cap). */
export const DEFAULT_BUDGET_MB = 6000;

export function memoryBudgetMb(deviceMemoryGb: number | undefined): number {
  if (deviceMemoryGb === undefined || deviceMemoryGb >= 8) return DEFAULT_BUDGET_MB;
  // Most WebGPU devices share memory with the GPU: half is left to the page and the system.
  return Math.round(deviceMemoryGb * 1024 * 0.5);
}

export function chooseModel(models: readonly ModelObject[], gpu: GpuProbe, needs: ReadonlySet<string>, deviceMemoryGb: number | undefined): string | null {
  if (!gpu.available) return null;
  const quantization = gpu.info.features.includes("shader-f16") ? "q4f16_1" : "q4f32_1";
  const budget = memoryBudgetMb(deviceMemoryGb);
  const fits = models.filter(
    (m) =>
      m.type === "chat" &&
      m.capabilities.tools &&
      m.quantization === quantization &&
      m.context_window >= 4096 &&
      [...needs].every((kind) => (m.input_modalities as string[]).includes(kind)) &&
      m.vram_required_mb !== null &&
      m.vram_required_mb <= budget,
  );
  fits.sort((a, b) => (b.vram_required_mb ?? 0) - (a.vram_required_mb ?? 0) || b.context_window - a.context_window);
  return fits[0]?.id ?? null;
}
