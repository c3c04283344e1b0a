/**
 * Generation on the web-llm engine (webllm-engine.ts loads the models):
 * streamed `chat.completions.create` (or, to continue a final assistant
 * message, which web-llm's chat refuses, `completions.create` with the prompt
 * rendered from the model's conversation template; a raw prompt, `rawPrompt`,
 * goes to `completions.create` as is). Abort → `interruptGenerate()` and the
 * iterator's `return()`, which releases web-llm's per-model lock. The request's
 * LogitProcessor is armed around it, the prompt-cache slot told of it, and a
 * reply continued from its journaled start (engine/continuation.ts).
 */
import { ApiError, abortError } from "../protocol/api-error.js";
import type { TokenLogprob, TopLogprob } from "../protocol/types.js";
import type { EngineEvent, EngineRequest } from "./types.js";
import type { WebLlmCompat } from "./webllm-compat.js";
import { mapWebLlmError } from "./webllm-errors.js";
import type { WebLlmCacheSlot } from "./prompt-cache/webllm-cache-slot.js";
import type { RequestLogitProcessor, LogitControls } from "./webllm-logits.js";
import { needsLogitProcessor, renderContinuationPrompt, toChatRequest, toCompletionRequest, usesEnableThinking, WEBLLM_MAX_TOP_LOGPROBS, type ConvTemplate } from "./webllm-request.js";
import { canContinue, continuedRequest } from "./continuation.js";
import { chatConfigOf, pipelineOf, type Pipeline, type WebLlmChunk, type WebLlmEngineLike, type WebLlmLogprob } from "./webllm-shapes.js";
import type { WebLlmResidency } from "./webllm-residency.js";

/** What generation reads of the engine's state, read at each use (getters: the engine and compat appear at the first load). */
export interface WebLlmGenerationContext {
  readonly engine: WebLlmEngineLike | null;
  readonly compat: WebLlmCompat | null;
  readonly residency: WebLlmResidency;
  readonly cache: WebLlmCacheSlot;
  readonly registry: Map<string, RequestLogitProcessor>;
}

function armProcessor(ctx: WebLlmGenerationContext, request: EngineRequest): RequestLogitProcessor | null {
  if (!needsLogitProcessor(request)) return null;
  const processor = ctx.registry.get(request.model);
  if (!processor) return null;
  const pipeline = pipelineOf(ctx.engine, request.model);
  if (pipeline && "logitProcessor" in pipeline) pipeline.logitProcessor = processor;
  const controls: LogitControls = {
    topK: request.sampling.top_k,
    minP: request.sampling.min_p,
    temperature: request.sampling.temperature,
  };
  if ((request.topLogprobs ?? 0) > WEBLLM_MAX_TOP_LOGPROBS) controls.topLogprobs = request.topLogprobs;
  const { budgetTokens, endMarker, enabled } = request.thinking;
  if (enabled && budgetTokens !== undefined && endMarker && pipeline?.tokenizer) {
    controls.budget = { tokens: budgetTokens, endTokens: Array.from(pipeline.tokenizer.encode(endMarker)) };
  }
  processor.begin(controls);
  return processor;
}

function disarmProcessor(ctx: WebLlmGenerationContext, request: EngineRequest, processor: RequestLogitProcessor | null): void {
  if (!processor) return;
  processor.end();
  const pipeline = pipelineOf(ctx.engine, request.model);
  if (pipeline && "logitProcessor" in pipeline) pipeline.logitProcessor = undefined;
}

function continuationPrompt(ctx: WebLlmGenerationContext, request: EngineRequest): string {
  const config = chatConfigOf(ctx.engine, request.model);
  if (!config?.conv_template) {
    throw new ApiError({ status: 400, code: "unsupported_continuation", param: "messages", message: "This web-llm does not expose the model's conversation template, so a final assistant message cannot be continued. End the conversation with a user message." });
  }
  return renderContinuationPrompt({ ...config.conv_template, ...(config.conv_config ?? {}) } as ConvTemplate, request.messages);
}

/**
 * A reply continued from its journaled start (engine/continuation.ts): the
 * conversation rendered with that start as an open assistant message, sent
 * to the completion API as the rendering of a continued final message is,
 * so web-llm prefills prompt and reply so far in one pass. Text only: the
 * continuation rendering carries no images or audio.
 */
export function continuesReply(ctx: WebLlmGenerationContext, request: EngineRequest): boolean {
  const tokenizer = pipelineOf(ctx.engine, request.model)?.tokenizer;
  const textOnly = request.messages.every((m) => typeof m.content === "string" || m.content.every((part) => part.type === "text"));
  if (!tokenizer || !textOnly || !chatConfigOf(ctx.engine, request.model)?.conv_template) return false;
  return canContinue(request, tokenizer.encode(request.continueReply ?? "").length);
}

/** `request` as web-llm receives it when it continues a reply (engine/continuation.ts), and the start's tokens. */
function continuation(ctx: WebLlmGenerationContext, request: EngineRequest): { request: EngineRequest; tokens: number } | null {
  if (!request.continueReply) return null;
  const tokens = pipelineOf(ctx.engine, request.model)?.tokenizer?.encode(request.continueReply).length ?? 0;
  return { tokens, request: continuedRequest(request, tokens) };
}

/** With two models resident web-llm needs the request to name one. */
function withModel(ctx: WebLlmGenerationContext, body: Record<string, unknown>, model: string): Record<string, unknown> {
  return ctx.residency.embedding ? { ...body, model } : body;
}

export async function* generateWithWebLlm(ctx: WebLlmGenerationContext, request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
  const { residency, cache } = ctx;
  if (!ctx.engine || residency.loaded !== request.model || !residency.record) {
    throw new ApiError({ status: 500, code: "model_not_loaded", message: `Model ${request.model} is not loaded in the web-llm engine.` });
  }
  if (signal.aborted) throw abortError();
  const live = ctx.engine;
  const continued = continuation(ctx, request);
  if (continued) request = continued.request;
  await cache.beforeRequest(() => live.resetChat(false, request.model));
  cache.begin(request);
  const processor = armProcessor(ctx, request);
  let iterator: AsyncIterator<WebLlmChunk> | null = null;
  let finished = false;
  const onAbort = () => live.interruptGenerate();
  signal.addEventListener("abort", onAbort);
  try {
    // A raw prompt (/completions) and a continued final message go to web-llm's completion API (no chat template).
    const stream = request.rawPrompt !== undefined || request.continueFinalMessage
      ? await live.completions.create(withModel(ctx, toCompletionRequest(request, request.rawPrompt ?? continuationPrompt(ctx, request)), request.model))
      : await live.chat.completions.create(withModel(ctx, toChatRequest(request, { enableThinkingSwitch: usesEnableThinking(request.model, residency.record!.family), structuralTags: ctx.compat?.structuralTags }), request.model));
    iterator = stream[Symbol.asyncIterator]();
    let finish: "stop" | "length" | "abort" = "stop";
    let usage: WebLlmChunk["usage"];
    let logprobIndex = 0;
    const pipeline = pipelineOf(ctx.engine, request.model);
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        break;
      }
      // An interrupt issued before web-llm took its lock is cleared by it: repeat it.
      if (signal.aborted) live.interruptGenerate();
      const chunk = next.value;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = choice.finish_reason === "length" ? "length" : choice.finish_reason === "abort" ? "abort" : "stop";
      const text = choice.delta?.content ?? choice.text ?? "";
      const entries = choice.logprobs?.content ?? undefined;
      let logprobs: TokenLogprob[] | undefined;
      if (request.topLogprobs !== undefined && entries && entries.length > 0) {
        logprobs = entries.map((entry) => toTokenLogprob(entry, request.topLogprobs as number, processor?.steps[logprobIndex++], pipeline));
      }
      if (text || logprobs) yield { type: "text", text, ...(logprobs ? { logprobs } : {}) };
    }
    if (finish === "abort" && !signal.aborted) finish = "stop";
    const compat = ctx.compat;
    // ≤ 0.2.79 leaves the token sampled at prefill out of its count.
    const completionTokens = (usage?.completion_tokens ?? 0) + (compat?.completionTokensMissFirst && usage ? 1 : 0);
    const fed = cache.end(finish, !!compat?.resetsKvAfterAbort) ?? { promptTokens: usage?.prompt_tokens ?? 0, cachedTokens: 0 };
    const continuedTokens = continued?.tokens ?? 0;
    const decode = cache.decodeCounts;
    yield {
      type: "done",
      finish,
      usage: {
        // A continued reply's start was fed with the prompt: reported as the reply's, not the prompt's.
        promptTokens: fed.promptTokens - continuedTokens,
        cachedTokens: fed.cachedTokens,
        completionTokens: completionTokens + continuedTokens,
        ...(continued ? { continuedTokens } : {}),
        // web-llm divides by zero decode steps when only one token came out.
        prefillTokensPerS: finite(usage?.extra?.prefill_tokens_per_s),
        decodeTokensPerS: finite(usage?.extra?.decode_tokens_per_s),
        // Speculative decoding's passes and drafts, counted on the pipeline (absent on a stand-in engine).
        ...(decode ?? {}),
      },
    };
  } catch (error) {
    cache.fail(error);
    if (signal.aborted && isAbortLike(error)) throw abortError();
    const mapped = mapWebLlmError(error, "generate");
    if (mapped.code === "device_lost") {
      residency.deviceLost();
      cache.forget();
    }
    throw mapped;
  } finally {
    signal.removeEventListener("abort", onAbort);
    disarmProcessor(ctx, request, processor);
    // Leaving early (consumer stopped, error) must still release web-llm's model lock.
    if (iterator && !finished) await iterator.return?.().catch(() => undefined);
  }
}

const finite = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) ? n : 0);

function isAbortLike(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: string }).name === "AbortError";
}

const encoder = new TextEncoder();

/** One web-llm logprob entry → ours, with `top` alternatives (from the LogitProcessor when above 5). */
function toTokenLogprob(entry: WebLlmLogprob, top: number, step: { top: Array<{ id: number; logprob: number }> } | undefined, pipeline: Pipeline | undefined): TokenLogprob {
  const bytes = entry.bytes ?? [...encoder.encode(entry.token)];
  let alternatives: TopLogprob[];
  if (top > WEBLLM_MAX_TOP_LOGPROBS && step && pipeline?.tokenizer) {
    const tokenizer = pipeline.tokenizer;
    alternatives = step.top.map(({ id, logprob }) => {
      const token = tokenizer.decode(new Int32Array([id]));
      return { token, logprob, bytes: [...encoder.encode(token)] };
    });
  } else {
    alternatives = (entry.top_logprobs ?? []).slice(0, top).map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes ?? [...encoder.encode(t.token)] }));
  }
  return { token: entry.token, logprob: entry.logprob, bytes, top_logprobs: alternatives };
}
