/**
 * Speculative decoding on the real engine (driven by scripts/smoke-real.mjs,
 * step `speculative`): web-llm's pipeline with the speculative binding, at
 * the engine seam (createWebLlmEngine, the events and usage the host reads),
 * so the figures are the engine's own. Greedy requests on one loaded model:
 * 1. the reply with speculation off (web-llm's one pass per token);
 * 2. the same request with `prediction` = that reply's text;
 * 3. a regenerate with speculation on and no prediction (the prompt cache
 *    holds the previous replies after the same prompt: they are the draft);
 * 4. the regenerate with speculation off (same prefill as 3, for the time);
 * 5. the request with speculation on, no prediction and nothing cached for it
 *    (its own `promptCacheKey`: a cold prefill like 1's, no previous reply to
 *    draft from): only lookups and the cost model (issue 34: its wall time
 *    ≤ 1.05 × step 1's, the same tokens).
 * Each reports its tokens (logprob entries), text, usage (decode passes,
 * drafted/accepted tokens, prediction counts), time to first token and wall
 * time, so the driver can check token-for-token equality and passes per
 * token, and set the times side by side.
 */
import { createWebLlmEngine } from "../../src/engine/webllm/webllm-engine.js";
import type { EngineRequest } from "../../src/engine/types.js";
import { chatRecord } from "./mixed-smoke.js";

type Json = Record<string, unknown>;

export interface SpeculativeSmokeOptions {
  modelId: string;
  maxTokens: number;
  /** Steps to run (default all), by name. */
  only?: string[];
  /** The prediction when the first step (whose reply it is) is not run: a reply measured before. */
  prediction?: string;
}

declare global {
  interface Window {
    smokeSpeculative(options: SpeculativeSmokeOptions): Promise<Json>;
    smokeSpeculativeReport: Json;
  }
}

function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string };
  return { name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? error).slice(0, 600) };
}

export function defineSpeculativeSmoke(): void {
  window.smokeSpeculative = async (options) => {
    const report: Json = { maxTokens: options.maxTokens, steps: [] };
    window.smokeSpeculativeReport = report;
    const engine = createWebLlmEngine({ logLevel: "WARN" });
    const record = chatRecord(options.modelId);
    const t0 = performance.now();
    try {
      await engine.load(record, { cacheBackend: "indexeddb", promptCache: { budgetTokens: 2048, maxSequences: 4 } });
      report.loadMs = Math.round(performance.now() - t0);
    } catch (error) {
      report.loadError = errorOf(error);
      return report;
    }
    console.info(`[speculative] loaded in ${report.loadMs} ms`);
    const steps = report.steps as Json[];
    const messages: EngineRequest["messages"] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ];
    const ask = async (name: string, extra: Partial<EngineRequest>): Promise<Json> => {
      const step: Json = { name, speculative: extra.speculative !== false, prediction: extra.prediction ?? null };
      if (options.only && !options.only.includes(name)) return step;
      steps.push(step);
      const request: EngineRequest = {
        model: options.modelId,
        messages,
        sampling: { temperature: 0, seed: 42, stop: [], max_tokens: options.maxTokens },
        thinking: { enabled: false },
        continueFinalMessage: false,
        topLogprobs: 1,
        ...extra,
      };
      const start = performance.now();
      const tokens: string[] = [];
      let text = "";
      try {
        for await (const event of engine.generate(request, new AbortController().signal)) {
          if (event.type === "text") {
            if (step.ttftMs === undefined) step.ttftMs = Math.round(performance.now() - start);
            text += event.text;
            for (const lp of event.logprobs ?? []) tokens.push(lp.token);
          } else {
            step.finish = event.finish;
            step.usage = event.usage;
          }
        }
      } catch (error) {
        step.error = errorOf(error);
      }
      step.ms = Math.round(performance.now() - start);
      // decode time: after the first token (the prefill's) until the end
      step.decodeMs = step.ms as number - ((step.ttftMs as number | undefined) ?? 0);
      Object.assign(step, { text, tokens });
      console.info(`[speculative] ${name}: ${JSON.stringify(step)}`);
      return step;
    };
    // Warm-up (not a step): the decode and prefill kernels compile before anything is timed.
    try {
      const warm: EngineRequest = { model: options.modelId, messages: [{ role: "user", content: "Warm up" }], sampling: { temperature: 0, stop: [], max_tokens: 3 }, thinking: { enabled: false }, continueFinalMessage: false, promptCacheKey: "speculative-smoke-warm-up" };
      const w0 = performance.now();
      for await (const _event of engine.generate(warm, new AbortController().signal)) void _event;
      report.warmUpMs = Math.round(performance.now() - w0);
    } catch (error) {
      report.warmUpError = errorOf(error);
    }
    const plain = await ask("reply, speculation off", { speculative: false });
    const reply = plain.text !== undefined ? String(plain.text) : (options.prediction ?? "");
    await ask("same request, prediction = reply", { speculative: true, prediction: reply });
    await ask("regenerate, speculation on", { speculative: true });
    await ask("regenerate, speculation off", { speculative: false });
    await ask("reply, speculation on, nothing cached", { speculative: true, promptCacheKey: "speculative-smoke-fresh" });
    await engine.unload();
    report.done = true;
    return report;
  };
}
