/**
 * `client.stats()`: what the engines did since this host started (the
 * client's, or the shared worker's for all its tabs), and whether the loaded
 * model's generations can share forward passes.
 *
 * A batching engine reports its own counts (shared passes counted once); an
 * engine that decodes one sequence at a time is counted from each
 * generation's own figures (host/generation-tally.ts), one row per pass.
 */
import type { Engine } from "../engine/types.js";
import type { BatchCounters, StepTimes } from "../engine/batching/counters.js";
import type { GenerationTally } from "./generation-tally.js";

export interface EngineStats {
  /** Forward passes run: prompt prefills, decode and verify steps (a shared step counts once). */
  forward_passes: number;
  /**
   * Tokens the model sampled, over all requests: every completion token, and the end-of-text token of each
   * reply that ended by itself (it takes a forward pass, as `x_webgpu.decode_passes` counts it).
   */
  generated_tokens: number;
  /** Prompt tokens fed to the model (not those served from the prompt cache). */
  prefill_tokens: number;
  /** Rows (sequences) per forward pass: the mean over all passes and the most in one; 0 before the first pass. */
  mean_rows: number;
  max_rows: number;
  /** Whether generations of the loaded chat model share forward passes, and if not, why. */
  batching: BatchingState;
}

export interface BatchingState {
  available: boolean;
  /** The chat model the engine holds; null before a load. */
  model: string | null;
  /** How many generations decode together (the engine's row cap); 1 where it decodes one at a time. */
  row_cap: number;
  /** Why not, where not available. */
  reason: string | null;
  /** What a decode forward costs on this device, as measured (web-llm rows; absent where nothing measures it). */
  step_ms?: StepTimes;
  /** Device memory one row's KV room takes, in bytes (measured where the runtime counts it). */
  kv_bytes_per_row?: number;
}

export interface StatsContext {
  /** Counts of the generations of one-at-a-time engines. */
  readonly tally: GenerationTally;
  /** The engines this host has started (none before the first request with the default engine). */
  engines(): Engine[];
}

export function engineStats(context: StatsContext): EngineStats {
  const engines = context.engines();
  const parts = [context.tally.counters(), ...engines.map((engine) => engine.batchCounters?.() ?? null).filter((c): c is BatchCounters => c !== null)];
  const passes = sum(parts, (c) => c.forward_passes);
  const rowSlots = sum(parts, (c) => c.mean_rows * c.forward_passes);
  return {
    forward_passes: passes,
    generated_tokens: sum(parts, (c) => c.generated_tokens),
    prefill_tokens: sum(parts, (c) => c.prefill_tokens),
    mean_rows: passes === 0 ? 0 : Math.round((rowSlots / passes) * 100) / 100,
    max_rows: Math.max(0, ...parts.map((c) => c.max_rows)),
    batching: batchingState(engines.find((engine) => engine.loadedModel !== null) ?? engines[0]),
  };
}

function batchingState(engine: Engine | undefined): BatchingState {
  if (!engine) return { available: false, model: null, row_cap: 1, reason: "no engine has started yet: the default web-llm engine starts with the first request" };
  const rows = engine.batchRows ?? 1;
  const model = engine.loadedModel;
  const measured = engine.batchCounters?.();
  const extra = { ...(measured?.step_ms ? { step_ms: measured.step_ms } : {}), ...(measured?.kv_bytes_per_row !== undefined ? { kv_bytes_per_row: measured.kv_bytes_per_row } : {}) };
  if (rows > 1) return { available: true, model, row_cap: rows, reason: null, ...extra };
  return { available: false, model, row_cap: 1, reason: engine.oneAtATime ?? "this engine declares no row cap (`batchRows`): it decodes one sequence at a time" };
}

function sum(parts: BatchCounters[], of: (c: BatchCounters) => number): number {
  return parts.reduce((total, c) => total + of(c), 0);
}
