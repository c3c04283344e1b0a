/**
 * Which model takes what: a model's input kinds (text, image, audio) and, for
 * audio, the limits of its `audio_decode` processor.
 *
 * Sources, strongest first:
 * 1. the model package manifest (`mlc-model-manifest.json`, web-llm 0.2.86's
 *    generic adapter path) once it is cached: its `chat.completions` task
 *    declares an `audio_decode` processor (mono PCM at `sample_rate_hz`,
 *    `min_samples`..`max_samples` once resampled) and/or an `image_decode`
 *    processor;
 * 2. the record's own `input_modalities` (and `audio_input`): app and
 *    scripted records say what they take, and the catalog fills them in for
 *    prebuilt records whose package is known to declare more than text
 *    (Gemma 4);
 * 3. web-llm's model type: a VLM record (Phi-3.5-vision) takes images through
 *    web-llm's legacy (non-manifest) path; everything else takes text.
 *
 * A record with a manifest that is not cached yet and that says nothing
 * itself is taken at its word only for text, until the manifest is read.
 */
import { MODEL_TYPE_VLM, type ModelRecord } from "./record.js";

export type InputKind = "text" | "image" | "audio";

/** An `audio_decode` processor's limits, as web-llm checks them (`checkSampleRange` on the resampled length). */
export interface AudioInputSpec {
  sample_rate_hz: number;
  /** Fewest samples once resampled to `sample_rate_hz` (web-llm's default: 1). */
  min_samples: number;
  max_samples: number;
}

export interface ModelInputs {
  kinds: InputKind[];
  /** Known when the manifest is cached or the record states it; null otherwise (web-llm still checks at prefill). */
  audio: AudioInputSpec | null;
  /** Where `kinds` came from, for messages. */
  source: "manifest" | "record" | "model_type" | "default";
}

/** web-llm's `ModelRecord.model_manifest`: only records with one use the generic image/audio adapters. */
export function hasPackageManifest(record: ModelRecord): boolean {
  return typeof record.model_manifest === "string";
}

/**
 * The input kinds and audio limits a parsed `mlc-model-manifest.json`
 * declares for its `chat.completions` task, or null when it declares no such
 * task (web-llm then refuses the model at load). Lenient on purpose: web-llm
 * validates the manifest strictly when it loads.
 */
export function manifestInputs(manifest: unknown): Pick<ModelInputs, "kinds" | "audio"> | null {
  const task = (manifest as { tasks?: Record<string, { inputs?: Record<string, { processor?: unknown }> }> } | null)?.tasks?.["chat.completions"];
  if (!task || typeof task.inputs !== "object" || task.inputs === null) return null;
  const kinds = new Set<InputKind>(["text"]);
  let audio: AudioInputSpec | null = null;
  for (const input of Object.values(task.inputs)) {
    const processor = input?.processor as { kind?: unknown; sample_rate_hz?: unknown; min_samples?: unknown; max_samples?: unknown } | string | undefined;
    if (typeof processor !== "object" || processor === null) continue;
    if (processor.kind === "image_decode") kinds.add("image");
    if (processor.kind === "audio_decode") {
      kinds.add("audio");
      const rate = Number(processor.sample_rate_hz);
      const max = Number(processor.max_samples);
      const min = processor.min_samples === undefined ? 1 : Number(processor.min_samples);
      if (Number.isSafeInteger(rate) && rate > 0 && Number.isSafeInteger(max) && Number.isSafeInteger(min)) audio = { sample_rate_hz: rate, min_samples: min, max_samples: max };
    }
  }
  return { kinds: orderKinds(kinds), audio };
}

/** What `record` takes, given its cached manifest (parsed JSON) when there is one. */
export function modelInputs(record: ModelRecord, manifest?: unknown): ModelInputs {
  const fromManifest = manifest === undefined || manifest === null ? null : manifestInputs(manifest);
  if (fromManifest) return { ...fromManifest, source: "manifest" };
  const declared = record.input_modalities;
  if (Array.isArray(declared)) {
    const kinds = new Set<InputKind>(["text"]);
    for (const kind of declared) if (kind === "image" || kind === "audio") kinds.add(kind);
    const audio = kinds.has("audio") ? audioSpecOf(record.audio_input) : null;
    return { kinds: orderKinds(kinds), audio, source: "record" };
  }
  if (record.model_type === MODEL_TYPE_VLM) return { kinds: ["text", "image"], audio: null, source: "model_type" };
  return { kinds: ["text"], audio: null, source: "default" };
}

function audioSpecOf(value: unknown): AudioInputSpec | null {
  const spec = value as Partial<AudioInputSpec> | undefined;
  if (!spec || !Number.isSafeInteger(spec.sample_rate_hz) || !Number.isSafeInteger(spec.max_samples)) return null;
  return { sample_rate_hz: spec.sample_rate_hz!, min_samples: Number.isSafeInteger(spec.min_samples) ? spec.min_samples! : 1, max_samples: spec.max_samples! };
}

function orderKinds(kinds: Set<InputKind>): InputKind[] {
  return (["text", "image", "audio"] as const).filter((k) => kinds.has(k));
}

/**
 * Prebuilt records whose package manifest declares image and audio inputs,
 * before that manifest is downloaded: web-llm 0.2.86 ships Gemma 4 E2B
 * (`gemma-4-E2B-it-q4f16_1-MLC`, `-q4f32_1-MLC`) with `model_manifest`, and
 * its package declares `image_decode` and `audio_decode` processors. Their
 * audio limits are not known until the manifest is read (no value is guessed
 * here): the host then checks them, and web-llm checks them again.
 */
const MULTIMODAL_PACKAGES = /^gemma-4-/i;

/** The catalog's view of a prebuilt record: what it takes, when its package is known to declare more than text. */
export function withKnownInputs(record: ModelRecord): ModelRecord {
  if (record.input_modalities !== undefined || !hasPackageManifest(record) || !MULTIMODAL_PACKAGES.test(record.model_id)) return record;
  return { ...record, input_modalities: ["text", "image", "audio"] };
}
