/**
 * The scripted engine: replays given model output as if a model produced it.
 * It runs anywhere (Node, a worker, a page) with no GPU and no download, so the
 * whole pipeline above the engine seam — and an app's own UI — can be tested
 * deterministically. It behaves like web-llm where the pipeline depends on it:
 * token-by-token deltas, `max_tokens` → `length`, stop strings cut the output,
 * the context window is enforced, and its KV cache is simulated on its own
 * token ids with the prompt-cache policy web-llm's binding applies
 * (scripted-cache.ts), so `cached_tokens` are the ones web-llm would report.
 */
import { ApiError, abortError } from "../protocol/api-error.js";
import type { TokenLogprob } from "../protocol/types.js";
import type { ModelRecord } from "../models/record.js";
import { contextWindowOf } from "../models/record.js";
import { WEBLLM_THINKING_OFF, usesEnableThinking } from "./webllm/webllm-request.js";
import type { EmbedRequest, Engine, EngineEvent, EngineRequest, LoadOptions } from "./types.js";
import { isEmbeddingRecord } from "../models/embedding.js";
import { checkScriptedInputs, scriptedEmbed } from "./scripted-embed.js";
import { Vocabulary, renderPrompt, renderRawPrompt, scriptedTokens } from "./scripted-prompt.js";
import { ScriptedCache, type CacheTurn } from "./scripted-cache.js";
import type { PromptCacheOption } from "./prompt-cache/config.js";
import { ScriptedSpeculation } from "./scripted-speculation.js";
import { profileCost } from "./speculative/draft-sizing.js";
import { forcedDraft } from "./speculative/jump-forward.js";
import { scriptedForcedText } from "./scripted-jump-forward.js";
import { canContinue } from "./continuation.js";
import { StepScheduler } from "./batching/step-scheduler.js";
import { StepRunner, type BatchRow } from "./batching/step-runner.js";
import { WEIGHT_BOUND_COST, type StepCostModel } from "./batching/cost-model.js";
import type { BatchCounters } from "./batching/counters.js";

export { scriptedTokens } from "./scripted-prompt.js";


export type ScriptedReply = string | { text: string; finish?: "stop" | "length"; error?: ApiError | Error; errorAfterTokens?: number };

export interface ScriptedEngineOptions {
  /** Raw model outputs, used in order; or a function of the request. */
  replies: ScriptedReply[] | ((request: EngineRequest) => ScriptedReply);
  /** Delay between tokens (ms); 0 yields between tokens without waiting. */
  tokenDelayMs?: number;
  /** Simulated load time (ms), reported as progress. */
  loadDelayMs?: number;
  /**
   * Embeddings: a vector per text. Default: a deterministic hashed bag of words
   * in the model's size, unit length (same text → same vector; shared words → closer).
   */
  embed?: (text: string) => number[];
  /** Simulated time per embedding batch (ms); abort is honoured between batches. */
  embedDelayMs?: number;
  /** Prompt caching, as `createClient({ promptCache })` (which wins when set). Default on. */
  promptCache?: PromptCacheOption;
  /**
   * Continuous batching (engine/batching/), on by default as on web-llm:
   * concurrent generations decode in shared steps, one forward pass each, as
   * a batching engine's would; each reply stays what it is alone, and reports
   * `x_webgpu.batch`. The host then lets up to `maxRows` generations run at
   * once. `false`: one generation at a time (what web-llm does with
   * `batching: false`). `maxRows` default 8, `prefillChunkTokens` 256, `cost`
   * a GPU-like model. With a `cost` of its own (a function) the engine cannot
   * be rebuilt in a worker (`spec` is null).
   */
  batch?: boolean | { maxRows?: number; prefillChunkTokens?: number; cost?: StepCostModel };
  /**
   * The device speculative decoding is sized for, as web-llm's binding sizes
   * drafts by the forward times it measures (speculative/draft-sizing.ts):
   * `verifyCostPerToken`, what a verify pass costs per token it feeds, in
   * decode steps (at least one step). About 0.2 on a GPU (a 5-token verify ≈
   * one step), 0.8 on SwiftShader (≈ 4 steps). The decisions
   * show in `x_webgpu` (`draft_tokens`, `decode_passes`). Absent: drafts are
   * sized by acceptance alone, as if a verify cost one step.
   */
  device?: { verifyCostPerToken: number };
}

export interface ScriptedEngine extends Engine {
  /** Every request received, in order: prompt messages as shaped (or the raw prompt), sampling parameters. */
  readonly requests: EngineRequest[];
  /** How many loads ran (a model already loaded is not loaded again). */
  readonly loads: string[];
  /** Every embedding batch received, in order. */
  readonly embeds: EmbedRequest[];
  /** Serializable form, so the same engine can be rebuilt inside a worker (array replies only). */
  readonly spec: { kind: "scripted"; replies: string[]; tokenDelayMs?: number; loadDelayMs?: number; embedDelayMs?: number; promptCache?: PromptCacheOption; batch?: false | { maxRows?: number; prefillChunkTokens?: number }; device?: { verifyCostPerToken: number } } | null;
  /** Batching (the default): engine-wide counts of the step scheduler (forward passes, tokens, rows per pass); null with `batch: false`. */
  batchCounters(): BatchCounters | null;
}

/** A fabricated but deterministic log probability per token, so logprob plumbing is testable. */
function fakeLogprobs(token: string, top: number): TokenLogprob[] {
  const bytes = [...new TextEncoder().encode(token)];
  const logprob = -((bytes.reduce((a, b) => a + b, 0) % 97) / 100);
  const alternatives = Array.from({ length: top }, (_, k) =>
    k === 0 ? { token, logprob, bytes } : { token: `${token}~${k}`, logprob: logprob - k, bytes: [...new TextEncoder().encode(`${token}~${k}`)] },
  );
  return [{ token, logprob, bytes, top_logprobs: alternatives }];
}

export function createScriptedEngine(options: ScriptedEngineOptions): ScriptedEngine {
  const requests: EngineRequest[] = [];
  const loads: string[] = [];
  const replyQueue = Array.isArray(options.replies) ? [...options.replies] : null;
  const delay = options.tokenDelayMs ?? 0;
  let loaded: string | null = null;
  const vocab = new Vocabulary();
  const kv = new ScriptedCache(options.promptCache);
  // On unless `batch: false`; `true` or absent: the defaults.
  const batch = options.batch === false ? null : typeof options.batch === "object" && options.batch !== null ? options.batch : {};
  const scheduler = batch ? new StepScheduler({ maxRows: batch.maxRows ?? 8, prefillChunkTokens: batch.prefillChunkTokens ?? 256, cost: batch.cost ?? WEIGHT_BOUND_COST }) : null;
  // The step's forward: the scripted engine only takes its token delay, once per step for every row.
  const runner = scheduler ? new StepRunner(scheduler, () => (delay > 0 ? sleep(delay) : Promise.resolve())) : null;
  let rowCount = 0;
  const deviceCost = options.device ? profileCost(options.device.verifyCostPerToken) : null;

  function nextReply(request: EngineRequest): Exclude<ScriptedReply, string> {
    let reply: ScriptedReply | undefined;
    if (replyQueue) {
      reply = replyQueue.shift();
      if (reply === undefined) throw new ApiError({ status: 500, code: "scripted_engine_exhausted", message: "The scripted engine has no replies left: give createScriptedEngine more `replies`, or a function." });
    } else {
      reply = (options.replies as (r: EngineRequest) => ScriptedReply)(request);
    }
    return typeof reply === "string" ? { text: reply } : reply;
  }

  async function* generate(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
    requests.push(structuredClone(request));
    if (loaded !== request.model) throw new ApiError({ status: 500, message: `Model ${request.model} is not loaded.` });
    const record = currentRecord;
    const window = record ? contextWindowOf(record) : 4096;
    // A raw prompt (/completions) is tokenized as is, without the chat template (as web-llm's completion API).
    const rendered = request.rawPrompt !== undefined ? renderRawPrompt(request.rawPrompt, vocab) : renderPrompt(request.messages, request.continueFinalMessage, vocab);
    // A continued reply is prefilled right after the prompt, as web-llm's completion of the rendered prompt + reply.
    const continued = request.continueReply ? vocab.encode(scriptedTokens(request.continueReply)) : [];
    const prompt = continued.length > 0 ? { ...rendered, ids: [...rendered.ids, ...continued] } : rendered;
    const promptTokens = prompt.ids.length;
    if (promptTokens >= window) {
      kv.clear();
      throw new ApiError({ status: 400, code: "context_length_exceeded", param: request.rawPrompt !== undefined ? "prompt" : "messages", message: `The prompt is ${promptTokens} tokens; this model's context window is ${window} tokens. Shorten the conversation.` });
    }
    const reply = nextReply(request);
    const maxTokens = Math.min(request.sampling.max_tokens - continued.length, window - promptTokens);
    // Asked before the turn begins: the turn may take over the sequence that holds a previous reply.
    const cachedReplies = request.speculative === false ? [] : kv.continuations(request, prompt);
    const turn = kv.begin(request, prompt);
    // Batching: the row's passes are steps shared with every generation in flight. Bounded by one pass per
    // token plus the end-of-text one, so the scheduler never removes it before the engine does.
    const row = runner?.join({ id: `row${++rowCount}`, owner: request.owner ?? "app", promptTokens: promptTokens - turn.cached, maxTokens: Math.max(1, maxTokens + 1) }) ?? null;
    try {
      yield* decode(request, reply, prompt.ids, maxTokens, turn, cachedReplies, signal, continued.length, row);
    } finally {
      // An error, or a consumer that stopped listening: what the sequence holds is not known.
      if (!turn.settled) kv.drop(turn);
      // (No-op when the row already left.) An error or an abandoned stream frees the row at once.
      row?.leave();
    }
  }

  function pace(signal: AbortSignal): Promise<void> {
    return delay > 0 ? sleep(delay, signal) : Promise.resolve();
  }

  async function* decode(request: EngineRequest, reply: Exclude<ScriptedReply, string>, promptIds: number[], maxTokens: number, turn: CacheTurn, cachedReplies: number[][], signal: AbortSignal, continuedTokens = 0, row: BatchRow | null = null): AsyncGenerator<EngineEvent> {
    const record = currentRecord;
    const promptTokens = promptIds.length - continuedTokens;
    const cachedTokens = turn.cached;
    // As web-llm: thinking off writes its empty block into a chat reply (counted toward max_tokens); a script that starts with it gets no second one.
    const offBlock = !request.thinking.enabled && !request.continueFinalMessage && request.rawPrompt === undefined && usesEnableThinking(request.model, record?.family) && !reply.text.startsWith(WEBLLM_THINKING_OFF);
    const tokens = remainderOf(scriptedTokens(offBlock ? WEBLLM_THINKING_OFF + reply.text : reply.text), request.continueReply);
    const ids = vocab.encode(tokens);
    const prediction = request.prediction !== undefined ? vocab.encode(scriptedTokens(request.prediction)) : undefined;
    const speculation = new ScriptedSpeculation(
      ids,
      request.speculative === false ? null : { prompt: promptIds, cachedReplies, ...(prediction ? { prediction } : {}) },
      prediction?.length,
      deviceCost ? { cost: deviceCost } : {},
    );
    /** The reply's ids emitted so far (what drafts are looked up from). */
    const fedIds: number[] = [];
    let output = "";
    // Jump-forward, mirrored: the call markup a tool-call grammar forces next, but its last token (it may merge with what follows).
    const forcedTokens = request.speculative !== false && request.responseFormat?.type === "structural_tag" ? () => forcedDraft(scriptedForcedText(request.responseFormat, output), (text) => vocab.encode(scriptedTokens(text))) : undefined;
    let ended = reply.finish !== "length";
    let emitted = 0;
    let finish: "stop" | "length" | "abort" = reply.finish ?? "stop";
    const stops = request.sampling.stop;
    const started = performance.now();
    for (const token of tokens) {
      if (signal.aborted) {
        finish = "abort";
        break;
      }
      if (reply.error && emitted === (reply.errorAfterTokens ?? 0)) throw reply.error;
      if (emitted >= maxTokens) {
        finish = "length";
        ended = false;
        break;
      }
      const needsPass = speculation.next(fedIds, maxTokens - emitted, forcedTokens);
      if (row) {
        // A token that needs a forward pass waits for the next shared step (which takes the token delay), a verify
        // row with its draft's tokens; one left over from a verify pass is a generated token with no step of its
        // own, paced as one-at-a-time decoding paces it.
        if (needsPass && !(await row.pass(signal, 1 + speculation.lastDraft))) {
          finish = "abort";
          break;
        }
        if (!needsPass) {
          row.served();
          await pace(signal);
        }
      }
      // Like a real engine: the token that completes a stop sequence is generated, then generation ends.
      const candidate = output + token;
      const hit = firstStop(candidate, stops, output.length);
      output = candidate;
      fedIds.push(ids[emitted]);
      emitted++;
      yield { type: "text", text: token, ...(request.topLogprobs !== undefined ? { logprobs: fakeLogprobs(token, request.topLogprobs) } : {}) };
      if (hit >= 0) {
        output = candidate.slice(0, hit);
        finish = "stop";
        ended = false;
        break;
      }
      if (!row) await pace(signal);
    }
    if (reply.error && emitted === (reply.errorAfterTokens ?? 0) && finish !== "abort") throw reply.error;
    // The end-of-text token takes a pass (a shared step when batching) unless a verify pass produced it.
    // (When a verify pass produced it, it is a generated token all the same.)
    const endOfText = finish === "stop" && ended;
    if (endOfText) {
      const needsPass = speculation.end(fedIds);
      if (row && needsPass) await row.pass(signal);
      else row?.served();
    }
    const batch = row?.leave();
    // The last sampled token is never fed back. Aborted before the first token: stopped inside prefill, contents uncertain.
    if (finish === "abort" && emitted === 0) kv.drop(turn);
    else kv.finish(turn, request, [...promptIds, ...vocab.encode(tokens.slice(0, Math.max(emitted - 1, 0)))], (request.continueReply ?? "") + output, finish);
    const seconds = Math.max((performance.now() - started) / 1000, 1e-6);
    yield {
      type: "done",
      finish,
      usage: {
        promptTokens,
        cachedTokens,
        completionTokens: continuedTokens + emitted,
        ...(continuedTokens > 0 ? { continuedTokens } : {}),
        // What the scheduler counts as generated: every emitted token, and the end-of-text one when sampled.
        sampledTokens: emitted + (endOfText ? 1 : 0),
        prefillTokensPerS: (promptTokens + continuedTokens - cachedTokens) / 1e-3,
        decodeTokensPerS: emitted / seconds,
        ...speculation.usage(fedIds),
        ...(batch ? { batch: { maxRows: batch.max_rows, meanRows: batch.mean_rows, passes: batch.passes } } : {}),
      },
    };
  }

  let currentRecord: ModelRecord | null = null;
  /** The embedding model, resident next to the chat model (loading one never unloads the other). */
  let embeddingRecord: ModelRecord | null = null;
  const embeds: EmbedRequest[] = [];

  async function loadEmbedding(record: ModelRecord, loadOptions: LoadOptions) {
    if (embeddingRecord?.model_id === record.model_id) return;
    if (loadOptions.exclusive) {
      loaded = null;
      currentRecord = null;
      kv.clear();
    }
    loads.push(record.model_id);
    const steps = 4;
    for (let i = 1; i <= steps; i++) {
      if (loadOptions.signal?.aborted) throw abortError();
      if (options.loadDelayMs) await sleep(options.loadDelayMs / steps, loadOptions.signal);
      loadOptions.onProgress?.({ phase: "load", loadedBytes: (250_000 * i) / steps, totalBytes: 250_000, fraction: i / steps, etaS: 0, file: null });
    }
    embeddingRecord = record;
  }

  // A function cannot cross to a worker: an engine with its own `embed` stays in this thread.
  // A batch option crosses without a cost model of its own (functions do not); the default cost is rebuilt there.
  const serializable = Array.isArray(options.replies) && options.replies.every((r) => typeof r === "string") && !options.embed && !batch?.cost;
  return {
    requests,
    loads,
    spec: serializable
      ? { kind: "scripted", replies: [...(options.replies as string[])], tokenDelayMs: options.tokenDelayMs, loadDelayMs: options.loadDelayMs, embedDelayMs: options.embedDelayMs, promptCache: options.promptCache, batch: batch ? { maxRows: batch.maxRows, prefillChunkTokens: batch.prefillChunkTokens } : false, ...(options.device ? { device: { ...options.device } } : {}) }
      : null,
    get loadedModel() {
      return loaded;
    },
    ...(scheduler ? { batchRows: batch?.maxRows ?? 8 } : { oneAtATime: "scripted engine without the batch option" }),
    batchCounters: () => scheduler?.counters() ?? null,
    continuesReply: (request: EngineRequest) => canContinue(request, scriptedTokens(request.continueReply ?? "").length),
    embeds,
    get loadedEmbeddingModel() {
      return embeddingRecord?.model_id ?? null;
    },
    async embed(request: EmbedRequest, signal: AbortSignal) {
      embeds.push(structuredClone(request));
      if (embeddingRecord?.model_id !== request.model) throw new ApiError({ status: 500, message: `Embedding model ${request.model} is not loaded.` });
      if (signal.aborted) throw abortError();
      if (options.embedDelayMs) await sleep(options.embedDelayMs, signal);
      if (signal.aborted) throw abortError();
      return scriptedEmbed(embeddingRecord, request, (text) => scriptedTokens(text).length, options.embed);
    },
    checkEmbedInputs(request: EmbedRequest) {
      if (embeddingRecord?.model_id !== request.model) throw new ApiError({ status: 500, message: `Embedding model ${request.model} is not loaded.` });
      checkScriptedInputs(embeddingRecord, request, (text) => scriptedTokens(text).length);
    },
    async load(record: ModelRecord, loadOptions: LoadOptions) {
      if (isEmbeddingRecord(record)) return loadEmbedding(record, loadOptions);
      if (loadOptions.exclusive) embeddingRecord = null;
      if (loaded === record.model_id) return;
      loads.push(record.model_id);
      const total = 1_000_000;
      const steps = 4;
      for (let i = 1; i <= steps; i++) {
        if (loadOptions.signal?.aborted) throw abortError();
        if (options.loadDelayMs) await sleep(options.loadDelayMs / steps, loadOptions.signal);
        loadOptions.onProgress?.({ phase: "load", loadedBytes: (total * i) / steps, totalBytes: total, fraction: i / steps, etaS: 0, file: null });
      }
      loaded = record.model_id;
      currentRecord = record;
      kv.configure(loadOptions.promptCache, contextWindowOf(record));
    },
    async unload() {
      embeddingRecord = null;
      loaded = null;
      currentRecord = null;
      kv.clear();
    },
    generate,
    async countTokens(request: EngineRequest) {
      return renderPrompt(request.messages, request.continueFinalMessage, vocab).ids.length;
    },
  };
}

/**
 * The script's tokens after a continued start: the rest of the reply when it
 * begins with that text (a resumed reply goes on as it would have), the whole
 * reply otherwise (a script that differs from what was generated before).
 */
function remainderOf(tokens: string[], continued: string | undefined): string[] {
  if (!continued) return tokens;
  let text = "";
  for (let i = 0; i < tokens.length; i++) {
    if (text === continued) return tokens.slice(i);
    text += tokens[i];
    if (!continued.startsWith(text)) return tokens;
  }
  return text === continued ? [] : tokens;
}

function firstStop(text: string, stops: string[], searchFrom: number): number {
  let best = -1;
  for (const stop of stops) {
    const at = text.indexOf(stop, Math.max(0, searchFrom - stop.length + 1));
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  return best;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
