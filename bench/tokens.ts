/**
 * What every pipeline variant of the benchmark carries: the same scripted
 * model output, split into the same tokens, under a model record whose context
 * window is large enough that no variant stops early.
 */
import { scriptedTokens } from "../src/engine/scripted.js";
import type { ModelRecord } from "../src/models/record.js";

/** Model id of the benchmark record (no download: the engine is scripted). */
export const BENCH_MODEL = "bench-scripted-20k";

/** A raw reply of exactly `count` scripted tokens (" w123" is one token). */
export function benchText(count: number): string {
  return Array.from({ length: count }, (_, i) => `w${i % 997}`).join(" ");
}

export function benchTokens(count: number): string[] {
  return scriptedTokens(benchText(count));
}

export const benchRecord: ModelRecord = {
  model: "https://bench.invalid/bench-scripted-20k",
  model_id: BENCH_MODEL,
  model_lib: "https://bench.invalid/bench-scripted-20k.wasm",
  overrides: { context_window_size: 1_000_000 },
};
