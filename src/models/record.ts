/**
 * A model record: what every engine's record has (`model`, `model_id`, the
 * inputs, the family), web-llm's MLC fields (so a web-llm record can be handed
 * to web-llm's `appConfig` as it is; optional, since another engine's record
 * has none of them), plus what this library adds. `engine` picks the engine
 * that serves it (engine/registry.ts; absent: web-llm).
 */
export interface ModelRecord {
  /** Where the weights are: the base URL of an MLC model folder for web-llm (it appends `resolve/main/` unless present), or what another engine reads (a GGUF file's URL, say). */
  model: string;
  model_id: string;
  /** web-llm: URL of the compiled WebGPU model library (.wasm). Other engines need none. */
  model_lib?: string;
  vram_required_MB?: number;
  low_resource_required?: boolean;
  required_features?: string[];
  buffer_size_required_bytes?: number;
  overrides?: { context_window_size?: number; [key: string]: unknown };
  model_type?: number;
  /** web-llm 0.2.86: the model package manifest (`mlc-model-manifest.json`) that drives its generic image/audio adapters. */
  model_manifest?: string;
  /**
   * What the model takes besides text (`"image"`, `"audio"`; text is always
   * taken). Prebuilt records get it from the catalog; the package manifest,
   * once cached, overrides it (models/inputs.ts).
   */
  input_modalities?: Array<"text" | "image" | "audio">;
  /** For records that take audio without a cached manifest (scripted, custom): the `audio_decode` limits to check against. */
  audio_input?: { sample_rate_hz: number; min_samples?: number; max_samples: number };
  /** Family name from families/registry.ts; inferred from the id when absent. */
  family?: string;
  /** Optional SRI hashes (`sha256-…`) per file name, weights included. */
  integrity?: Record<string, string>;
  /**
   * `true`: every file of the model needs a hash in `integrity` (config,
   * tensor index, each shard, tokenizer, library); a file without one is not
   * downloaded (400 `integrity_missing`). Default: files without a hash are
   * checked only against the tensor index's sizes and md5 sums.
   */
  require_integrity?: boolean;
  /**
   * The engine that serves this record, by `kind` (engine/registry.ts), with
   * that engine's own settings; absent: web-llm. `{ kind: "scripted", replies }`
   * serves it with the scripted engine: nothing is downloaded and no GPU is
   * needed (for an app's UI tests and demos). Plain JSON, so a catalog loaded
   * from a URL can carry it.
   */
  engine?: RecordEngineSpec;
  /**
   * With `createClient({ engine: "auto" })`: the model_id of a catalog record
   * that needs no GPU (a GGUF) to run instead where WebGPU is missing or this
   * record does not fit the adapter (host/engine-choice.ts).
   */
  fallback?: string;
  /**
   * On a record that needs no GPU (a GGUF): the alias (the model id without
   * its quantization, e.g. `Qwen3-0.6B`) of the catalog records it stands in
   * for. Those that name no `fallback` of their own get this record's id.
   */
  fallback_for?: string;
  /** Embedding records (model_type 1): the vector size, when the id does not tell (arctic-embed-s 384, -m 768). */
  embedding_dimensions?: number;
  /** Embedding records: inputs per pass of the compiled library, when neither `batchN` in model_lib nor `-bN` in the id tells. */
  embedding_batch_size?: number;
  [key: string]: unknown;
}

/** A record's engine: the registered kind that serves it, and that engine's own settings (read only by it). */
export interface RecordEngineSpec {
  kind: string;
  [setting: string]: unknown;
}

/** A record's scripted engine: raw model outputs replayed in order, starting over after the last. */
export interface ScriptedRecordEngine extends RecordEngineSpec {
  kind: "scripted";
  replies: string[];
  /** Delay between tokens (ms). */
  tokenDelayMs?: number;
  /** Simulated load time (ms), reported as progress. */
  loadDelayMs?: number;
  /** Embedding records (model_type 1): simulated time per batch (ms). They need no replies. */
  embedDelayMs?: number;
}

/**
 * A GGUF model on llama.cpp (`@wllama/wllama`, engine/wllama/): the record's
 * `model` is the URL of its .gguf file; `model_lib` is unused (write "").
 */
export interface WllamaRecordEngine extends RecordEngineSpec {
  kind: "wllama";
  /**
   * URL of wllama's `wllama.wasm` (`@wllama/wllama/esm/wasm/wllama.wasm`, served by the app).
   * Default: that file of the wllama version this package depends on, on jsDelivr (engine/wllama/wllama-catalog.ts).
   */
  wasm?: string;
  /**
   * llama.cpp's thread count where the page is cross-origin isolated (capped at
   * `navigator.hardwareConcurrency`; not isolated, always 1). Default: half the
   * logical cores, at most 8 (engine/wllama/wllama-threads.ts says why).
   */
  threads?: number;
  /**
   * What is known of the file without reading it, for `models.list()`: a
   * record that declares it is listed with it (or, once stored, with what the
   * stored file says) and no header is fetched. Catalog records declare it, so
   * listing the catalog costs no request to the model's host.
   */
  listing?: { quantization: string; size_bytes?: number };
}

/** web-llm's `ModelType.VLM`. */
export const MODEL_TYPE_VLM = 2;
/** web-llm's `ModelType.embedding`. */
export const MODEL_TYPE_EMBEDDING = 1;

export const DEFAULT_CONTEXT_WINDOW = 4096;

export function contextWindowOf(record: ModelRecord): number {
  return record.overrides?.context_window_size ?? DEFAULT_CONTEXT_WINDOW;
}

/** `q4f16_1` from `Qwen3-0.6B-q4f16_1-MLC`, or null for ids without one. */
export function quantizationOf(modelId: string): string | null {
  return /-(q\d+f(?:16|32)(?:_\d+)?)/.exec(modelId)?.[1] ?? null;
}

export function needsShaderF16(record: ModelRecord): boolean {
  return (record.required_features ?? []).includes("shader-f16") || /f16/.test(quantizationOf(record.model_id) ?? "");
}
