/**
 * An `input_audio` content part as a request carries it (chat messages and
 * Responses input), checked and normalized: the shape is checked here, the
 * sound itself in the worker (host/audio-input.ts: WAV header, decoding, the
 * model's limits).
 *
 * Normalized forms (what `NormalizedMessage` parts hold):
 * - `{data: <raw base64, no data: prefix> | Uint8Array, format: "wav"|"mp3"|"webm"|"ogg"}`
 * - `{data: Float32Array, format: "pcm_f32", sample_rate}` (web-llm's form, for JS callers)
 */
import { ApiError, invalidParam } from "./api-error.js";
import { describe, isObject } from "./params.js";
import type { AudioFormat, InputAudioPart } from "./types.js";

export const AUDIO_FORMATS: readonly AudioFormat[] = ["wav", "mp3", "webm", "ogg"];
/** OpenAI's upload limit for audio; base64 of it is 4/3 larger. 413 above it. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** The highest sample rate web-llm accepts for `pcm_f32` (its MAX_SAMPLE_RATE). */
export const MAX_SAMPLE_RATE = 384_000;

/** Other names of the same containers (MIME subtypes, OpenAI's transcription names). */
const FORMAT_ALIASES: Record<string, AudioFormat> = { wave: "wav", "x-wav": "wav", mpeg: "mp3", mpga: "mp3", opus: "ogg", oga: "ogg" };

/** A normalized audio part's format from a name or MIME type (`audio/webm;codecs=opus` → webm), or undefined. */
export function audioFormatOf(name: string): AudioFormat | undefined {
  const key = name.trim().toLowerCase().replace(/^audio\//, "").replace(/;.*$/, "");
  if ((AUDIO_FORMATS as readonly string[]).includes(key)) return key as AudioFormat;
  return FORMAT_ALIASES[key];
}

const isFloat32Array = (v: unknown): v is Float32Array => Object.prototype.toString.call(v) === "[object Float32Array]";
const isUint8Array = (v: unknown): v is Uint8Array => Object.prototype.toString.call(v) === "[object Uint8Array]";
const isArrayBuffer = (v: unknown): v is ArrayBuffer => Object.prototype.toString.call(v) === "[object ArrayBuffer]";

/** `part` (already known to be `type: "input_audio"`) checked and normalized; `p` names it (`messages[1].content[0]`). */
export function normalizeAudioPart(part: Record<string, unknown>, p: string): InputAudioPart {
  const audio = part.input_audio;
  if (!isObject(audio)) throw invalidParam(`${p}.input_audio`, `\`${p}.input_audio\` must be {"data": <base64>, "format": "wav" | "mp3" | "webm" | "ogg"}, got ${describe(audio)}.`, "invalid_type");
  const format = audio.format;
  if (format === "pcm_f32") {
    const data = audio.data;
    if (!isFloat32Array(data)) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` must be a Float32Array of mono samples when format is "pcm_f32" (got ${describe(data)}).`, "invalid_type");
    if (data.length === 0) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` is empty${data.buffer.byteLength === 0 ? " (its buffer may have been transferred by an earlier request: send a copy, e.g. data.slice())" : ""}.`, "invalid_audio");
    const rate = audio.sample_rate;
    if (typeof rate !== "number" || !Number.isSafeInteger(rate) || rate <= 0 || rate > MAX_SAMPLE_RATE) {
      throw invalidParam(`${p}.input_audio.sample_rate`, `\`${p}.input_audio.sample_rate\` must be an integer number of Hz from 1 to ${MAX_SAMPLE_RATE} with format "pcm_f32" (got ${describe(rate)}).`, "invalid_audio");
    }
    if (data.byteLength > MAX_AUDIO_BYTES) throw tooLarge(p, data.byteLength);
    return { type: "input_audio", input_audio: { data, format: "pcm_f32", sample_rate: rate } };
  }
  const named = typeof format === "string" ? audioFormatOf(format) : undefined;
  if (!named) {
    throw invalidParam(`${p}.input_audio.format`, `\`${p}.input_audio.format\` must be "wav", "mp3", "webm" or "ogg" (Opus, as browsers record it), or "pcm_f32" with a Float32Array; got ${JSON.stringify(format)}.`, "unsupported_audio_format");
  }
  const data = audio.data;
  if (isUint8Array(data) || isArrayBuffer(data)) {
    const bytes = isUint8Array(data) ? data : new Uint8Array(data);
    if (bytes.byteLength === 0) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` is empty.`, "invalid_audio");
    if (bytes.byteLength > MAX_AUDIO_BYTES) throw tooLarge(p, bytes.byteLength);
    return { type: "input_audio", input_audio: { data: bytes, format: named } };
  }
  if (typeof data !== "string" || data === "") throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` must be the audio as a base64 string (got ${describe(data)}).`, "invalid_type");
  let base64 = data;
  if (/^https?:/i.test(data)) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` is a URL: audio is never fetched from the network here; send the file's bytes as base64.`, "invalid_audio");
  if (data.startsWith("data:")) {
    const match = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(data);
    if (!match) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` is a data URL but not a base64 one (data:audio/…;base64,…).`, "invalid_audio");
    base64 = data.slice(match[0].length);
  }
  base64 = base64.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 === 1) throw invalidParam(`${p}.input_audio.data`, `\`${p}.input_audio.data\` is not valid base64.`, "invalid_audio");
  if (base64.length * 0.75 > MAX_AUDIO_BYTES) throw tooLarge(p, Math.floor(base64.length * 0.75));
  return { type: "input_audio", input_audio: { data: base64, format: named } };
}

function tooLarge(p: string, bytes: number): ApiError {
  return new ApiError({ status: 413, param: `${p}.input_audio.data`, code: "audio_too_large", message: `Each audio input may be at most ${MAX_AUDIO_BYTES / 1024 / 1024} MB; \`${p}\` has ${(bytes / 1024 / 1024).toFixed(1)} MB.` });
}
