/**
 * Continuous batching on the real engine (driven by scripts/smoke-real.mjs,
 * step `batching`), at the engine seam (createWebLlmEngine, the events and
 * usage the host reads):
 * 1. "alone": an engine without batching (web-llm's own path, speculation
 *    off) runs four greedy requests one after another;
 * 2. "batched": an engine with `batching: { maxRows: 4 }` runs the same four
 *    at once: their decode steps share `batch_decode` forwards.
 * 3. "drafts" (asked for by name): speculative drafts in the rows, on an
 *    engine like the batched phase's: the four at once, each with
 *    `prediction` = its reply alone (the alone phase's, an earlier run's, the
 *    reply's text given, or a first round here without speculation), then the
 *    four again as a regenerate with speculation on and no prediction (drafted from the replies the prompt
 *    cache holds after the same prompt: the prediction round's). A row's token
 *    and its draft are verified in the step's `batch_prefill`, with logits at
 *    several positions of its sequence beside the other rows' tokens.
 * Each phase first runs a short warm-up (so shader compilation is not timed),
 * then reports per request its tokens (logprob entries), text, usage, time
 * to first token and wall time, and the phase's wall time; the batched phase
 * adds the engine's step counters, the drafts phase the counters before and
 * after each round (forward passes, forwards by kind). The driver checks
 * token-for-token equality and sets the wall times side by side.
 */
import { createClient } from "../../src/index.js";
import { createWebLlmEngine } from "../../src/engine/webllm/webllm-engine.js";
import type { Engine, EngineRequest } from "../../src/engine/types.js";
import type { BatchCounters } from "../../src/engine/batching/counters.js";
import { chatRecord } from "./mixed-smoke.js";

type Json = Record<string, unknown>;

export interface BatchingSmokeOptions {
  modelId: string;
  maxTokens: number;
  /**
   * Phases to run, by name: "alone", "batched", "n3" (one request with `n: 3` through createClient),
   * "drafts" (speculative drafts in rows). Default: all but "drafts", which runs only when named.
   */
  only?: string[];
  /** The batched phase's `batching.forward` (default "measured"). */
  forward?: "measured" | "batched";
  /** The four replies alone from an earlier run (its alone phase's requests): the drafts phase's reference when the alone phase does not run. */
  reference?: Json[];
  /** The reply alone to every prompt, as text (all four give the same one on the random-weight model): the drafts phase's prediction and reference when neither the alone phase nor `reference` is there. */
  prediction?: string;
  /** The drafts phase's rounds after the reference, by name (default both): "prediction", "regenerate". */
  draftsRounds?: string[];
}

declare global {
  interface Window {
    smokeBatching(options: BatchingSmokeOptions): Promise<Json>;
    smokeBatchingReport: Json;
  }
}

const QUESTIONS = ["Hi", "Name a color", "Count to three", "What is tea?"];

function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string };
  return { name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? error).slice(0, 600) };
}

function requestFor(options: BatchingSmokeOptions, question: string, maxTokens: number, extra: Partial<EngineRequest> = {}): EngineRequest {
  return {
    model: options.modelId,
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: question },
    ],
    sampling: { temperature: 0, seed: 42, stop: [], max_tokens: maxTokens },
    thinking: { enabled: false },
    continueFinalMessage: false,
    topLogprobs: 1,
    speculative: false,
    ...extra,
  };
}

async function ask(engine: Engine, request: EngineRequest, label: string, phaseStart: number): Promise<Json> {
  const out: Json = { question: label };
  const start = performance.now();
  out.startS = +((start - phaseStart) / 1000).toFixed(1);
  const tokens: string[] = [];
  let text = "";
  try {
    for await (const event of engine.generate(request, new AbortController().signal)) {
      if (event.type === "text") {
        if (out.ttftMs === undefined) out.ttftMs = Math.round(performance.now() - start);
        // Progress of a slow run: the engine's steps so far, with the forwards' measured times.
        const counters = engine.batchCounters?.();
        if (counters) console.info(`[batching] ${label} +${tokens.length + 1} tokens at ${((performance.now() - phaseStart) / 1000).toFixed(1)} s: ${JSON.stringify(counters)}`);
        text += event.text;
        for (const lp of event.logprobs ?? []) tokens.push(lp.token);
      } else {
        out.finish = event.finish;
        out.usage = event.usage;
      }
    }
  } catch (error) {
    out.error = errorOf(error);
  }
  out.ms = Math.round(performance.now() - start);
  out.endS = +((performance.now() - phaseStart) / 1000).toFixed(1);
  Object.assign(out, { text, tokens });
  console.info(`[batching] ${label}: ${JSON.stringify(out)}`);
  return out;
}

async function phase(options: BatchingSmokeOptions, name: "alone" | "batched"): Promise<Json> {
  const report: Json = { name };
  const engine = createWebLlmEngine({ logLevel: "WARN", ...(name === "batched" ? { batching: { maxRows: 4, ...(options.forward ? { forward: options.forward } : {}) } } : {}) });
  const t0 = performance.now();
  try {
    await engine.load(chatRecord(options.modelId), { cacheBackend: "indexeddb", promptCache: { budgetTokens: 1024, maxSequences: 4 } });
    report.loadMs = Math.round(performance.now() - t0);
    report.batchRows = engine.batchRows ?? null;
    report.oneAtATime = engine.oneAtATime ?? null;
    console.info(`[batching] ${name}: loaded in ${report.loadMs} ms, rows ${report.batchRows}, ${report.oneAtATime ?? "batching"}`);
    // Warm-up (kernels compiled before the timed part): one request alone, or two rows at once.
    const w0 = performance.now();
    const warm = name === "alone" ? [QUESTIONS[0]] : QUESTIONS.slice(0, 2);
    await Promise.all(warm.map((q) => ask(engine, requestFor(options, q, 3), `warm-up ${q}`, w0)));
    report.warmUpMs = Math.round(performance.now() - w0);
    const before = engine.batchCounters?.() ?? null;
    const start = performance.now();
    const requests = QUESTIONS.map((q) => requestFor(options, q, options.maxTokens));
    if (name === "alone") {
      const results: Json[] = [];
      for (const [i, request] of requests.entries()) results.push(await ask(engine, request, QUESTIONS[i], start));
      report.requests = results;
    } else {
      report.requests = await Promise.all(requests.map((request, i) => ask(engine, request, QUESTIONS[i], start)));
    }
    report.wallMs = Math.round(performance.now() - start);
    const after = engine.batchCounters?.() ?? null;
    report.counters = { before, after };
  } catch (error) {
    report.error = errorOf(error);
  } finally {
    await engine.unload().catch(() => undefined);
  }
  console.info(`[batching] ${name} done: wall ${report.wallMs} ms`);
  return report;
}

/** The engine's counters as one round left them against before it (forward passes, tokens, forwards by kind). */
function countersDiff(before: BatchCounters | null, after: BatchCounters | null): Json | null {
  if (!before || !after) return null;
  const kinds: Record<string, number> = {};
  for (const [kind, n] of Object.entries(after.forward_kinds ?? {})) kinds[kind] = n - (before.forward_kinds?.[kind] ?? 0);
  return { forward_passes: after.forward_passes - before.forward_passes, generated_tokens: after.generated_tokens - before.generated_tokens, prefill_tokens: after.prefill_tokens - before.prefill_tokens, forward_kinds: kinds };
}

/** The four requests at once on `engine` (each with `extra(i)`): each request's report, the wall time, the engine's counters. */
async function round(engine: Engine, options: BatchingSmokeOptions, name: string, extra: (i: number) => Partial<EngineRequest>): Promise<Json> {
  const report: Json = { name };
  const before = engine.batchCounters?.() ?? null;
  const start = performance.now();
  report.requests = await Promise.all(QUESTIONS.map((q, i) => ask(engine, requestFor(options, q, options.maxTokens, extra(i)), `${name}: ${q}`, start)));
  report.wallMs = Math.round(performance.now() - start);
  const after = engine.batchCounters?.() ?? null;
  report.counters = { before, after };
  report.engine = countersDiff(before, after);
  console.info(`[batching] drafts, ${name} done: wall ${report.wallMs} ms, ${JSON.stringify(report.engine)}`);
  return report;
}

/**
 * Speculative drafts in rows (the "drafts" phase): four greedy requests at
 * once on an engine with `batching: { maxRows: 4 }`, each predicting its
 * reply alone (`reference`: the alone phase's requests, this run's or an
 * earlier run's, or the reply's text given; null: a first round here,
 * speculation off, gives them), then a regenerate of the four with
 * speculation on and no prediction (its drafts: the replies the prompt cache
 * holds after the same prompt, the prediction round's). Warm-up and rounds
 * use one prompt cache key, as the batched phase: the warm-up's prompts'
 * prefixes are forked, not prefilled again.
 */
async function draftsPhase(options: BatchingSmokeOptions, reference: { from: string; requests: Json[] } | null): Promise<Json> {
  const report: Json = { name: "drafts", rounds: [] };
  const rounds = report.rounds as Json[];
  const engine = createWebLlmEngine({ logLevel: "WARN", batching: { maxRows: 4, ...(options.forward ? { forward: options.forward } : {}) } });
  const t0 = performance.now();
  try {
    await engine.load(chatRecord(options.modelId), { cacheBackend: "indexeddb", promptCache: { budgetTokens: 1024, maxSequences: 4 } });
    report.loadMs = Math.round(performance.now() - t0);
    report.batchRows = engine.batchRows ?? null;
    report.oneAtATime = engine.oneAtATime ?? null;
    console.info(`[batching] drafts: loaded in ${report.loadMs} ms, rows ${report.batchRows}, ${report.oneAtATime ?? "batching"}`);
    const w0 = performance.now();
    // As the batched phase's: its prompts' prefixes are then in the prompt cache for the rounds (one key for all).
    await Promise.all(QUESTIONS.slice(0, 2).map((q) => ask(engine, requestFor(options, q, 3), `warm-up ${q}`, w0)));
    report.warmUpMs = Math.round(performance.now() - w0);
    let replies = reference?.requests ?? null;
    report.referenceFrom = reference?.from ?? "reference round";
    if (!replies) {
      const first = await round(engine, options, "reference", () => ({ speculative: false }));
      rounds.push(first);
      replies = first.requests as Json[];
    }
    const texts = replies.map((r) => String(r.text ?? ""));
    report.reference = replies.map((r) => ({ question: r.question, tokens: r.tokens ?? null, text: r.text, decodePasses: (r.usage as { decodePasses?: number } | undefined)?.decodePasses ?? null }));
    const wanted = (name: string) => !options.draftsRounds || options.draftsRounds.includes(name);
    if (wanted("prediction")) rounds.push(await round(engine, options, "prediction", (i) => ({ speculative: true, prediction: texts[i] })));
    if (wanted("regenerate")) rounds.push(await round(engine, options, "regenerate", () => ({ speculative: true })));
  } catch (error) {
    report.error = errorOf(error);
  } finally {
    await engine.unload().catch(() => undefined);
  }
  return report;
}

/**
 * `n: 3` through the public client on a batching engine: one prefill of the
 * prompt, then three rows forked from it. The engine-wide counters before and
 * after say how many prompt tokens were fed (the prompt once, plus the one
 * token each forked row feeds itself) and how many rows shared the passes.
 */
async function nChoicesPhase(options: BatchingSmokeOptions): Promise<Json> {
  const report: Json = { name: "n3" };
  const client = createClient({ models: [chatRecord(options.modelId)], cache: "indexeddb", batching: { maxRows: 4, ...(options.forward ? { forward: options.forward } : {}) } });
  try {
    const t0 = performance.now();
    await client.models.load(options.modelId);
    report.loadMs = Math.round(performance.now() - t0);
    const before = await client.stats();
    const t1 = performance.now();
    const completion = await client.chat.completions.create({
      model: options.modelId,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Name a color" },
      ],
      n: 3,
      max_tokens: Math.min(options.maxTokens, 4),
      temperature: 0,
    });
    report.ms = Math.round(performance.now() - t1);
    const after = await client.stats();
    report.usage = completion.usage;
    report.batch = (completion as unknown as { x_webgpu?: { batch?: unknown } }).x_webgpu?.batch ?? null;
    report.choices = completion.choices.map((choice) => ({ index: choice.index, finish: choice.finish_reason, text: choice.message.content }));
    report.counters = { before, after };
    report.prefilled = after.prefill_tokens - before.prefill_tokens;
    report.passes = after.forward_passes - before.forward_passes;
    console.info(`[batching] n3: ${JSON.stringify(report)}`);
  } catch (error) {
    report.error = errorOf(error);
  } finally {
    await client.terminate?.();
  }
  return report;
}

export function defineBatchingSmoke(): void {
  window.smokeBatching = async (options) => {
    const report: Json = { maxTokens: options.maxTokens, phases: [] };
    window.smokeBatchingReport = report;
    const phases = report.phases as Json[];
    for (const name of ["alone", "batched"] as const) {
      if (options.only && !options.only.includes(name)) continue;
      phases.push(await phase(options, name));
    }
    if (options.only?.includes("drafts")) {
      const alone = phases.find((p) => p.name === "alone" && !p.error);
      const given = options.prediction !== undefined ? { from: "the prediction text given", requests: QUESTIONS.map((question) => ({ question, text: options.prediction })) } : null;
      const reference = alone ? { from: "alone", requests: alone.requests as Json[] } : options.reference ? { from: "an earlier run's alone phase", requests: options.reference } : given;
      phases.push(await draftsPhase(options, reference));
    }
    if (!options.only || options.only.includes("n3")) phases.push(await nChoicesPhase(options));
    report.done = true;
    return report;
  };
}
