/**
 * Continuous batching on the real engine (driven by scripts/smoke-real.mjs,
 * step `batching`), at the engine seam (createWebLlmEngine, the events and
 * usage the host reads):
 * 1. "alone": an engine without batching (web-llm's own path, speculation
 *    off) runs four greedy requests one after another;
 * 2. "batched": an engine with `batching: { maxRows: 4 }` runs the same four
 *    at once: their decode steps share `batch_decode` forwards.
 * Each phase first runs a short warm-up (so shader compilation is not timed),
 * then reports per request its tokens (logprob entries), text, usage, time
 * to first token and wall time, and the phase's wall time; the batched phase
 * adds the engine's step counters. The driver checks token-for-token equality
 * and sets the wall times side by side.
 */
import { createClient } from "../../src/index.js";
import { createWebLlmEngine } from "../../src/engine/webllm/webllm-engine.js";
import type { Engine, EngineRequest } from "../../src/engine/types.js";
import { chatRecord } from "./mixed-smoke.js";

type Json = Record<string, unknown>;

export interface BatchingSmokeOptions {
  modelId: string;
  maxTokens: number;
  /** Phases to run (default all), by name: "alone", "batched", "n3" (one request with `n: 3` through createClient). */
  only?: string[];
  /** The batched phase's `batching.forward` (default "measured"). */
  forward?: "measured" | "batched";
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

function requestFor(options: BatchingSmokeOptions, question: string, maxTokens: number): EngineRequest {
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
    for (const name of ["alone", "batched"] as const) {
      if (options.only && !options.only.includes(name)) continue;
      (report.phases as Json[]).push(await phase(options, name));
    }
    if (!options.only || options.only.includes("n3")) (report.phases as Json[]).push(await nChoicesPhase(options));
    report.done = true;
    return report;
  };
}
