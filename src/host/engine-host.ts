/**
 * EngineHost: the whole request pipeline, and nothing about workers. In Node
 * and in tests it runs in-process; in the browser worker/entry.ts exposes it
 * with comlink.
 *
 *   validate → resolve model (+ GPU checks) → queue → load → shape prompt for
 *   the family → engine.generate → parse → chunks / completion
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import { validateRequest, type NormalizedMessage, type NormalizedRequest } from "../protocol/validate.js";
import { ChoiceBuilder } from "../protocol/choice-builder.js";
import { choiceOutput, type GenerationOutput, type GenerationResult, type SentBackReply } from "./generation-output.js";
import { ResponsesFace } from "./responses-face.js";
import { DEFAULT_MAX_RESPONSES, ResponseStore } from "./response-store.js";
import { compactConversation } from "./responses-compact.js";
import type { CompactResource } from "../protocol/responses/compact.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { newCompletionId, newRequestId } from "../protocol/ids.js";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChunkDelta,
  FinishReason,
  ModelList,
  ModelObject,
  ReasoningEffort,
  Usage,
  WebGpuStats,
} from "../protocol/types.js";
import type { Engine, EngineRequest, EngineUsage, LoadProgress } from "../engine/types.js";
import { createCatalog, type Catalog } from "../models/catalog.js";
import { loadPrebuiltRecords } from "../models/prebuilt.js";
import { contextWindowOf, quantizationOf, type ModelRecord } from "../models/record.js";
import { hasPackageManifest, modelInputs, type ModelInputs } from "../models/inputs.js";
import { checkInputKinds } from "./input-kinds.js";
import { checkAudioLimits, hasAudio, prepareAudio } from "./audio-input.js";
import { familyOf } from "../families/registry.js";
import type { Family, PromptContext } from "../families/types.js";
import { probeGpu, type GpuProbe } from "../gpu/probe.js";
import { checkDeviceFit, deviceMemoryGb, fitsTogether } from "../gpu/fit.js";
import { createRecordEngine } from "../engine/scripted-record.js";
import { RequestQueue } from "./queue.js";
import { ConversationMemory } from "./conversation-memory.js";
import { StopGuard } from "./stop-guard.js";
import { composeProgress } from "../cache/progress.js";
import type { CacheManager, CachedModel, CacheUsage } from "../cache/manager.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";
import { embeddingDimensionsOf, embeddingWindowOf, isEmbeddingRecord } from "../models/embedding.js";
import { createEmbeddings, notAChatModel, type EmbeddingsContext } from "./embeddings.js";
import { load } from "../lazy-imports.js";
import { promptCacheSettings, type PromptCacheOption, type PromptCacheSettings } from "../engine/prompt-cache/config.js";
import { addCompletionDetails, addDecodeCounts, decodeCounts, predictionDetails } from "./decode-report.js";
import { createTranscription, streamTranscription, type ChatFace } from "./transcriptions.js";
import type { Transcription, TranscriptionStreamEvent } from "../protocol/transcription-types.js";

export interface EngineHostOptions {
  /** Default: the web-llm engine (loaded on first use). */
  engine?: Engine;
  /** Extra or replacement model records; replace prebuilt ones with the same id. */
  models?: ModelRecord[];
  /** Waiting requests beyond this → 429. Default 16. */
  maxQueue?: number;
  /** A request that runs longer than this (queue included) fails with 504. */
  timeoutMs?: number;
  cache?: "indexeddb" | "cache" | "opfs";
  onProgress?: (progress: LoadProgress) => void;
  /** How the adapter is probed; replaceable in tests. */
  probeGpu?: () => Promise<GpuProbe>;
  /** Responses kept in memory for previous_response_id / retrieve (least recently used evicted). Default 100. */
  responsesStore?: { maxResponses?: number };
  /** The device's memory in GB; default `navigator.deviceMemory` (replaceable in tests). */
  deviceMemoryGb?: number;
  /** Prompt caching: `false` turns it off; an object sets the KV budget (engine/prompt-cache/config.ts). Default on. */
  promptCache?: PromptCacheOption;
  /** Speculative decoding (engine/speculative/): `false` turns it off. Default on. */
  speculative?: boolean;
}

/** Receives a stream's chunks (chat) or events (Responses). The host calls `end` or `fail` exactly once. */
export interface ChunkSink<T = ChatCompletionChunk> {
  write(chunks: T[]): void;
  end(): void;
  fail(error: ApiError): void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * Who sent the request (a shared worker's tab): the raw text of a reply is
   * restored only for the client that received it. Absent: this host's one client.
   */
  client?: string;
}

/** Reasoning budget (tokens) per effort; `max` is bounded only by max_tokens. */
const REASONING_BUDGET: Record<Exclude<ReasoningEffort, "none">, number | undefined> = {
  minimal: 128,
  low: 512,
  medium: 2048,
  high: 8192,
  xhigh: 16384,
  max: undefined,
};

export interface Prepared {
  request: NormalizedRequest;
  record: ModelRecord;
  family: Family;
  context: PromptContext;
  engineRequest: EngineRequest;
  stats: WebGpuStats;
  started: number;
}

export class EngineHost {
  private engine: Engine | null;
  /** Engines of records that name their own (`record.engine`), by model id. */
  private readonly recordEngines = new Map<string, Engine>();
  private readonly queue: RequestQueue;
  private readonly memory = new ConversationMemory();
  private catalogPromise: Promise<Catalog> | null = null;
  private ownCatalog: Catalog | null = null;
  private gpuPromise: Promise<GpuProbe> | null = null;
  private recentHoldMs = 1000;
  private readonly responses: ResponsesFace<Prepared>;
  private readonly promptCache: PromptCacheSettings;

  constructor(private readonly options: EngineHostOptions = {}) {
    this.engine = options.engine ?? null;
    this.promptCache = promptCacheSettings(options.promptCache, options.deviceMemoryGb ?? deviceMemoryGb());
    this.queue = new RequestQueue(options.maxQueue ?? 16, () => this.recentHoldMs);
    this.responses = new ResponsesFace<Prepared>(
      { run: (request, signal, work) => this.withSlot(request, signal, work), generate: (prepared, output, signal) => this.generate(prepared, output, signal) },
      new ResponseStore(options.responsesStore?.maxResponses ?? DEFAULT_MAX_RESPONSES),
    );
  }

  // ── responses (the Responses API face: same pipeline, another output builder) ──

  createResponse(body: unknown, options: RequestOptions = {}): Promise<ResponseObject> {
    return this.responses.create(body, options.signal, options.client);
  }

  /** Resolves once generation has started; events then go to `sink` (as streamChatCompletion's chunks). */
  streamResponse(body: unknown, sink: ChunkSink<ResponseStreamEvent>, options: RequestOptions = {}): Promise<void> {
    return this.responses.stream(body, sink, options.signal, options.client);
  }

  async retrieveResponse(id: string): Promise<ResponseObject> {
    return this.responses.retrieve(id);
  }

  async deleteResponse(id: string): Promise<ResponseDeleted> {
    return this.responses.delete(id);
  }

  async listResponseInputItems(id: string, query?: InputItemListQuery): Promise<InputItemList> {
    return this.responses.inputItems(id, query);
  }

  /** `POST /responses/compact`: the model summarises the older turns into one compaction item. */
  compactResponse(body: unknown, options: RequestOptions = {}): Promise<CompactResource> {
    return compactConversation(this.responses, body, options.signal, options.client);
  }

  // ── chat completions ─────────────────────────────────────────────────────

  async createChatCompletion(body: unknown, options: RequestOptions = {}): Promise<ChatCompletion> {
    const request = { ...validateRequest(body), client: options.client };
    if (request.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createChatCompletion returns one completion; use streamChatCompletion for `stream: true`." });
    }
    return this.withSlot(request, options.signal, async (prepared, signal) => {
      const builders: ChoiceBuilder[] = [];
      const finishes: FinishReason[] = [];
      let usage: Usage | null = null;
      for (let index = 0; index < request.n; index++) {
        const builder = new ChoiceBuilder(index, () => prepared.family.newToolCallId());
        const result = await this.generate(prepared, choiceOutput(builder, () => undefined), signal);
        builders.push(builder);
        finishes.push(builder.finishReason(result.finish, result.cutCall));
        usage = addUsage(usage, result.usage);
      }
      const completion: ChatCompletion = {
        id: newCompletionId(),
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: builders.map((builder, index) => ({
          index,
          message: builder.message(),
          finish_reason: finishes[index],
          logprobs: request.topLogprobs === undefined ? null : { content: builder.collectedLogprobs(), refusal: null },
        })),
        usage: usage as Usage,
        x_webgpu: prepared.stats,
      };
      return completion;
    });
  }

  /**
   * Starts a streamed completion. Resolves once generation has started (errors
   * before that reject: bad request, unknown model, queue full, load failure,
   * prompt too long); from then on chunks go to `sink`, which ends or fails.
   */
  streamChatCompletion(body: unknown, sink: ChunkSink, options: RequestOptions = {}): Promise<void> {
    let request: NormalizedRequest;
    try {
      request = { ...validateRequest(body), client: options.client };
    } catch (error) {
      return Promise.reject(error);
    }
    if (!request.stream) request = { ...request, stream: true };
    return new Promise<void>((resolveStarted, rejectStarted) => {
      let started = false;
      const run = this.withSlot(request, options.signal, async (prepared, signal) => {
        const id = newCompletionId();
        const created = Math.floor(Date.now() / 1000);
        const chunk = (delta: ChunkDelta, finish: FinishReason | null = null, logprobs: ChatCompletionChunk["choices"][0]["logprobs"] = null): ChatCompletionChunk => ({
          id,
          object: "chat.completion.chunk",
          created,
          model: request.model,
          choices: [{ index: 0, delta, finish_reason: finish, logprobs }],
          ...(request.includeUsage ? { usage: null } : {}),
        });
        const builder = new ChoiceBuilder(0, () => prepared.family.newToolCallId());
        const wantLogprobs = request.topLogprobs !== undefined;
        const result = await this.generate(prepared, choiceOutput(builder, (deltas, logprobs) => {
          if (!started) {
            started = true;
            resolveStarted();
          }
          const chunks = deltas.map((delta, i) => chunk(delta, null, wantLogprobs && i === 0 && logprobs ? { content: logprobs, refusal: null } : null));
          if (chunks.length > 0) sink.write(chunks);
        }), signal);
        if (!started) {
          started = true;
          resolveStarted();
        }
        const tail: ChatCompletionChunk[] = [];
        const opening = builder.openingDelta();
        if (opening) tail.push(chunk(opening));
        tail.push(chunk({}, builder.finishReason(result.finish, result.cutCall)));
        if (request.includeUsage) {
          tail.push({ id, object: "chat.completion.chunk", created, model: request.model, choices: [], usage: result.usage, x_webgpu: prepared.stats });
        }
        sink.write(tail);
      });
      run.then(
        () => sink.end(),
        (error) => {
          if (!started) rejectStarted(error);
          else if (isAbortError(error)) sink.end();
          else sink.fail(ApiError.from(error));
        },
      );
    });
  }

  // ── embeddings (pipeline in host/embeddings.ts, same queue) ──────────────

  async createEmbeddings(body: unknown, options: RequestOptions = {}): Promise<CreateEmbeddingResponse> {
    const context: EmbeddingsContext = {
      resolve: async (model) => (await this.catalog()).resolve(model, await this.features()),
      records: async () => (await this.catalog()).records,
      engineFor: (record) => this.engineFor(record),
      checkDevice: (record) => this.checkDevice(record, undefined),
      inSlot: (record, signal, work) => this.inSlot(record, signal, work),
    };
    return createEmbeddings(context, body, options.signal);
  }

  // ── audio transcriptions (host/transcriptions.ts: the chat path, asked to transcribe) ──

  createTranscription(body: unknown, options: RequestOptions = {}): Promise<Transcription> {
    return createTranscription(this.chatFace(), body, options.signal);
  }

  /** Resolves once generation has started; `transcript.text.*` events then go to `sink`. */
  streamTranscription(body: unknown, sink: ChunkSink<TranscriptionStreamEvent>, options: RequestOptions = {}): Promise<void> {
    return streamTranscription(this.chatFace(), body, sink, options.signal);
  }

  private chatFace(): ChatFace {
    return {
      complete: (body, signal) => this.createChatCompletion(body, { signal }),
      stream: (body, sink, signal) => this.streamChatCompletion(body, sink, { signal }),
    };
  }

  // ── models, GPU ──────────────────────────────────────────────────────────

  async listModels(): Promise<ModelList> {
    const catalog = await this.catalog();
    return { object: "list", data: await Promise.all(catalog.records.map(async (record) => modelObject(record, await this.inputsOf(record)))) };
  }

  async retrieveModel(id: string): Promise<ModelObject> {
    const catalog = await this.catalog(id);
    const record = catalog.resolve(id, await this.features());
    return { ...modelObject(record, await this.inputsOf(record)), id };
  }

  async gpuInfo(): Promise<GpuProbe> {
    return this.gpu();
  }

  /** Loads a model ahead of the first request (downloads it if needed), with progress. */
  async loadModel(model: string, options: { onProgress?: (p: LoadProgress) => void; signal?: AbortSignal } = {}): Promise<{ model: string }> {
    const catalog = await this.catalog(model);
    const record = catalog.resolve(model, await this.features());
    await this.checkDevice(record, undefined);
    const release = await this.queue.acquire(options.signal);
    try {
      await this.ensureLoaded(record, options.onProgress, options.signal);
    } finally {
      release();
    }
    return { model: record.model_id };
  }

  /** Requests waiting and whether one runs: for tests and the demo. */
  queueState(): { waiting: number; running: boolean } {
    return { waiting: this.queue.waiting, running: this.queue.running };
  }

  // ── pipeline ─────────────────────────────────────────────────────────────

  private async withSlot<T>(request: NormalizedRequest, outerSignal: AbortSignal | undefined, work: (prepared: Prepared, signal: AbortSignal) => Promise<T>): Promise<T> {
    const arrived = performance.now();
    const catalog = await this.catalog(request.model);
    const record = catalog.resolve(request.model, await this.features());
    if (isEmbeddingRecord(record)) throw notAChatModel(record);
    const family = familyOf(record);
    const inputs = await this.inputsOf(record);
    checkInputKinds(request.messages, record.model_id, inputs);
    await this.checkDevice(record, request);
    // Audio is measured or decoded here, in the worker, before the request queues (host/audio-input.ts).
    const audio = hasAudio(request.messages);
    const messages = audio ? await prepareAudio(request.messages) : request.messages;
    if (audio && inputs.audio) checkAudioLimits(messages, inputs.audio, record.model_id);

    return this.inSlot(record, outerSignal, async (signal, started) => {
      // Limits a package declares are known once its manifest is downloaded (the first load): checked then, before generating.
      if (audio && !inputs.audio) {
        const late = (await this.inputsOf(record)).audio;
        if (late) checkAudioLimits(messages, late, record.model_id);
      }
      return work(this.prepare(request, record, family, arrived, started, messages), signal);
    });
  }

  /**
   * A queue slot with `record` loaded, for every request (chat, Responses,
   * embeddings): one queue, the timeout (504) and abort; `started` is when the
   * slot was granted (queue time ends there).
   */
  private async inSlot<T>(record: ModelRecord, outerSignal: AbortSignal | undefined, work: (signal: AbortSignal, started: number) => Promise<T>): Promise<T> {
    if (outerSignal?.aborted) throw abortError();
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(outerSignal?.reason);
    outerSignal?.addEventListener("abort", onOuterAbort, { once: true });
    let timedOut = false;
    const timer = this.options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, this.options.timeoutMs)
      : undefined;
    let release: (() => void) | null = null;
    try {
      release = await this.queue.acquire(controller.signal);
      const started = performance.now();
      await this.ensureLoaded(record, undefined, controller.signal);
      const result = await work(controller.signal, started);
      this.recentHoldMs = 0.8 * this.recentHoldMs + 0.2 * (performance.now() - started);
      return result;
    } catch (error) {
      if (timedOut) {
        throw new ApiError({ status: 504, code: "timeout", message: `The request ran longer than timeoutMs (${this.options.timeoutMs} ms) and was stopped.` });
      }
      if (error instanceof ApiError && error.code === "device_lost") await this.engine?.unload().catch(() => undefined);
      // An engine's plain Error reaches in-process callers as a 500 ApiError, as it does through the worker.
      throw isAbortError(error) ? error : ApiError.from(error);
    } finally {
      clearTimeout(timer);
      outerSignal?.removeEventListener("abort", onOuterAbort);
      release?.();
    }
  }

  /** `shaped`: the request's messages with audio prepared (what the prompt is built from); memory keys use the request's own. */
  private prepare(request: NormalizedRequest, record: ModelRecord, family: Family, arrived: number, started: number, shaped: NormalizedMessage[]): Prepared {
    const thinking = resolveThinking(family, request.reasoningEffort);
    const messages = request.messages;
    const context: PromptContext = {
      tools: request.toolChoice === "none" ? [] : request.tools,
      toolChoice: request.toolChoice,
      parallelToolCalls: request.parallelToolCalls,
      thinking: thinking.enabled,
      rawAssistantText: (message) => {
        const at = messages.indexOf(message);
        return this.memory.recall(ConversationMemory.keyOf(record.model_id, message, at > 0 ? messages[at - 1] : undefined, request.cacheKey, request.client), message);
      },
    };
    const window = contextWindowOf(record);
    const toolGrammar = family.toolGrammar(context);
    const forcedTools = request.toolChoice === "required" || typeof request.toolChoice === "object";
    const engineRequest: EngineRequest = {
      model: record.model_id,
      messages: family.shapeMessages(shaped, context),
      sampling: {
        temperature: request.temperature,
        top_p: request.top_p,
        top_k: request.top_k,
        min_p: request.min_p,
        presence_penalty: request.presence_penalty,
        frequency_penalty: request.frequency_penalty,
        repetition_penalty: request.repetition_penalty,
        logit_bias: request.logit_bias,
        seed: request.seed,
        stop: request.stop,
        max_tokens: Math.min(request.maxTokens ?? window, window),
      },
      responseFormat: forcedTools ? toolGrammar : (request.responseFormat ?? toolGrammar),
      thinking: thinking.enabled
        ? { enabled: true, budgetTokens: thinking.budget, endMarker: family.reasoning?.close }
        : { enabled: false },
      continueFinalMessage: request.continueFinalMessage,
      topLogprobs: request.topLogprobs,
      ...(request.cacheKey !== undefined ? { promptCacheKey: request.cacheKey } : {}),
      ...(request.prediction !== undefined ? { prediction: request.prediction } : {}),
      ...(this.options.speculative === false ? { speculative: false } : {}),
    };
    return {
      request,
      record,
      family,
      context,
      engineRequest,
      started,
      stats: { request_id: newRequestId(), queue_ms: Math.round(started - arrived), ttft_ms: 0, prefill_tokens_per_s: 0, decode_tokens_per_s: 0, prefill_tokens: 0, decode_passes: 0, draft_tokens: 0, accepted_draft_tokens: 0 },
    };
  }

  /** Runs one choice through the engine and the family's parser; its events go to `output` (chat or Responses). */
  private async generate(prepared: Prepared, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult> {
    const engine = await this.engineFor(prepared.record);
    const parser = prepared.family.createParser(prepared.context);
    const guard = new StopGuard(prepared.engineRequest.sampling.stop);
    let raw = "";
    let reasoningTokens = 0;
    let engineUsage: EngineUsage | null = null;
    let finish: "stop" | "length" | "abort" = "stop";
    let first = true;
    for await (const event of engine.generate(prepared.engineRequest, signal)) {
      if (event.type === "done") {
        engineUsage = event.usage;
        finish = event.finish;
        break;
      }
      if (first) {
        first = false;
        prepared.stats.ttft_ms = Math.round(performance.now() - prepared.started);
      }
      const text = guard.push(event.text);
      raw += text;
      const events = parser.push(text);
      if (parser.inReasoning) reasoningTokens++;
      output.write(events, event.logprobs);
    }
    const held = guard.finish();
    raw += held;
    output.write([...parser.push(held), ...parser.finish()], undefined);
    if (finish === "abort" && signal.aborted) throw abortError();
    const usage = engineUsage ?? { promptTokens: 0, cachedTokens: 0, completionTokens: 0, prefillTokensPerS: 0, decodeTokensPerS: 0 };
    // At least one prompt token is always prefilled (its logits give the first output token).
    const cached = Math.max(0, Math.min(usage.cachedTokens, usage.promptTokens - 1));
    prepared.stats.prefill_tokens_per_s = round(usage.prefillTokensPerS);
    prepared.stats.decode_tokens_per_s = round(usage.decodeTokensPerS);
    prepared.stats.prefill_tokens += usage.promptTokens - cached;
    const decode = decodeCounts(usage);
    addDecodeCounts(prepared.stats, decode);
    // A cut call's raw text is not what the app sends back (its arguments were closed): nothing to remember.
    if (finish === "stop" && !parser.cutCall) this.rememberReply(prepared, output.reply(), raw);
    return {
      finish,
      cutCall: parser.cutCall,
      usage: {
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
        prompt_tokens_details: { cached_tokens: cached },
        completion_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, usage.completionTokens), ...predictionDetails(usage, prepared.request.prediction !== undefined) },
      },
      decode,
    };
  }

  private rememberReply(prepared: Prepared, reply: SentBackReply, raw: string): void {
    const messages = prepared.request.messages;
    const key = ConversationMemory.keyOf(prepared.record.model_id, reply, messages[messages.length - 1], prepared.request.cacheKey, prepared.request.client);
    // Copied, not referenced: the reply's call objects are handed to the app, which may edit them in place before sending them back.
    const calls = reply.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
    // Only a streamed reply can come back as its last reasoning fragment (the SDK stream helpers' artifact).
    const lastReasoningDelta = prepared.request.stream && reply.lastReasoningDelta ? { lastReasoningDelta: reply.lastReasoningDelta } : {};
    this.memory.remember(key, { raw, calls, reasoning: reply.reasoning, ...lastReasoningDelta });
  }

  private async ensureLoaded(record: ModelRecord, onProgress: ((p: LoadProgress) => void) | undefined, signal?: AbortSignal): Promise<void> {
    const engine = await this.engineFor(record);
    const embedding = isEmbeddingRecord(record);
    // A chat model and an embedding model are resident together: each checks its own slot.
    if ((embedding ? engine.loadedEmbeddingModel : engine.loadedModel) === record.model_id) return;
    const convConfig = embedding ? undefined : familyOf(record).convConfig;
    // The model of the other kind stays unless both do not fit in GPU memory together.
    const otherId = embedding ? engine.loadedModel : engine.loadedEmbeddingModel;
    const other = otherId && engine.requiresGpu ? (await this.catalog()).find(otherId) : undefined;
    const exclusive = other ? !fitsTogether([other, record], this.options.deviceMemoryGb ?? deviceMemoryGb()).fits : false;
    const emit = (progress: LoadProgress) => {
      this.options.onProgress?.(progress);
      onProgress?.(progress);
    };
    // web-llm loads from its own cache: our downloader fills it first (byte progress, resume, checks, quota).
    // (A web-llm that reads another layout, ≤ 0.2.79, says so and fetches for itself.)
    const download = engine.requiresGpu === true && (engine.acceptsPrefetch ? await engine.acceptsPrefetch() : true);
    const phases = download ? composeProgress(emit) : null;
    if (phases) await (await this.cacheManager()).ensure(record, { onProgress: phases.download, signal });
    await engine.load(record, {
      signal,
      convConfig,
      exclusive,
      cacheBackend: this.options.cache,
      onProgress: phases ? phases.engine : emit,
      ...(embedding ? {} : { promptCache: this.promptCache }),
    });
  }

  private async cacheManager(): Promise<CacheManager> {
    const { cacheManager } = await load.cacheManager();
    return cacheManager(this.options.cache ?? "indexeddb");
  }

  // ── weight cache (client.cache.*) ────────────────────────────────────────

  /** Cached models of this host's backend: id, bytes, complete, lastUsed. */
  async cacheList(): Promise<CachedModel[]> {
    return (await this.cacheManager()).list();
  }

  /** Removes every file of a model (by id or alias) from web-llm's cache. */
  async cacheDelete(id: string): Promise<{ id: string; deleted: boolean }> {
    const catalog = await this.catalog();
    const record = catalog.find(id) ?? (await this.features().then((features) => catalog.resolve(id, features)).catch(() => undefined));
    const modelId = record?.model_id ?? id;
    return { id: modelId, deleted: await (await this.cacheManager()).delete(modelId, record) };
  }

  /** Empties web-llm's cache for this backend. */
  async cacheClear(): Promise<void> {
    await (await this.cacheManager()).clear();
  }

  /** Per-model bytes, the origin's usage and quota, and whether storage is persistent. */
  async cacheUsage(): Promise<CacheUsage> {
    return (await this.cacheManager()).usage();
  }

  /** What `record` takes: its cached package manifest when there is one (GPU engines), else the record (models/inputs.ts). */
  private async inputsOf(record: ModelRecord): Promise<ModelInputs> {
    if (!hasPackageManifest(record) || !(await this.engineFor(record)).requiresGpu) return modelInputs(record);
    const manifest = await (await this.cacheManager()).readPackageManifest(record).catch(() => null);
    return modelInputs(record, manifest);
  }

  private async checkDevice(record: ModelRecord, request: NormalizedRequest | undefined): Promise<void> {
    const engine = await this.engineFor(record);
    if (engine.requiresGpu) checkDeviceFit(record, await this.gpu(), request?.provider);
  }

  /** A record that names the scripted engine gets its own; every other record shares the host's engine. */
  private async engineFor(record: ModelRecord): Promise<Engine> {
    if (record.engine?.kind !== "scripted") return this.getEngine();
    let engine = this.recordEngines.get(record.model_id);
    if (!engine) {
      engine = createRecordEngine(record.model_id, record.engine, isEmbeddingRecord(record));
      this.recordEngines.set(record.model_id, engine);
    }
    return engine;
  }

  private async getEngine(): Promise<Engine> {
    if (!this.engine) {
      const { createWebLlmEngine } = await load.webllmEngine();
      this.engine = createWebLlmEngine({ promptCache: this.promptCache });
    }
    return this.engine;
  }

  /**
   * A request that names one of the app's own records by its exact id needs
   * only those records: web-llm (whose catalog is the prebuilt list) is not
   * loaded for a page that only uses scripted or custom records.
   */
  private catalog(requested?: string): Promise<Catalog> {
    if (requested !== undefined) {
      this.ownCatalog ??= createCatalog(this.options.models ?? []);
      if (this.ownCatalog.find(requested)) return Promise.resolve(this.ownCatalog);
    }
    this.catalogPromise ??= loadPrebuiltRecords().then((prebuilt) => createCatalog([...prebuilt, ...(this.options.models ?? [])]));
    return this.catalogPromise;
  }

  private gpu(): Promise<GpuProbe> {
    this.gpuPromise ??= (this.options.probeGpu ?? probeGpu)();
    return this.gpuPromise;
  }

  private async features(): Promise<Set<string>> {
    const gpu = await this.gpu();
    return new Set(gpu.available ? gpu.info.features : []);
  }
}

function resolveThinking(family: Family, effort: ReasoningEffort | undefined): { enabled: boolean; budget?: number } {
  if (!family.reasoning) return { enabled: false };
  if (effort === undefined) return { enabled: family.reasoning.defaultOn };
  if (effort === "none") return { enabled: false };
  return { enabled: true, budget: REASONING_BUDGET[effort] };
}

function addUsage(total: Usage | null, next: Usage): Usage {
  if (!total) return next;
  return {
    prompt_tokens: total.prompt_tokens + next.prompt_tokens,
    completion_tokens: total.completion_tokens + next.completion_tokens,
    total_tokens: total.total_tokens + next.total_tokens,
    prompt_tokens_details: { cached_tokens: total.prompt_tokens_details.cached_tokens + next.prompt_tokens_details.cached_tokens },
    completion_tokens_details: addCompletionDetails(total.completion_tokens_details, next.completion_tokens_details),
  };
}

const round = (n: number) => Math.round(n * 10) / 10;

function modelObject(record: ModelRecord, inputs: ModelInputs): ModelObject {
  if (isEmbeddingRecord(record)) {
    return {
      id: record.model_id,
      object: "model",
      created: 0,
      owned_by: "webgpu-openai",
      type: "embedding",
      family: "embedding",
      vram_required_mb: record.vram_required_MB ?? null,
      context_window: embeddingWindowOf(record),
      input_modalities: ["text"],
      capabilities: { tools: false, reasoning: false, vision: false, audio: false, embeddings: true },
      quantization: quantizationOf(record.model_id),
      dimensions: embeddingDimensionsOf(record),
    };
  }
  const family = familyOf(record);
  return {
    id: record.model_id,
    object: "model",
    created: 0,
    owned_by: "webgpu-openai",
    family: family.name,
    vram_required_mb: record.vram_required_MB ?? null,
    context_window: contextWindowOf(record),
    type: "chat",
    input_modalities: inputs.kinds,
    capabilities: { tools: true, reasoning: family.reasoning !== null, vision: inputs.kinds.includes("image"), audio: inputs.kinds.includes("audio"), embeddings: false },
    quantization: quantizationOf(record.model_id),
  };
}
