/**
 * The final sampling distribution of one step, from raw logits, in web-llm's
 * order: top_k and min_p on the raw logits (our logit processor,
 * engine/webllm/webllm-logits.ts, runs before web-llm's sampler), then logit_bias,
 * presence and frequency penalties (over generated tokens), the repetition
 * penalty (over generated tokens), temperature, and top_p. Speculative
 * sampling accepts a drafted token with the probability this gives it, so a
 * verify pass samples exactly as one-step decoding would. Pure.
 */
import type { SamplingParams } from "../types.js";
import { kthLargest } from "../webllm/webllm-logits.js";
import { argmax } from "./acceptance.js";

/** Counts of the tokens generated so far (what penalties look at), kept incrementally. */
export class GeneratedCounts {
  readonly counts = new Map<number, number>();

  add(token: number): void {
    this.counts.set(token, (this.counts.get(token) ?? 0) + 1);
  }

  remove(token: number): void {
    const n = (this.counts.get(token) ?? 0) - 1;
    if (n > 0) this.counts.set(token, n);
    else this.counts.delete(token);
  }
}

export type DistributionParams = Pick<SamplingParams, "temperature" | "top_p" | "top_k" | "min_p" | "presence_penalty" | "frequency_penalty" | "repetition_penalty" | "logit_bias">;

/** Below this temperature sampling is greedy (web-llm clamps 0 to 1e-6). */
const GREEDY_TEMPERATURE = 1e-5;

/** Whether these parameters sample at all (otherwise every step is the argmax). */
export function isGreedy(params: DistributionParams): boolean {
  return params.temperature !== undefined && params.temperature < GREEDY_TEMPERATURE;
}

/** Probabilities over the vocabulary (a one-hot vector when greedy). `logits` is not modified. */
export function finalDistribution(logits: ArrayLike<number>, params: DistributionParams, generated: GeneratedCounts): Float64Array {
  const z = Float64Array.from(logits as ArrayLike<number>);
  if (params.top_k !== undefined && params.top_k > 0 && params.top_k < z.length) {
    const threshold = kthLargest(Float32Array.from(z), params.top_k);
    for (let i = 0; i < z.length; i++) if (z[i] < threshold) z[i] = -Infinity;
  }
  if (params.min_p !== undefined && params.min_p > 0) {
    const floor = z[argmax(z)] + Math.log(params.min_p);
    for (let i = 0; i < z.length; i++) if (z[i] < floor) z[i] = -Infinity;
  }
  for (const [id, bias] of Object.entries(params.logit_bias ?? {})) {
    const i = Number(id);
    if (i >= 0 && i < z.length) z[i] += bias;
  }
  const presence = params.presence_penalty ?? 0;
  const frequency = params.frequency_penalty ?? 0;
  const repetition = params.repetition_penalty ?? 1;
  for (const [i, count] of generated.counts) {
    if (i < 0 || i >= z.length) continue;
    z[i] -= presence + frequency * count;
    if (repetition !== 1) z[i] = z[i] > 0 ? z[i] / repetition : z[i] * repetition;
  }
  const p = new Float64Array(z.length);
  if (isGreedy(params)) {
    p[argmax(z)] = 1;
    return p;
  }
  const t = params.temperature ?? 1;
  const max = z[argmax(z)];
  let sum = 0;
  for (let i = 0; i < z.length; i++) sum += p[i] = Math.exp((z[i] - max) / t);
  for (let i = 0; i < z.length; i++) p[i] /= sum;
  const topP = params.top_p ?? 1;
  if (topP < 1) keepTopP(p, Math.max(topP, 1e-5));
  return p;
}

/** Keeps the most likely tokens whose cumulative probability first reaches `topP` (the one crossing it included), renormalized. */
function keepTopP(p: Float64Array, topP: number): void {
  const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
  let cumulative = 0;
  let kept = 0;
  for (const i of order) {
    if (cumulative >= topP) p[i] = 0;
    else {
      cumulative += p[i];
      kept += p[i];
    }
  }
  for (let i = 0; i < p.length; i++) p[i] /= kept;
}
