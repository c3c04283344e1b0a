/**
 * Which engine runs a model, and why: `createClient({ engine: "auto" })`.
 *
 * The rule (docs/models.md, "engine: auto"): a record that needs a GPU
 * (web-llm's) runs on it where WebGPU has an adapter and the record fits
 * it (gpu/fit.ts, the same check a request gets). Otherwise, where the record
 * names a `fallback` (the model_id of a catalog record whose engine needs no
 * GPU, e.g. a GGUF), that record serves the request instead. A record that
 * needs no GPU (a GGUF, a scripted one) always runs on its own engine.
 * Without "auto", or without a fallback, the record named runs where it
 * is (and a request gets the 503 the GPU check gives).
 *
 * How wllama runs is told here too: multi-threaded only where the context is
 * cross-origin isolated (SharedArrayBuffer), single-threaded otherwise; once a
 * GGUF is loaded, as wllama itself reports it (engine/wllama/wllama-threads.ts).
 */
import { ApiError } from "../protocol/api-error.js";
import type { Engine, EngineKind } from "../engine/types.js";
import { wllamaThreadReport, type WllamaThreadReport } from "../engine/wllama/wllama-threads.js";
import { checkDeviceFit } from "../gpu/fit.js";
import type { GpuProbe } from "../gpu/probe.js";
import type { Catalog } from "../models/catalog.js";
import type { ModelRecord } from "../models/record.js";

/** `engine` as `createClient` takes it: this value asks for the choice above. */
export const AUTO_ENGINE = "auto";

export interface EngineChoice {
  /** The record the request named. */
  requested: ModelRecord;
  /** The record that runs (the one asked for, or its fallback). */
  record: ModelRecord;
  /** Its engine kind ("webllm", "wllama", …). */
  engine: string;
  reason: string;
}

/**
 * How wllama runs here (gpu.info().wllama, models.status(id).engine): what a
 * loaded wllama says of its threads (`source: "wllama"`, with its `model`),
 * else what a load here will ask for (`source: "planned"`).
 */
export type WllamaThreads = WllamaThreadReport & { cross_origin_isolated: boolean; model?: string };

/** `engines`: those started so far; `modelId`: only that model's engine counts as loaded; `asked`: its record's `engine.threads`. */
export function wllamaThreads(engines: readonly Engine[] = [], modelId?: string, asked?: number): WllamaThreads {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  for (const engine of engines) {
    const loaded = engine.cpuThreads?.() ?? null;
    const model = engine.loadedModel ?? engine.loadedEmbeddingModel ?? undefined;
    if (loaded && model !== undefined && (modelId === undefined || model === modelId)) return { ...wllamaThreadReport(loaded), cross_origin_isolated: isolated, model };
  }
  return { ...wllamaThreadReport(null, asked), cross_origin_isolated: isolated };
}

/** Why the GPU cannot serve `record` (null: it can). */
function gpuRefusal(record: ModelRecord, gpu: GpuProbe): string | null {
  if (!gpu.available) return `no WebGPU adapter: ${gpu.reason}`;
  try {
    checkDeviceFit(record, gpu, undefined);
    return null;
  } catch (error) {
    return `the WebGPU adapter cannot run it: ${ApiError.from(error).message}`;
  }
}

export function chooseEngine(
  requested: ModelRecord,
  context: { auto: boolean; gpu: GpuProbe; catalog: Catalog; kindOf: (record: ModelRecord) => EngineKind },
): EngineChoice {
  const kind = context.kindOf(requested);
  const own = (reason: string): EngineChoice => ({ requested, record: requested, engine: kind.kind, reason });
  if (!kind.capabilities.gpu) return own(`${requested.model_id} is a ${kind.kind} record, which needs no GPU`);
  const refusal = gpuRefusal(requested, context.gpu);
  if (refusal === null) return own("a WebGPU adapter is present and the model fits it");
  if (!context.auto) return own(`${refusal} (engine: "auto" with a fallback record would run another engine)`);
  const name = requested.fallback;
  if (typeof name !== "string") return own(`${refusal}; the record names no fallback`);
  const fallback = context.catalog.find(name);
  if (!fallback) {
    throw new ApiError({ status: 500, code: "invalid_model_record", param: "model", message: `${requested.model_id} names the fallback ${JSON.stringify(name)}, which is not in the catalog: add that record (e.g. a GGUF with engine: { kind: "wllama" }) to createClient({ models }).` });
  }
  const fallbackKind = context.kindOf(fallback);
  if (fallbackKind.capabilities.gpu) {
    throw new ApiError({ status: 500, code: "invalid_model_record", param: "model", message: `${requested.model_id} names the fallback ${fallback.model_id}, whose engine (${fallbackKind.kind}) needs a GPU too: a fallback must run without one (a GGUF record).` });
  }
  return { requested, record: fallback, engine: fallbackKind.kind, reason: `${refusal}; its fallback ${fallback.model_id} runs on ${fallbackKind.kind}` };
}

/** `gpu.info().engine`: what runs the records that need a GPU here (per model: models.status(id).engine). */
export interface EngineMode {
  auto: boolean;
  /** "webllm" where WebGPU has an adapter; "fallback" under "auto" without one (records with a `fallback` run it). */
  gpu_records: "webllm" | "fallback";
  reason: string;
}

export function engineMode(auto: boolean, gpu: GpuProbe): EngineMode {
  if (gpu.available) return { auto, gpu_records: "webllm", reason: "a WebGPU adapter is present" };
  if (!auto) return { auto, gpu_records: "webllm", reason: `no WebGPU adapter (${gpu.reason}); web-llm models cannot run here, GGUF models can` };
  return { auto, gpu_records: "fallback", reason: `no WebGPU adapter (${gpu.reason}); records with a fallback run it on its engine` };
}
