/**
 * A catalog record that takes images and audio and is served by the scripted
 * engine: apps test their voice and picture features against it with no GPU
 * and no download (what reached the engine is in the scripted engine's
 * `requests`, or on the record engine's replies). Its audio limits mirror the
 * shape of a model package's `audio_decode` processor.
 */
import type { ModelRecord } from "./record.js";
import type { AudioInputSpec } from "./inputs.js";

export interface ScriptedVoiceOptions {
  /** Default `scripted-voice-MLC`. */
  id?: string;
  /** Raw model outputs, replayed in order (default one short reply). */
  replies?: string[];
  /** Default 16 kHz, 0.1 s to 30 s. */
  audio?: AudioInputSpec;
  /** Family of the output format (default "gemma-4", Gemma 4's). */
  family?: string;
  tokenDelayMs?: number;
}

export const SCRIPTED_VOICE_AUDIO: AudioInputSpec = { sample_rate_hz: 16_000, min_samples: 1_600, max_samples: 480_000 };

export function scriptedVoiceModel(options: ScriptedVoiceOptions = {}): ModelRecord {
  const id = options.id ?? "scripted-voice-MLC";
  return {
    model: `https://models.invalid/${id}`,
    model_id: id,
    model_lib: "https://models.invalid/none.wasm",
    family: options.family ?? "gemma-4",
    engine: { kind: "scripted", replies: options.replies ?? ["I heard you."], ...(options.tokenDelayMs === undefined ? {} : { tokenDelayMs: options.tokenDelayMs }) },
    input_modalities: ["text", "image", "audio"],
    audio_input: { ...(options.audio ?? SCRIPTED_VOICE_AUDIO) },
  };
}
