/**
 * A model's audio limits (its `audio_decode` processor), checked the way
 * web-llm 0.2.86 checks them: on the number of samples once resampled to the
 * processor's rate (`canonicalLength`, `checkSampleRange` in its bundle).
 */
import type { AudioInputSpec } from "../models/inputs.js";

/** Samples after resampling `frames` at `sourceRate` to `targetRate` (web-llm's rounding). */
export function canonicalLength(frames: number, sourceRate: number, targetRate: number): number {
  if (frames === 0) return 0;
  return sourceRate === targetRate ? frames : Math.max(1, Math.round((frames * targetRate) / sourceRate));
}

const seconds = (samples: number, rate: number) => `${+(samples / rate).toFixed(2)} s`;

/** A message when `frames` at `sampleRate` is outside `spec`, else null. */
export function audioLengthProblem(frames: number, sampleRate: number, spec: AudioInputSpec): { code: "audio_too_short" | "audio_too_long"; message: string } | null {
  const length = canonicalLength(frames, sampleRate, spec.sample_rate_hz);
  if (length >= spec.min_samples && length <= spec.max_samples) return null;
  const limits = `${seconds(spec.min_samples, spec.sample_rate_hz)} to ${seconds(spec.max_samples, spec.sample_rate_hz)} (${spec.min_samples}..${spec.max_samples} samples at ${spec.sample_rate_hz} Hz)`;
  const got = `${seconds(frames, sampleRate)} (${length} samples at ${spec.sample_rate_hz} Hz)`;
  return length < spec.min_samples
    ? { code: "audio_too_short", message: `is too short: ${got}; the model takes ${limits}.` }
    : { code: "audio_too_long", message: `is too long: ${got}; the model takes ${limits}. Split the recording, or trim it.` };
}
