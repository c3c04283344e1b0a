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
import { ApiError, abortError } from "../../protocol/api-error.js";
import type { TokenLogprob, TopLogprob } from "../../protocol/types.js";
import type { EngineEvent, EngineRequest } from "../types.js";
import type { WebLlmCompat } from "./webllm-compat.js";
import { mapWebLlmError } from "./webllm-errors.js";
import type { WebLlmCacheSlot } from "./prompt-cache/webllm-cache-slot.js";
import type { RequestLogitProcessor, LogitControls } from "./webllm-logits.js";
import { needsLogitProcessor, renderContinuationPrompt, toChatRequest, toCompletionRequest, usesEnableThinking, WEBLLM_MAX_TOP_LOGPROBS, type ConvTemplate } from "./webllm-request.js";
import { canContinue, continuedRequest } from "../continuation.js";
import { chatConfigOf, loadedModelOf, type WebLlmLoadedModel, type WebLlmChunk, type WebLlmEngineLike, type WebLlmLogprob } from "./webllm-shapes.js";
import type { WebLlmResidency } from "./webllm-residency.js";
import type { WebLlmRows } from "./batching/webllm-rows.js";
import type { RowBatchReport } from "../batching/counters.js";

/** What generation reads of the engine's state, read at each use (getters: the engine and compat appear at the first load). */
export interface WebLlmGenerationContext {
  readonly engine: WebLlmEngineLike | null;
  readonly compat: WebLlmCompat | null;
  readonly residency: WebLlmResidency;
  readonly cache: WebLlmCacheSlot;
  readonly registry: Map<string, RequestLogitProcessor>;
  /** The rows of the loaded chat model when the client batches and the model can (else absent or null). */
  readonly rows?: () => WebLlmRows | null;
}

function armProcessor(ctx: WebLlmGenerationContext, request: EngineRequest): RequestLogitProcessor | null {
  if (!needsLogitProcessor(request)) return null;
  const processor = ctx.registry.get(request.model);
  if (!processor) return null;
  const loaded = loadedModelOf(ctx.engine, request.model);
  if (loaded && "logitProcessor" in loaded) loaded.logitProcessor = processor;
  const controls: LogitControls = {
    topK: request.sampling.top_k,
    minP: request.sampling.min_p,
    temperature: request.sampling.temperature,
  };
  if ((request.topLogprobs ?? 0) > WEBLLM_MAX_TOP_LOGPROBS) controls.topLogprobs = request.topLogprobs;
  const { budgetTokens, endMarker, enabled } = request.thinking;
  if (enabled && budgetTokens !== undefined && endMarker && loaded?.tokenizer) {
    controls.budget = { tokens: budgetTokens, endTokens: Array.from(loaded.tokenizer.encode(endMarker)) };
  }
  processor.begin(controls);
  return processor;
}

function disarmProcessor(ctx: WebLlmGenerationContext, request: EngineRequest, processor: RequestLogitProcessor | null): void {
  if (!processor) return;
  processor.end();
  const loaded = loadedModelOf(ctx.engine, request.model);
  if (loaded && "logitProcessor" in loaded) loaded.logitProcessor = undefined;
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
  const tokenizer = loadedModelOf(ctx.engine, request.model)?.tokenizer;
  const textOnly = request.messages.every((m) => typeof m.content === "string" || m.content.every((part) => part.type === "text"));
  if (!tokenizer || !textOnly || !chatConfigOf(ctx.engine, request.model)?.conv_template) return false;
  return canContinue(request, tokenizer.encode(request.continueReply ?? "").length);
}

/** `request` as web-llm receives it when it continues a reply (engine/continuation.ts), and the start's tokens. */
function continuation(ctx: WebLlmGenerationContext, request: EngineRequest): { request: EngineRequest; tokens: number } | null {
  if (!request.continueReply) return null;
  const tokens = loadedModelOf(ctx.engine, request.model)?.tokenizer?.encode(request.continueReply).length ?? 0;
  return { tokens, request: continuedRequest(request, tokens) };
}

/** With two models resident web-llm needs the request to name one. */
function withModel(ctx: WebLlmGenerationContext, body: Record<string, unknown>, model: string): Record<string, unknown> {
  return ctx.residency.embedding ? { ...body, model } : body;
}

/** A web-llm stream's chunks as engine events; returns how it ended and web-llm's usage. */
async function* readChunks(
  iterator: AsyncIterator<WebLlmChunk>,
  request: EngineRequest,
  processor: RequestLogitProcessor | null,
  loaded: WebLlmLoadedModel | undefined,
  onChunk: () => void,
): AsyncGenerator<EngineEvent, { finish: "stop" | "length" | "abort"; usage: WebLlmChunk["usage"] }> {
  let finish: "stop" | "length" | "abort" = "stop";
  let usage: WebLlmChunk["usage"];
  let logprobIndex = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    onChunk();
    const chunk = next.value;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason === "length" ? "length" : choice.finish_reason === "abort" ? "abort" : "stop";
    const text = choice.delta?.content ?? choice.text ?? "";
    const entries = choice.logprobs?.content ?? undefined;
    let logprobs: TokenLogprob[] | undefined;
    if (request.topLogprobs !== undefined && entries && entries.length > 0) {
      logprobs = entries.map((entry) => toTokenLogprob(entry, request.topLogprobs as number, processor?.steps[logprobIndex++], loaded));
    }
    if (text || logprobs) yield { type: "text", text, ...(logprobs ? { logprobs } : {}) };
  }
  return { finish, usage };
}

/** web-llm's stream for `request`: its completion API for a raw prompt or a continued final message, else its chat API. */
async function openStream(ctx: WebLlmGenerationContext, live: WebLlmEngineLike, request: EngineRequest): Promise<AsyncIterable<WebLlmChunk>> {
  return request.rawPrompt !== undefined || request.continueFinalMessage
    ? await live.completions.create(withModel(ctx, toCompletionRequest(request, request.rawPrompt ?? continuationPrompt(ctx, request)), request.model))
    : await live.chat.completions.create(withModel(ctx, toChatRequest(request, { enableThinkingSwitch: usesEnableThinking(request.model, ctx.residency.record!.family), structuralTags: ctx.compat?.structuralTags }), request.model));
}

function checkLoaded(ctx: WebLlmGenerationContext, request: EngineRequest): WebLlmEngineLike {
  if (!ctx.engine || ctx.residency.loaded !== request.model || !ctx.residency.record) {
    throw new ApiError({ status: 500, code: "model_not_loaded", message: `Model ${request.model} is not loaded in the web-llm engine.` });
  }
  return ctx.engine;
}

/**
 * A generation: a row of the batch (batching/webllm-rows.ts) when the client
 * batches and the rows can take the request, else alone as before (after the
 * rows in flight, when there are rows).
 */
export async function* generateWithWebLlm(ctx: WebLlmGenerationContext, request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
  const rows = ctx.rows?.();
  if (!rows) return yield* generateAlone(ctx, request, signal);
  if (rowsTake(request)) return yield* generateInRow(ctx, rows, request, signal);
  let release: () => void = () => undefined;
  const turn = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const granted = new Promise<void>((resolve) => (started = resolve));
  const done = rows.alone(async () => {
    started();
    await turn;
  }, signal);
  try {
    await Promise.race([granted, done]);
    if (ctx.engine) restoreLock(ctx.engine, request.model);
    yield* generateAlone(ctx, request, signal);
  } finally {
    release();
    await done.catch(() => undefined);
  }
}

async function* generateAlone(ctx: WebLlmGenerationContext, request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
  const { residency, cache } = ctx;
  const live = checkLoaded(ctx, request);
  if (signal.aborted) throw abortError();
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
    iterator = (await openStream(ctx, live, request))[Symbol.asyncIterator]();
    const loaded = loadedModelOf(ctx.engine, request.model);
    // An interrupt issued before web-llm took its lock is cleared by it: repeat it.
    const ended = yield* readChunks(iterator, request, processor, loaded, () => signal.aborted && live.interruptGenerate());
    finished = true;
    let finish = ended.finish;
    const usage = ended.usage;
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

/**
 * Whether a row can run `request`: everything but what needs the request's
 * logit processor (one per model). A request with a `prediction` drafts from
 * it in its row, its drafts verified in the steps beside the other rows.
 */
function rowsTake(request: EngineRequest): boolean {
  return !needsLogitProcessor(request);
}

/**
 * A generation as a row: web-llm's own generation on the row's view of the
 * pipeline (batching/webllm-rows.ts), entered through its public API with the
 * view put in the engine's pipeline map for the synchronous part of the call.
 * An abort stops this row only (`triggerStop` on its view, at its next step);
 * web-llm's `interruptGenerate` would stop every row.
 */
async function* generateInRow(ctx: WebLlmGenerationContext, rows: WebLlmRows, request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
  const live = checkLoaded(ctx, request);
  if (signal.aborted) throw abortError();
  const continued = continuation(ctx, request);
  if (continued) request = continued.request;
  const speculative = { enabled: request.speculative !== false, ...(request.prediction ? { prediction: request.prediction } : {}) };
  const row = await rows.open({ id: `row-${++rowIds}`, owner: request.owner ?? "", key: request.promptCacheKey, speculative }, signal);
  let iterator: AsyncIterator<WebLlmChunk> | null = null;
  let finished = false;
  let report: RowBatchReport | null = null;
  try {
    iterator = (await enterWithView(live, request.model, row.view, () => openStream(ctx, live, request)))[Symbol.asyncIterator]();
    const ended = yield* readChunks(iterator, request, null, loadedModelOf(ctx.engine, request.model), () => undefined);
    finished = true;
    // Ended cleanly (its reply, a stop, max_tokens, or an abort between steps): the sequence holds exactly
    // what was fed, and the prompt cache keeps it for the next turn.
    report = row.leave({ keep: true });
    let finish = ended.finish;
    const usage = ended.usage;
    if (finish === "abort" && !signal.aborted) finish = "stop";
    const completionTokens = (usage?.completion_tokens ?? 0) + (ctx.compat?.completionTokensMissFirst && usage ? 1 : 0);
    const continuedTokens = continued?.tokens ?? 0;
    yield {
      type: "done",
      finish,
      usage: {
        // web-llm counts what it prefilled; a cached prefix the row forked is the rest of the prompt.
        promptTokens: (usage?.prompt_tokens ?? 0) + row.cachedTokens - continuedTokens,
        cachedTokens: row.cachedTokens,
        completionTokens: completionTokens + continuedTokens,
        ...(continued ? { continuedTokens } : {}),
        prefillTokensPerS: finite(usage?.extra?.prefill_tokens_per_s),
        decodeTokensPerS: finite(usage?.extra?.decode_tokens_per_s),
        batch: { maxRows: report.max_rows, meanRows: report.mean_rows, passes: report.passes },
        // Its decode passes and drafts (speculation on), counted by the row.
        ...(row.speculation ?? {}),
      },
    };
  } catch (error) {
    if (signal.aborted && isAbortLike(error)) throw abortError();
    const mapped = mapWebLlmError(error, "generate");
    if (mapped.code === "device_lost") {
      ctx.residency.deviceLost();
      ctx.cache.forget();
    }
    throw mapped;
  } finally {
    if (iterator && !finished) {
      // The consumer stopped reading: the row stops at its next step, and web-llm's generator ends.
      row.view.triggerStop();
      await iterator.return?.().catch(() => undefined);
    }
    if (!report) row.leave();
  }
}

let rowIds = 0;

/** web-llm's engine maps, as far as entering with a view reads them (0.2.79 – 0.2.86). */
interface EngineMaps {
  loadedModelIdToPipeline?: Map<string, unknown>;
  loadedModelIdToLock?: Map<string, unknown>;
}

/** A lock that never waits: rows share the pipeline under the rows' own scheduling, not web-llm's per-model lock. */
const OPEN_LOCK = { acquire: async () => undefined, release: async () => undefined };

/**
 * Calls `open` (web-llm's chat or completion API) with `view` as the model's
 * pipeline: web-llm reads its pipeline map synchronously when the call
 * starts, and its lock then (0.2.79) or when the stream starts (0.2.86); the
 * open lock stays in place while rows run (requests that run alone wait for
 * the rows to end, and get web-llm's lock back).
 */
function enterWithView<T>(live: WebLlmEngineLike, model: string, view: unknown, open: () => Promise<T>): Promise<T> {
  const maps = live as unknown as EngineMaps;
  const pipelines = maps.loadedModelIdToPipeline;
  const locks = maps.loadedModelIdToLock;
  if (!(pipelines instanceof Map) || !(locks instanceof Map) || !pipelines.has(model)) throw new Error("This web-llm does not expose its pipeline map: rows cannot enter it.");
  const base = pipelines.get(model);
  const lock = locks.get(model);
  if (lock !== OPEN_LOCK) {
    ownLocks.set(live, lock);
    locks.set(model, OPEN_LOCK);
  }
  pipelines.set(model, view);
  let opened: Promise<T>;
  try {
    // web-llm picks its pipeline before its first await: the map holds the view only for this call.
    opened = open();
  } finally {
    pipelines.set(model, base);
  }
  return opened;
}

/** web-llm's own lock of each engine, put back when its rows end (`restoreLock`). */
const ownLocks = new WeakMap<object, unknown>();

/** Puts web-llm's per-model lock back (the rows ended; a request runs alone next). */
export function restoreLock(live: WebLlmEngineLike, model: string): void {
  const locks = (live as unknown as EngineMaps).loadedModelIdToLock;
  const own = ownLocks.get(live);
  if (locks instanceof Map && own !== undefined && locks.get(model) === OPEN_LOCK) locks.set(model, own);
}

const finite = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) ? n : 0);

function isAbortLike(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: string }).name === "AbortError";
}

const encoder = new TextEncoder();

/** One web-llm logprob entry → ours, with `top` alternatives (from the LogitProcessor when above 5). */
function toTokenLogprob(entry: WebLlmLogprob, top: number, step: { top: Array<{ id: number; logprob: number }> } | undefined, loaded: WebLlmLoadedModel | undefined): TokenLogprob {
  const bytes = entry.bytes ?? [...encoder.encode(entry.token)];
  let alternatives: TopLogprob[];
  if (top > WEBLLM_MAX_TOP_LOGPROBS && step && loaded?.tokenizer) {
    const tokenizer = loaded.tokenizer;
    alternatives = step.top.map(({ id, logprob }) => {
      const token = tokenizer.decode(new Int32Array([id]));
      return { token, logprob, bytes: [...encoder.encode(token)] };
    });
  } else {
    alternatives = (entry.top_logprobs ?? []).slice(0, top).map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes ?? [...encoder.encode(t.token)] }));
  }
  return { token: entry.token, logprob: entry.logprob, bytes, top_logprobs: alternatives };
}
