/**
 * The real engine: web-llm's MLCEngine, created in this (worker) thread and
 * driven through its public chat API with messages already shaped by the
 * family. Works with web-llm 0.2.79 through 0.2.86 (webllm-compat.ts).
 *
 * - load → `engine.reload(model_id, {conv_config})` with an appConfig holding
 *   just this record and the cache backend; progress mapped by webllm-progress.ts.
 * - generate → streamed `chat.completions.create` (or, to continue a final
 *   assistant message, which web-llm's chat refuses, `completions.create` with
 *   the prompt rendered from the model's conversation template; a raw prompt,
 *   `rawPrompt`, goes to `completions.create` as is). Abort →
 *   `interruptGenerate()` and the iterator's `return()`, which releases
 *   web-llm's per-model lock.
 * - speculative decoding: speculative/webllm-speculative.ts verifies n-gram
 *   drafts in one pass inside web-llm's decode step (attached by the cache
 *   slot, below the prompt cache); its pass and draft counts join the usage.
 * - prompt caching: prompt-cache/webllm-cache-slot.ts hooks each loaded
 *   chat pipeline (prompt-cache/webllm-binding.ts); usage counts (prompt,
 *   cached) are read from the pipeline's filled KV length.
 * - reload/unload never run under a generation: the host's queue runs one
 *   thing at a time, and this adapter keeps no background work.
 *
 * - embeddings: an embedding model (model_type 1) loads next to the chat
 *   model in the same MLCEngine (web-llm keeps several pipelines); see
 *   webllm-embed.ts. Adding the second one uses `reloadInternal`, which adds a
 *   model without unloading the other; replacing one reloads both with
 *   `reload([chat, embedding])` (web-llm's reload always unloads everything).
 *
 * web-llm internals read (guarded; absent → graceful fallback):
 * `loadedModelIdToPipeline` (tokenizer, filledKVCacheLength, logitProcessor)
 * and `loadedModelIdToChatConfig` (conversation template).
 */
import { ApiError, abortError } from "../protocol/api-error.js";
import type { PromptCacheOption, PromptCacheSettings } from "./prompt-cache/config.js";
import type { TokenLogprob, TopLogprob } from "../protocol/types.js";
import type { ModelRecord } from "../models/record.js";
import type { EmbedRequest, Engine, EngineEvent, EngineRequest, LoadOptions } from "./types.js";
import { isEmbeddingRecord } from "../models/embedding.js";
import { checkWebLlmEmbedInputs, embedWithWebLlm, type WebLlmEmbeddingPipeline, type WebLlmEmbeddings } from "./webllm-embed.js";
import { cacheConfig, detectWebLlmCompat, type WebLlmCompat, type WebLlmModuleShape } from "./webllm-compat.js";
import { mapWebLlmError } from "./webllm-errors.js";
import { WebLlmCacheSlot } from "./prompt-cache/webllm-cache-slot.js";
import { WebLlmSpeculativeSlot } from "./speculative/webllm-speculative-slot.js";
import { RequestLogitProcessor, type LogitControls } from "./webllm-logits.js";
import { createProgressMapper, type WebLlmProgressReport } from "./webllm-progress.js";
import {
  needsLogitProcessor,
  renderContinuationPrompt,
  toChatRequest,
  toCompletionRequest,
  usesEnableThinking,
  WEBLLM_MAX_TOP_LOGPROBS,
  type ConvTemplate,
} from "./webllm-request.js";
import { importWebLlm } from "./import-webllm.js";
import { countWebLlmPromptTokens } from "./webllm-count.js";
import { canContinue, continuedRequest } from "./continuation.js";

/** The slice of web-llm's MLCEngine this adapter uses (the same in 0.2.79 and 0.2.86). */
export interface WebLlmEngineLike {
  setAppConfig(appConfig: unknown): void;
  setInitProgressCallback(callback: (report: WebLlmProgressReport) => void): void;
  setLogitProcessorRegistry?(registry: Map<string, unknown>): void;
  reload(modelId: string | string[], chatOpts?: unknown): Promise<void>;
  /** Internal in 0.2.79–0.2.86: loads one more model without unloading the others (what `reload` loops over). */
  reloadInternal?(modelId: string, chatOpts?: unknown): Promise<void>;
  embeddings?: WebLlmEmbeddings;
  unload(): Promise<void>;
  interruptGenerate(): void;
  resetChat(...args: unknown[]): Promise<void>;
  getMessage(modelId?: string): Promise<string>;
  chat: { completions: { create(body: unknown): Promise<AsyncIterable<WebLlmChunk>> } };
  completions: { create(body: unknown): Promise<AsyncIterable<WebLlmChunk>> };
}

/** The slice of the web-llm module this adapter uses. */
export interface WebLlmModule extends WebLlmModuleShape {
  MLCEngine: new (config?: Record<string, unknown>) => WebLlmEngineLike;
}

interface WebLlmLogprob {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: Array<{ token: string; logprob: number; bytes?: number[] | null }>;
}

/** A streamed chunk of either API. */
export interface WebLlmChunk {
  choices: Array<{
    delta?: { content?: string | null };
    text?: string;
    finish_reason?: string | null;
    logprobs?: { content?: WebLlmLogprob[] | null } | null;
  }>;
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    extra?: { prefill_tokens_per_s?: number; decode_tokens_per_s?: number; time_to_first_token_s?: number; e2e_latency_s?: number };
  };
}

interface Pipeline {
  tokenizer?: { encode(text: string): ArrayLike<number>; decode(ids: Int32Array): string };
  filledKVCacheLength?: number;
  logitProcessor?: unknown;
}

export interface WebLlmEngineOptions {
  /** The web-llm module, or how to get it; default `import("@mlc-ai/web-llm")`. */
  webllm?: WebLlmModule | (() => Promise<WebLlmModule>);
  /** web-llm's log level; default "WARN". */
  logLevel?: string;
  /** Prompt caching (engine/prompt-cache/config.ts); the host's load options win. */
  promptCache?: PromptCacheOption | PromptCacheSettings;
}

/** The web-llm engine as the host sees it. */
export interface WebLlmEngine extends Engine {
  readonly requiresGpu: true;
  /** What was detected about the running web-llm (null before the first load). */
  readonly compat: WebLlmCompat | null;
  /**
   * Whether this web-llm reads the cache layout our downloader writes
   * (`tensor-cache.json`, `mlc-chat-config.json` stored as bytes: 0.2.80 on).
   * ≤ 0.2.79 reads `ndarray-cache.json` and a parsed config object, so the
   * host skips its downloader there and web-llm fetches the files itself.
   */
  acceptsPrefetch(): Promise<boolean>;
}

/** fields of our ModelRecord that web-llm's appConfig understands; the rest (family, our integrity map…) stays out. */
// model_manifest: web-llm 0.2.86's package manifest, which turns on its image/audio adapters (Gemma 4); older web-llm ignores it.
const WEBLLM_RECORD_FIELDS = ["model", "model_id", "model_lib", "overrides", "vram_required_MB", "low_resource_required", "required_features", "buffer_size_required_bytes", "model_type", "model_manifest"];

/** web-llm's `ModelRecord` for one of ours. */
export function toWebLlmRecord(record: ModelRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of WEBLLM_RECORD_FIELDS) if (record[key] !== undefined) out[key] = record[key];
  return out;
}

export function createWebLlmEngine(options: WebLlmEngineOptions = {}): WebLlmEngine {
  let module: WebLlmModule | null = null;
  let engine: WebLlmEngineLike | null = null;
  let compat: WebLlmCompat | null = null;
  let loaded: string | null = null;
  let loadedKey = "";
  let record: ModelRecord | null = null;
  /** The resident embedding model, next to the chat model. */
  let embedding: { id: string; key: string; record: ModelRecord } | null = null;
  /** The chat model's reload options, to reload it together with an embedding model. */
  let chatOpts: Record<string, unknown> | undefined;
  /** The embedding request whose inputs checkEmbedInputs last counted (all of one request's inputs). */
  let counted: EmbedRequest | null = null;
  const cache = new WebLlmCacheSlot(options.promptCache, new WebLlmSpeculativeSlot());
  const registry = new Map<string, RequestLogitProcessor>();

  async function getModule(): Promise<WebLlmModule> {
    if (module) return module;
    const given = options.webllm;
    module = typeof given === "function" ? await given() : (given ?? ((await importWebLlm()) as unknown as WebLlmModule));
    compat = detectWebLlmCompat(module);
    return module;
  }

  const internals = () => engine as unknown as { loadedModelIdToPipeline?: Map<string, Pipeline>; loadedModelIdToChatConfig?: Map<string, { conv_template?: ConvTemplate; conv_config?: Partial<ConvTemplate> }> };
  const pipelineOf = (modelId: string): Pipeline | undefined => internals().loadedModelIdToPipeline?.get(modelId);

  async function load(next: ModelRecord, loadOptions: LoadOptions): Promise<void> {
    if (isEmbeddingRecord(next)) return loadEmbedding(next, loadOptions);
    const key = JSON.stringify([next.model_id, next.model, next.model_lib, loadOptions.convConfig ?? null, loadOptions.cacheBackend ?? "indexeddb"]);
    if (loaded === next.model_id && key === loadedKey) return;
    if (loadOptions.signal?.aborted) throw abortError();
    const webllm = await getModule();
    engine ??= new webllm.MLCEngine({ logLevel: options.logLevel ?? "WARN", logitProcessorRegistry: registry });
    const processor = registry.get(next.model_id) ?? new RequestLogitProcessor();
    registry.clear();
    registry.set(next.model_id, processor);
    engine.setLogitProcessorRegistry?.(registry);
    let appCache: Record<string, unknown>;
    try {
      appCache = cacheConfig(compat as WebLlmCompat, loadOptions.cacheBackend ?? "indexeddb");
    } catch (error) {
      throw new ApiError({ status: 400, code: "unsupported_cache", param: "cache", message: (error as Error).message });
    }
    engine.setAppConfig({ model_list: [next, ...(embedding && !loadOptions.exclusive ? [embedding.record] : [])].map(toWebLlmRecord), ...appCache });
    const mapProgress = createProgressMapper();
    engine.setInitProgressCallback((report) => loadOptions.onProgress?.(mapProgress(report)));
    const hadChat = loaded !== null;
    loaded = null;
    loadedKey = "";
    record = null;
    cache.forget();
    const opts = loadOptions.convConfig ? { conv_config: loadOptions.convConfig } : undefined;
    // An embedding model stays: added to when no chat model is resident, reloaded with the new one otherwise.
    const resident = loadOptions.exclusive ? null : embedding;
    if (loadOptions.exclusive) embedding = null;
    await runReload(loadOptions.signal, (live) =>
      !resident
        ? live.reload(next.model_id, opts)
        : !hadChat && live.reloadInternal
          ? addModel(live, next.model_id, opts)
          : live.reload([next.model_id, resident.id], [opts ?? {}, {}]),
    );
    chatOpts = opts;
    // Bound at reload; detached again when reachable so requests that need none pay no logits copy per token.
    const pipeline = pipelineOf(next.model_id);
    if (pipeline && "logitProcessor" in pipeline) pipeline.logitProcessor = undefined;
    cache.attach(pipeline, loadOptions.promptCache);
    loaded = next.model_id;
    loadedKey = key;
    record = next;
  }

  /**
   * Runs a reload. web-llm's reload has no signal; unload() aborts it (and
   * drops every model, so both slots are cleared on abort or failure).
   */
  async function runReload(signal: AbortSignal | undefined, reload: (live: WebLlmEngineLike) => Promise<void>): Promise<void> {
    const live = engine as WebLlmEngineLike;
    const onAbort = () => void live.unload().catch(() => undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    const forgetAll = () => {
      loaded = null;
      loadedKey = "";
      record = null;
      embedding = null;
    };
    try {
      await reload(live);
    } catch (error) {
      forgetAll();
      await live.unload().catch(() => undefined);
      if (signal?.aborted) throw abortError();
      throw mapWebLlmError(error, "load");
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal?.aborted) {
      forgetAll();
      await live.unload().catch(() => undefined);
      throw abortError();
    }
  }

  /** One more model next to the loaded one, the way web-llm's reload loads each of its list (with its abort controller). */
  async function addModel(live: WebLlmEngineLike, modelId: string, opts: unknown): Promise<void> {
    const internal = live as unknown as { reloadController?: AbortController };
    internal.reloadController = new AbortController();
    try {
      await (live.reloadInternal as NonNullable<WebLlmEngineLike["reloadInternal"]>)(modelId, opts);
    } finally {
      internal.reloadController = undefined;
    }
  }

  async function loadEmbedding(next: ModelRecord, loadOptions: LoadOptions): Promise<void> {
    const key = JSON.stringify([next.model_id, next.model, next.model_lib, loadOptions.cacheBackend ?? "indexeddb"]);
    if (embedding?.id === next.model_id && embedding.key === key) return;
    if (loadOptions.signal?.aborted) throw abortError();
    const webllm = await getModule();
    engine ??= new webllm.MLCEngine({ logLevel: options.logLevel ?? "WARN", logitProcessorRegistry: registry });
    let appCache: Record<string, unknown>;
    try {
      appCache = cacheConfig(compat as WebLlmCompat, loadOptions.cacheBackend ?? "indexeddb");
    } catch (error) {
      throw new ApiError({ status: 400, code: "unsupported_cache", param: "cache", message: (error as Error).message });
    }
    engine.setAppConfig({ model_list: [...(record && !loadOptions.exclusive ? [record] : []), next].map(toWebLlmRecord), ...appCache });
    const mapProgress = createProgressMapper();
    engine.setInitProgressCallback((report) => loadOptions.onProgress?.(mapProgress(report)));
    const hadEmbedding = embedding !== null;
    embedding = null;
    if (loadOptions.exclusive && loaded) {
      // Both do not fit: the chat model goes, and comes back (alone) at the next chat request.
      loaded = null;
      loadedKey = "";
      record = null;
      cache.forget();
    }
    const chat = loaded;
    await runReload(loadOptions.signal, (live) => {
      if (!chat) return live.reload(next.model_id);
      if (!hadEmbedding && live.reloadInternal) return addModel(live, next.model_id, undefined);
      // Replacing the embedding model unloads everything: the chat model comes back with it (its KV cache does not).
      cache.forget();
      return live.reload([chat, next.model_id], [chatOpts ?? {}, {}]).then(() => cache.attach(pipelineOf(chat)));
    });
    embedding = { id: next.model_id, key, record: next };
  }

  function armProcessor(request: EngineRequest): RequestLogitProcessor | null {
    if (!needsLogitProcessor(request)) return null;
    const processor = registry.get(request.model);
    if (!processor) return null;
    const pipeline = pipelineOf(request.model);
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

  function disarmProcessor(request: EngineRequest, processor: RequestLogitProcessor | null): void {
    if (!processor) return;
    processor.end();
    const pipeline = pipelineOf(request.model);
    if (pipeline && "logitProcessor" in pipeline) pipeline.logitProcessor = undefined;
  }

  function continuationPrompt(request: EngineRequest): string {
    const config = internals().loadedModelIdToChatConfig?.get(request.model);
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
  function continuesReply(request: EngineRequest): boolean {
    const tokenizer = pipelineOf(request.model)?.tokenizer;
    const textOnly = request.messages.every((m) => typeof m.content === "string" || m.content.every((part) => part.type === "text"));
    if (!tokenizer || !textOnly || !internals().loadedModelIdToChatConfig?.get(request.model)?.conv_template) return false;
    return canContinue(request, tokenizer.encode(request.continueReply ?? "").length);
  }

  /** `request` as web-llm receives it when it continues a reply (engine/continuation.ts), and the start's tokens. */
  function continuation(request: EngineRequest): { request: EngineRequest; tokens: number } | null {
    if (!request.continueReply) return null;
    const tokens = pipelineOf(request.model)?.tokenizer?.encode(request.continueReply).length ?? 0;
    return { tokens, request: continuedRequest(request, tokens) };
  }

  async function* generate(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
    if (!engine || loaded !== request.model || !record) {
      throw new ApiError({ status: 500, code: "model_not_loaded", message: `Model ${request.model} is not loaded in the web-llm engine.` });
    }
    if (signal.aborted) throw abortError();
    const live = engine;
    const continued = continuation(request);
    if (continued) request = continued.request;
    await cache.beforeRequest(() => live.resetChat(false, request.model));
    cache.begin(request);
    const processor = armProcessor(request);
    let iterator: AsyncIterator<WebLlmChunk> | null = null;
    let finished = false;
    const onAbort = () => live.interruptGenerate();
    signal.addEventListener("abort", onAbort);
    try {
      // A raw prompt (/completions) and a continued final message go to web-llm's completion API (no chat template).
      const stream = request.rawPrompt !== undefined || request.continueFinalMessage
        ? await live.completions.create(withModel(toCompletionRequest(request, request.rawPrompt ?? continuationPrompt(request)), request.model))
        : await live.chat.completions.create(withModel(toChatRequest(request, { enableThinkingSwitch: usesEnableThinking(request.model, record.family), structuralTags: compat?.structuralTags }), request.model));
      iterator = stream[Symbol.asyncIterator]();
      let finish: "stop" | "length" | "abort" = "stop";
      let usage: WebLlmChunk["usage"];
      let logprobIndex = 0;
      const pipeline = pipelineOf(request.model);
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
        loaded = null;
        loadedKey = "";
        embedding = null;
        cache.forget();
      }
      throw mapped;
    } finally {
      signal.removeEventListener("abort", onAbort);
      disarmProcessor(request, processor);
      // Leaving early (consumer stopped, error) must still release web-llm's model lock.
      if (iterator && !finished) await iterator.return?.().catch(() => undefined);
    }
  }

  /** The resident embedding model `modelId` (500 when it is not the one loaded). */
  function residentEmbedding(modelId: string): { id: string; record: ModelRecord } {
    if (!engine || !embedding || embedding.id !== modelId) {
      throw new ApiError({ status: 500, code: "model_not_loaded", message: `Embedding model ${modelId} is not loaded in the web-llm engine.` });
    }
    return embedding;
  }

  /** With two models resident web-llm needs the request to name one. */
  function withModel(body: Record<string, unknown>, model: string): Record<string, unknown> {
    return embedding ? { ...body, model } : body;
  }

  return {
    requiresGpu: true,
    // The batch functions of the model library are not bound yet (issue 38): web-llm's own decode takes one sequence.
    oneAtATime: "the web-llm engine decodes one sequence at a time in this version",
    embedsTokenIds: true,
    continuesReply,
    countTokens: async (request) => countWebLlmPromptTokens(pipelineOf(request.model)?.tokenizer, request),
    get loadedEmbeddingModel() {
      return embedding?.id ?? null;
    },
    checkEmbedInputs(request) {
      const resident = residentEmbedding(request.model);
      checkWebLlmEmbedInputs(pipelineOf(request.model) as WebLlmEmbeddingPipeline | undefined, resident.record, request);
      counted = request;
    },
    async embed(request, signal) {
      const resident = residentEmbedding(request.model);
      // A batch of the request the host just had counted is not tokenized again.
      const precounted = counted !== null && counted.model === request.model && request.input.every((item, i) => item === counted!.input[request.firstIndex + i]);
      try {
        return await embedWithWebLlm(engine!, pipelineOf(request.model) as WebLlmEmbeddingPipeline | undefined, resident.record, request, signal, precounted);
      } catch (error) {
        const mapped = error instanceof ApiError || (error as Error)?.name === "AbortError" ? error : mapWebLlmError(error, "generate");
        if (mapped instanceof ApiError && mapped.code === "device_lost") {
          loaded = null;
          loadedKey = "";
          embedding = null;
        }
        throw mapped;
      }
    },
    get compat() {
      return compat;
    },
    get loadedModel() {
      return loaded;
    },
    async acceptsPrefetch() {
      await getModule();
      return compat?.cacheOption === "cacheBackend" && compat.tensorCacheFile === "tensor-cache.json";
    },
    async holdsModel(model, cacheBackend) {
      const webllm = (await getModule()) as WebLlmModule & { hasModelInCache?: (id: string, appConfig: unknown) => Promise<boolean> };
      if (!webllm.hasModelInCache || !compat) return false;
      const appConfig = { model_list: [toWebLlmRecord(model)], ...cacheConfig(compat, cacheBackend ?? "indexeddb") };
      return webllm.hasModelInCache(model.model_id, appConfig).catch(() => false);
    },
    load,
    generate,
    async unload() {
      loaded = null;
      loadedKey = "";
      record = null;
      embedding = null;
      cache.forget();
      await engine?.unload().catch(() => undefined);
    },
  };
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
