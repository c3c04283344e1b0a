/**
 * EngineHost: the library's one request handler, and nothing about workers.
 * In Node and in tests it runs in-process; in the browser worker/entry.ts
 * exposes it with comlink.
 *
 * It is wiring only: the pipeline core (host/pipeline-core.ts: catalog,
 * engines, queue, load, prepare, generate, conversation memory) and one face
 * per API on top of it, each in its own module. A new face is a new file
 * taking the `PipelineCore`, plus its methods here; each public method is an
 * endpoint, with its entry in endpoints.ts (the client and the worker are
 * derived from that table, and tsc fails on a method without an entry).
 */
import { fetchesWeights, keepsOwnCache } from "../engine/registry.js";
import type { CompactResource } from "../protocol/responses/compact.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { ChatCompletion, ModelList, ModelObject } from "../protocol/types.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";
import type { Transcription, TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { LoadProgress } from "../engine/types.js";
import type { ModelRecord } from "../models/record.js";
import type { GpuInfoReply } from "./models-face.js";
import type { CachedModel, CacheUsage } from "../cache/manager.js";
import { Pipeline, type ChunkSink, type PipelineOptions, type Prepared, type RequestOptions } from "./pipeline-core.js";
import { ChatCompletionsFace } from "./chat-face.js";
import { ResponsesFace } from "./responses-face.js";
import { McpPool } from "../mcp/pool.js";
import type { McpCallResult } from "../mcp/connection.js";
import type { McpToolInfo } from "../protocol/responses/mcp-items.js";
import { callMcpTool, listMcpTools } from "./mcp-face.js";
import { mcpLimits, type McpOptions } from "../mcp/limits.js";
import { createResponseStore } from "../store/create-response-store.js";
import { QueuedResponseStore } from "../store/queued-store.js";
import type { ResponseList, ResponseListQuery, ResponseStore, ResponsesStoreOptions } from "../store/response-store.js";
import type { ResponsesCleared } from "./responses-face.js";
import type { ApiError } from "../protocol/api-error.js";
import { compactConversation } from "./responses-compact.js";
import { createEmbeddings, embeddingsContextOf } from "./embeddings.js";
import { createTranscription, streamTranscription, type ChatFace } from "./transcriptions.js";
import { ModelsFace } from "./models-face.js";
import { CacheFace } from "./cache-face.js";
import { CompletionsFace } from "./completions-face.js";
import type { Completion, CompletionChunk } from "../protocol/completions-types.js";
import { countTokens, modelStatus, type ModelStatus, type PromptSupportContext, type TokenCount } from "./prompt-support.js";
import { engineStats, type EngineStats } from "./stats-face.js";

export type { ChunkSink, Prepared, RequestOptions } from "./pipeline-core.js";

export interface EngineHostOptions extends PipelineOptions {
  /** Where stored responses live and how many are kept (store/response-store.ts). Default: IndexedDB where it exists, 100 responses. */
  responsesStore?: ResponsesStoreOptions;
  /** Bounds of the MCP connections this host makes (mcp/limits.ts): timeouts, output size, tools per server. */
  mcp?: McpOptions;
  /** A response store of the app's own (a custom worker's host, tests), in place of the one `responsesStore` describes. */
  responseStore?: ResponseStore;
  /** Called when writing a stored response fails (a quota error): the response itself is unaffected. */
  onResponseStoreError?: (error: ApiError) => void;
}

export class EngineHost {
  private readonly core: Pipeline;
  private readonly chat: ChatCompletionsFace;
  private readonly responses: ResponsesFace<Prepared>;
  private readonly models: ModelsFace;
  private readonly cache: CacheFace;
  private readonly completions: CompletionsFace;
  /** Transcription runs on the chat face (host/transcriptions.ts). */
  private readonly transcriptionChat: ChatFace;

  private readonly cacheBackend: EngineHostOptions["cache"];
  /** The MCP connections of this host's clients (mcp/pool.ts): where the engine runs. */
  private readonly mcpPool: McpPool;

  constructor(options: EngineHostOptions = {}) {
    const core = new Pipeline(options);
    this.cacheBackend = options.cache;
    this.core = core;
    this.chat = new ChatCompletionsFace(core);
    this.mcpPool = new McpPool(mcpLimits(options.mcp));
    this.responses = new ResponsesFace<Prepared>(
      {
        run: (request, signal, work) => core.withSlot(request, signal, work),
        generate: (prepared, output, signal) => core.generate(prepared, output, signal),
        prepareAgain: (prepared, messages, toolChoice) => core.prepareAgain(prepared, messages, toolChoice),
      },
      new QueuedResponseStore(options.responseStore ?? createResponseStore(options.responsesStore), options.onResponseStoreError),
      // Responses whose worker stopped mid-way (a reload) resume or end `incomplete`, on the face's first use (responses-recovery.ts).
      (model) => this.modelReady(model),
      this.mcpPool,
    );
    this.models = new ModelsFace(core);
    this.cache = new CacheFace(core);
    this.completions = new CompletionsFace(core);
    this.transcriptionChat = {
      complete: (body, signal) => this.chat.create(body, { signal }),
      stream: (body, sink, signal) => this.chat.stream(body, sink, { signal }),
    };
  }

  // ── responses (host/responses-face.ts) ───────────────────────────────────

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

  /** `GET /responses/{id}?stream=true&starting_after=N`: a background response's events after N, then live ones. */
  retrieveResponseStream(id: string, startingAfter: number | undefined, sink: ChunkSink<ResponseStreamEvent>, options: RequestOptions = {}): Promise<void> {
    return this.responses.retrieveStream(id, startingAfter, sink, options.signal);
  }

  cancelResponse(id: string): Promise<ResponseObject> {
    return this.responses.cancel(id);
  }

  listResponses(query?: ResponseListQuery): Promise<ResponseList> {
    return this.responses.list(query);
  }

  clearResponses(): Promise<ResponsesCleared> {
    return this.responses.clear();
  }

  /** `POST /responses/compact`: the model summarises the older turns into one compaction item. */
  compactResponse(body: unknown, options: RequestOptions = {}): Promise<CompactResource> {
    return compactConversation(this.responses, body, options.signal, options.client);
  }

  // ── chat completions (host/chat-face.ts) ─────────────────────────────────

  createChatCompletion(body: unknown, options: RequestOptions = {}): Promise<ChatCompletion> {
    return this.chat.create(body, options);
  }

  /**
   * Starts a streamed completion. Resolves once generation has started (errors
   * before that reject: bad request, unknown model, queue full, load failure,
   * prompt too long); from then on chunks go to `sink`, which ends or fails.
   */
  streamChatCompletion(body: unknown, sink: ChunkSink, options: RequestOptions = {}): Promise<void> {
    return this.chat.stream(body, sink, options);
  }

  // ── raw completions (host/completions-face.ts) ───────────────────────────

  createCompletion(body: unknown, options: RequestOptions = {}): Promise<Completion> {
    return this.completions.create(body, options);
  }

  /** Resolves once generation has started; `text_completion` chunks then go to `sink`. */
  streamCompletion(body: unknown, sink: ChunkSink<CompletionChunk>, options: RequestOptions = {}): Promise<void> {
    return this.completions.stream(body, sink, options);
  }

  // ── embeddings (host/embeddings.ts, same queue) ──────────────────────────

  createEmbeddings(body: unknown, options: RequestOptions = {}): Promise<CreateEmbeddingResponse> {
    return createEmbeddings(embeddingsContextOf(this.core), body, options.signal);
  }

  // ── audio transcriptions (host/transcriptions.ts: the chat path, asked to transcribe) ──

  createTranscription(body: unknown, options: RequestOptions = {}): Promise<Transcription> {
    return createTranscription(this.transcriptionChat, body, options.signal);
  }

  /** Resolves once generation has started; `transcript.text.*` events then go to `sink`. */
  streamTranscription(body: unknown, sink: ChunkSink<TranscriptionStreamEvent>, options: RequestOptions = {}): Promise<void> {
    return streamTranscription(this.transcriptionChat, body, sink, options.signal);
  }

  /** Whether `model` loads without a download (a resumed response never downloads). */
  private async modelReady(model: string): Promise<boolean> {
    const catalog = await this.core.catalog();
    const record = catalog.find(model) ?? (await this.core.resolve(model).catch(() => undefined));
    if (!record) return false;
    // An engine that fetches nothing (the scripted one) loads without a download.
    if (!fetchesWeights(await this.core.capabilitiesOf(record))) return true;
    return this.cachedWhole(record);
  }

  /** Whether the cache holds `record` whole: ours, or the engine's own where it keeps one (web-llm ≤ 0.2.79, whose cache only it can read). */
  private async cachedWhole(record: ModelRecord): Promise<boolean> {
    const engine = await this.core.engineFor(record);
    if (await keepsOwnCache(engine, await this.core.capabilitiesOf(record))) return (await engine.holdsModel?.(record, this.cacheBackend)) ?? false;
    return (await this.cache.list()).some((cached) => cached.id === record.model_id && cached.complete);
  }

  // ── Prompt API support (host/prompt-support.ts) ──────────────────────────

  // ── MCP servers' tools for connectMcp (host/mcp-face.ts) ──────────────────

  mcpListTools(body: unknown, options: RequestOptions = {}): Promise<McpToolInfo[]> {
    return listMcpTools(this.mcpPool, body, options.client);
  }

  mcpCallTool(body: unknown, options: RequestOptions = {}): Promise<McpCallResult> {
    return callMcpTool(this.mcpPool, body, options.signal, options.client);
  }

  countTokens(body: unknown, options: RequestOptions = {}): Promise<TokenCount> {
    return countTokens(this.promptSupport(), body, options.signal);
  }

  modelStatus(id: string): Promise<ModelStatus> {
    return modelStatus(this.promptSupport(), id);
  }

  private promptSupport(): PromptSupportContext {
    const core = this.core;
    return {
      shaped: (request, signal, work) => core.withSlot(request, signal, async (prepared) => work(prepared.engineRequest, await core.engineFor(prepared.record))),
      resolve: (model) => core.resolve(model),
      chooseEngine: (model) => core.chooseEngine(model),
      auto: core.auto,
      engineFor: (record) => core.engineFor(record),
      engines: () => core.engines(),
      capabilitiesOf: (record) => core.capabilitiesOf(record),
      checkDevice: (record) => core.checkDevice(record, undefined),
      cached: (record) => this.cachedWhole(record),
    };
  }

  // ── models, GPU (host/models-face.ts) ────────────────────────────────────

  listModels(): Promise<ModelList> {
    return this.models.list();
  }

  retrieveModel(id: string): Promise<ModelObject> {
    return this.models.retrieve(id);
  }

  gpuInfo(): Promise<GpuInfoReply> {
    return this.models.gpuInfo();
  }

  /** Loads a model ahead of the first request (downloads it if needed), with progress. */
  loadModel(model: string, options: { onProgress?: (p: LoadProgress) => void; signal?: AbortSignal } = {}): Promise<{ model: string }> {
    return this.models.load(model, options);
  }

  /** Requests waiting and whether one runs: for tests and the demo. */
  queueState(): { waiting: number; running: boolean } {
    return this.models.queueState();
  }

  /** Forward passes, tokens and rows per pass since this host started, and whether the loaded model batches (host/stats-face.ts). */
  async stats(): Promise<EngineStats> {
    return engineStats(this.core);
  }

  // ── weight cache (client.cache.*, host/cache-face.ts) ────────────────────

  /** Cached models of this host's backend: id, bytes, complete, lastUsed. */
  cacheList(): Promise<CachedModel[]> {
    return this.cache.list();
  }

  /** Removes every file of a model (by id or alias) from web-llm's cache. */
  cacheDelete(id: string): Promise<{ id: string; deleted: boolean }> {
    return this.cache.delete(id);
  }

  /** Empties web-llm's cache for this backend. */
  cacheClear(): Promise<void> {
    return this.cache.clear();
  }

  /** Per-model bytes, the origin's usage and quota, and whether storage is persistent. */
  cacheUsage(): Promise<CacheUsage> {
    return this.cache.usage();
  }
}
