/**
 * The generation loop of a raw-prompt request (`/completions`): engine →
 * stop guard → text, with no family parser (the output is not a chat turn:
 * no reasoning, no tool calls) and nothing remembered for a next turn.
 * Logprobs travel with the text they belong to (LegacyLogprobs).
 */
import { abortError } from "../protocol/api-error.js";
import { LegacyLogprobs } from "../protocol/completion-logprobs.js";
import type { CompletionLogprobs } from "../protocol/completions-types.js";
import type { Usage, WebGpuStats } from "../protocol/types.js";
import type { Engine, EngineRequest, EngineUsage } from "../engine/types.js";
import { StopGuard } from "./stop-guard.js";
import { recordUsage } from "./generation-loop.js";
import { cachedOfFed } from "./decode-report.js";
import type { GenerationTally } from "./generation-tally.js";

export interface RawGeneration {
  text: string;
  finish: "stop" | "length";
  usage: Usage;
}

export interface RawOutput {
  /** Where `text_offset` counts from (the prompt's length), and the alternatives per token; absent: no logprobs. */
  logprobs?: { base: number; top: number };
  /** Each released piece of text with its tokens' logprobs (null without logprobs or when it has no token of its own). */
  write(text: string, logprobs: CompletionLogprobs | null): void;
}

export async function runRawGeneration(engine: Engine, request: EngineRequest, stats: WebGpuStats, started: number, output: RawOutput, signal: AbortSignal, tally: GenerationTally): Promise<RawGeneration> {
  const guard = new StopGuard(request.sampling.stop);
  const logprobs = output.logprobs ? new LegacyLogprobs(output.logprobs.base, output.logprobs.top) : null;
  let text = "";
  let engineUsage: EngineUsage | null = null;
  let finish: "stop" | "length" | "abort" = "stop";
  for await (const event of engine.generate(request, signal)) {
    if (event.type === "done") {
      engineUsage = event.usage;
      finish = event.finish;
      // Counted engine-wide even when aborted: its passes ran.
      tally.count(engine, event.usage);
      break;
    }
    if (stats.ttft_ms === 0) stats.ttft_ms = Math.round(performance.now() - started);
    logprobs?.add(event.text, event.logprobs);
    const released = guard.push(event.text);
    text += released;
    const part = logprobs?.release(text.length) ?? null;
    if (released || part) output.write(released, part);
  }
  const held = guard.finish();
  text += held;
  const last = logprobs?.finish(text.length) ?? null;
  if (held || last) output.write(held, last);
  if (finish === "abort") {
    if (signal.aborted) throw abortError();
    finish = "stop";
  }
  const { usage } = recordUsage(stats, engineUsage);
  const cached = cachedOfFed(usage.promptTokens, usage.cachedTokens);
  stats.prefill_tokens += usage.promptTokens - cached;
  return {
    text,
    finish,
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  };
}
