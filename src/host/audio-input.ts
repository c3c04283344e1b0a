/**
 * Audio parts made ready for the engine, in the worker, before the request
 * queues: WAV stays as it is (web-llm decodes it) and is measured from its
 * header; mp3 and browser recordings (webm/ogg Opus) are decoded to mono PCM
 * (src/audio/) and sent as web-llm's `pcm_f32`; `pcm_f32` from JS callers
 * passes. Each is checked against the model's `audio_decode` limits when
 * they are known (models/inputs.ts). What cannot be read, or is too short or
 * too long, is a 400 naming the part with the limits.
 */
import { ApiError } from "../protocol/api-error.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { ContentPart, InputAudioPart } from "../protocol/types.js";
import type { EngineAudioPart } from "../engine/types.js";
import type { AudioInputSpec } from "../models/inputs.js";
import { AudioInputError } from "../audio/errors.js";
import { bytesToBase64 } from "../protocol/base64.js";
import { base64ToBytes } from "../audio/base64.js";
import { readWavInfo } from "../audio/wav.js";
import { audioLengthProblem } from "../audio/limits.js";
import { UNKNOWN_LIMIT_SECONDS, type AudioBudget } from "../audio/packets.js";

/** Whether any message carries audio (most requests do not: nothing to do). */
export function hasAudio(messages: readonly NormalizedMessage[]): boolean {
  return messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === "input_audio"));
}

/**
 * `messages` with every audio part prepared for the engine; messages without
 * audio are the same objects. Compressed audio is measured from its headers
 * against `spec` (the model's limits; a 10-minute bound while they are not
 * known) before it is decoded.
 */
export async function prepareAudio(messages: readonly NormalizedMessage[], spec: AudioInputSpec | null, modelId: string): Promise<NormalizedMessage[]> {
  const budget = audioBudget(spec, modelId);
  return Promise.all(
    messages.map(async (message, i) => {
      if (typeof message.content === "string" || !message.content.some((p) => p.type === "input_audio")) return message;
      const content = await Promise.all(
        message.content.map(async (part, j): Promise<ContentPart> => {
          if (part.type !== "input_audio" || "audio" in part) return part;
          try {
            return await prepareOne(part, budget);
          } catch (error) {
            const param = paramOf(message, i, j);
            if (error instanceof AudioInputError) throw new ApiError({ status: 400, code: error.code, param, message: `\`${param}\`: ${error.message}` });
            throw error;
          }
        }),
      );
      return { ...message, content };
    }),
  );
}

/** Every prepared audio part of `messages` against the model's `audio_decode` limits: 400 naming the part and the limits. */
export function checkAudioLimits(messages: readonly NormalizedMessage[], spec: AudioInputSpec, modelId: string): void {
  messages.forEach((message, i) => {
    if (typeof message.content === "string") return;
    message.content.forEach((part, j) => {
      if (part.type !== "input_audio" || !("audio" in part)) return;
      const { samples, sampleRate } = (part as EngineAudioPart).audio;
      const problem = audioLengthProblem(samples, sampleRate, spec);
      if (!problem) return;
      const param = paramOf(message, i, j);
      throw new ApiError({ status: 400, code: problem.code, param, message: `\`${param}\` ${problem.message.replace("the model", modelId)}` });
    });
  });
}

const paramOf = (message: NormalizedMessage, i: number, j: number) => `${message.param ?? `messages[${i}]`}.content[${j}]`;

/** Header-declared seconds a compressed part may have: the model's maximum plus a second of codec padding (encoder delay, the last frame); the exact check on samples follows decoding. */
function audioBudget(spec: AudioInputSpec | null, modelId: string): AudioBudget {
  if (!spec) return { maxSeconds: UNKNOWN_LIMIT_SECONDS, limit: `audio is accepted up to ${UNKNOWN_LIMIT_SECONDS / 60} minutes while ${modelId}'s own limit is not known` };
  const seconds = spec.max_samples / spec.sample_rate_hz;
  return { maxSeconds: seconds + 1, limit: `${modelId} takes at most ${+seconds.toFixed(2)} s (${spec.max_samples} samples at ${spec.sample_rate_hz} Hz)` };
}

async function prepareOne(part: InputAudioPart, budget: AudioBudget): Promise<EngineAudioPart> {
  const input = part.input_audio;
  if (input.format === "pcm_f32") {
    const pcm = input as Extract<InputAudioPart["input_audio"], { format: "pcm_f32" }>;
    return { type: "input_audio", input_audio: pcm, audio: { source: "pcm_f32", samples: pcm.data.length, sampleRate: pcm.sample_rate, channels: 1 } };
  }
  const bytes = typeof input.data === "string" ? base64ToBytes(input.data) : (input.data as Uint8Array);
  if (input.format === "wav") {
    const wav = readWavInfo(bytes);
    const data = typeof input.data === "string" ? input.data : bytesToBase64(bytes);
    return { type: "input_audio", input_audio: { data, format: "wav" }, audio: { source: "wav", samples: wav.frames, sampleRate: wav.sampleRate, channels: wav.channels } };
  }
  const format = input.format as "mp3" | "webm" | "ogg";
  const { decodeCompressed } = await import("../audio/decode.js");
  const decoded = await decodeCompressed(bytes, format, budget);
  return {
    type: "input_audio",
    input_audio: { data: decoded.samples, format: "pcm_f32", sample_rate: decoded.sampleRate },
    audio: { source: format, samples: decoded.samples.length, sampleRate: decoded.sampleRate, channels: decoded.channels },
  };
}
