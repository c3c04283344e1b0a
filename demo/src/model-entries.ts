/**
 * The picker's rows: `client.models.list()` grouped by family, one row per
 * model (its quantized variants folded together), with the variant this
 * adapter gets and whether it fits.
 */
import type { GpuProbe, ModelObject } from "../../src/index.js";

export interface ModelEntry {
  /** What the demo sends as `model`: the alias, so the library picks the variant. */
  alias: string;
  family: string;
  /** The variant the library chooses for this adapter. */
  variant: ModelObject;
  variants: ModelObject[];
  fit: { ok: boolean; reason: string };
}

/** `Qwen3-0.6B` from `Qwen3-0.6B-q4f16_1-MLC`: the same rule as the library's aliases. */
export function aliasOf(id: string): string {
  return id.replace(/-q\d+f(?:16|32)(?:_\d+)?/, "").replace(/-MLC$/, "");
}

/**
 * The library's variant rule (models/catalog.ts): q4f16_1 when the adapter has
 * `shader-f16`, else q4f32_1, never an f16 variant without the feature.
 */
function chooseVariant(variants: ModelObject[], hasF16: boolean): ModelObject {
  const order = hasF16 ? ["q4f16_1", "q4f32_1", "q0f16", "q0f32"] : ["q4f32_1", "q0f32", "q4f16_1", "q0f16"];
  const usable = hasF16 ? variants : variants.filter((v) => !/f16/.test(v.quantization ?? ""));
  const rank = (v: ModelObject) => {
    const i = order.indexOf(v.quantization ?? "");
    return i < 0 ? order.length : i;
  };
  return [...(usable.length > 0 ? usable : variants)].sort((a, b) => rank(a) - rank(b))[0];
}

/**
 * Whether a model fits, from what the browser tells a page: `shader-f16` for
 * f16 variants, and the model's memory need against the device's memory
 * (`navigator.deviceMemory`, rounded and capped at 8 GB by Chrome, so a
 * large model on a big GPU shows "may not fit" rather than a false "no").
 */
function fitOf(variant: ModelObject, gpu: GpuProbe): ModelEntry["fit"] {
  if (variant.vram_required_mb === 0) return { ok: true, reason: "no GPU memory needed" };
  if (!gpu.available) return { ok: false, reason: "no WebGPU adapter" };
  if (/f16/.test(variant.quantization ?? "") && !gpu.info.features.includes("shader-f16")) return { ok: false, reason: "needs shader-f16" };
  const needMb = variant.vram_required_mb;
  if (needMb === null) return { ok: true, reason: "memory need unknown" };
  const deviceGb = (navigator as { deviceMemory?: number }).deviceMemory;
  if (deviceGb === undefined) return { ok: true, reason: `needs ${needMb} MB` };
  const ok = needMb <= deviceGb * 1024 * 0.75 || deviceGb >= 8;
  return { ok, reason: `needs ${needMb} MB of ~${deviceGb} GB` + (ok ? "" : " (may not fit)") };
}

export function modelEntries(models: ModelObject[], gpu: GpuProbe): Map<string, ModelEntry[]> {
  const hasF16 = gpu.available && gpu.info.features.includes("shader-f16");
  const byAlias = new Map<string, ModelObject[]>();
  for (const model of models) {
    const alias = aliasOf(model.id);
    byAlias.set(alias, [...(byAlias.get(alias) ?? []), model]);
  }
  const byFamily = new Map<string, ModelEntry[]>();
  for (const [alias, variants] of byAlias) {
    const variant = chooseVariant(variants, hasF16);
    const entry: ModelEntry = { alias, family: variant.family, variant, variants, fit: fitOf(variant, gpu) };
    byFamily.set(entry.family, [...(byFamily.get(entry.family) ?? []), entry]);
  }
  for (const entries of byFamily.values()) entries.sort((a, b) => (a.variant.vram_required_mb ?? 0) - (b.variant.vram_required_mb ?? 0));
  return new Map([...byFamily].sort(([a], [b]) => a.localeCompare(b)));
}
