/**
 * The client's public types: its options and the OpenAI-shaped object
 * `createClient` returns. A file of its own so the modules that serve a
 * client (fetch-handler.ts, fetch-responses.ts, intercept-fetch.ts, the
 * Prompt API) can name it without importing createClient, which imports them.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParams, ChatCompletionTool, FunctionTool, ModelList, ModelObject, ToolCallDeltaFor, ToolCallFor } from "../protocol/types.js";
import type { Engine, LoadProgress } from "../engine/types.js";
import type { GpuInfoReply } from "../host/models-face.js";
import type { ModelRecord } from "../models/record.js";
import type { CachedModel, CacheUsage } from "../cache/manager.js";
import type { PromptCacheOption } from "../engine/prompt-cache/config.js";
import type { BatchingOption } from "../engine/batching/options.js";
import type { ApiError } from "../protocol/api-error.js";
import type { InputItemList, InputItemListQuery, ResponseCreateParams, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { CompactResource, CompactResponseParams } from "../protocol/responses/compact.js";
import type { ResponseList, ResponseListQuery, ResponsesStoreOptions } from "../store/response-store.js";
import type { McpOptions } from "../mcp/limits.js";
import type { McpCallResult } from "../mcp/connection.js";
import type { McpServerParams, McpToolInfo } from "../protocol/responses/mcp-items.js";
import type { ResponsesCleared } from "../host/responses-face.js";
import type { Stream } from "./stream.js";
import type { FallbackOptions } from "./fallback.js";
import type { CreateEmbeddingResponse, EmbeddingCreateParams } from "../protocol/embeddings-types.js";
import type { WorkerInfo, WorkerKind } from "../worker/protocol.js";
import type { ModelStatus, TokenCount } from "../host/prompt-support.js";
import type { EngineStats } from "../host/stats-face.js";
import type { TranscriptionsApi } from "./transcriptions.js";
import type { Completion, CompletionChunk, CompletionCreateParams } from "../protocol/completions-types.js";

export interface ClientOptions {
  /**
   * Browser default `true`: the engine runs in a dedicated module worker.
   * `false`: in this thread (Node, tests). A Worker: one that runs
   * `exposeEngineHost` from `webgpu-openai/worker`.
   * `"shared"`: one SharedWorker for every tab of the origin (one engine, one
   * model in GPU memory, one FIFO queue for all tabs); where the browser has
   * no SharedWorker, a dedicated worker (reported once with console.info and
   * in `workerInfo()`). A SharedWorker: one that runs `exposeSharedEngineHost`.
   */
  worker?: boolean | Worker | "shared" | SharedWorker;
  /**
   * What serves the models whose record names no engine kind. Default: the
   * web-llm engine. `createScriptedEngine()` for tests. A string: a kind
   * registered with `registerEngineKind` where the host runs (this page with
   * `worker: false`; with a worker, the worker's module, before `exposeEngineHost`).
   * `"auto"`: web-llm where WebGPU has an adapter and the model fits it;
   * otherwise a record's `fallback` (a GGUF record's model_id) runs on its
   * engine instead (docs/models.md; `models.status(id).engine` says which and why).
   */
  engine?: Engine | string;
  /** Extra or replacement model records (custom URLs, local artifacts). */
  models?: ModelRecord[];
  /** Weight cache backend. */
  cache?: "indexeddb" | "cache" | "opfs";
  /** Waiting requests beyond this → 429. Default 16. */
  maxQueue?: number;
  /** Requests running longer than this fail with 504. */
  timeoutMs?: number;
  /** Model load progress. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * A remote OpenAI-compatible server for chat completions this device cannot
   * serve (no WebGPU, missing adapter features, model too large). Without it
   * those requests fail with 503. A request opts out with
   * `provider: { allow_fallbacks: false }` or `{ require_local: true }`.
   */
  fallback?: FallbackOptions;
  /**
   * The Responses API's store (`store: true`, the default): what
   * previous_response_id, item_reference, retrieve, delete, input_items, list
   * and background responses read. In IndexedDB where it exists (surviving a
   * reload, shared by the origin's tabs), else in memory; `kind` chooses.
   * Retention: `maxResponses` (default 100), `maxBytes` (default 64 MiB),
   * `maxAgeMs` (default none), the oldest dropped first (docs/durable-responses.md).
   */
  responsesStore?: ResponsesStoreOptions;
  /**
   * Bounds of the MCP connections made where the engine runs (the Responses
   * `mcp` tool, `connectMcp`): `connectTimeoutMs` and `listTimeoutMs`
   * (default 10 000), `callTimeoutMs` (60 000), `idleCloseMs` (60 000),
   * `maxOutputChars` (16 000), `maxToolsPerServer` (64). docs/mcp.md.
   */
  mcp?: McpOptions;
  /**
   * Called when a stored response could not be written (a quota error, a
   * closed database): the response itself was served whole, but it may be
   * missing after a reload. From the worker too; with the shared worker every
   * tab's handler hears of every failed write of the origin's store (the error
   * names the response). Default: reported on the console only.
   */
  onResponseStoreError?: (error: ApiError) => void;
  /**
   * Prompt caching (default on): the engine keeps the KV cache of recent
   * prompts and prefills only what no cached prefix holds. `false` turns it
   * off; `{ budgetTokens, maxSequences }` bounds it (README "Prompt caching").
   */
  promptCache?: PromptCacheOption;
  /**
   * Speculative decoding (default on): the engine drafts likely next tokens
   * from the prompt, the output so far, a request's `prediction` and cached
   * replies, and checks several in one forward pass; the output is the same.
   * `false` decodes one token per pass (docs/speculative-decoding.md).
   */
  speculative?: boolean;
  /**
   * Continuous batching on the web-llm engine (default on): generations in
   * flight share each decode forward pass. Unset, the row cap is sized to the
   * model and device at load: up to 4 rows, lowered to the library's compiled
   * batch limit and halved until the rows' KV cache can be allocated (one at a
   * time below 2 rows; `client.stats().batching.reason` says why). `false`
   * decodes one generation at a time. `true` is `{ maxRows: 4 }`; an object
   * is used as given, and a load fails with a 400 saying what to lower when
   * the device cannot hold it. What a row does not do yet (speculate) is in
   * docs/concurrency.md.
   */
  batching?: BatchingOption;
}

export interface RequestOptions {
  /** null as in the OpenAI SDK's RequestOptions, so its options objects are accepted. */
  signal?: AbortSignal | null | undefined;
}

export interface Client {
  chat: {
    completions: {
      // Overloads on `stream`, generic on `tools`: `Tool` is inferred from the request's tools (FunctionTool
      // when it has none), so a request without custom tools gets function-call types (ToolCallFor).
      create<Tool extends ChatCompletionTool = FunctionTool>(body: ChatCompletionCreateParams<Tool> & { stream: true }, options?: RequestOptions): Promise<Stream<ChatCompletionChunk<ToolCallDeltaFor<Tool>>>>;
      create<Tool extends ChatCompletionTool = FunctionTool>(body: ChatCompletionCreateParams<Tool> & { stream?: false | null }, options?: RequestOptions): Promise<ChatCompletion<ToolCallFor<Tool>>>;
      create<Tool extends ChatCompletionTool = FunctionTool>(
        body: ChatCompletionCreateParams<Tool>,
        options?: RequestOptions,
      ): Promise<ChatCompletion<ToolCallFor<Tool>> | Stream<ChatCompletionChunk<ToolCallDeltaFor<Tool>>>>;
    };
  };
  /** The Responses API (Open Responses) on the same local pipeline. */
  responses: {
    create(body: ResponseCreateParams & { stream: true }, options?: RequestOptions): Promise<Stream<ResponseStreamEvent>>;
    create(body: ResponseCreateParams & { stream?: false | null }, options?: RequestOptions): Promise<ResponseObject>;
    create(body: ResponseCreateParams, options?: RequestOptions): Promise<ResponseObject | Stream<ResponseStreamEvent>>;
    /**
     * A stored response (a running one as it stands). With `{ stream: true }`:
     * a background response's events after `starting_after` (a sequence
     * number), then the live ones, as the openai SDK's background streaming reads them.
     */
    retrieve(id: string, query: { stream: true; starting_after?: number }, options?: RequestOptions): Promise<Stream<ResponseStreamEvent>>;
    retrieve(id: string, query?: { stream?: false | null; starting_after?: number }, options?: RequestOptions): Promise<ResponseObject>;
    delete(id: string): Promise<ResponseDeleted>;
    /** Stops a background response: `status: "cancelled"`, its output so far kept. */
    cancel(id: string): Promise<ResponseObject>;
    /** The stored responses, newest first by default (`{ limit, order, after }` as input_items.list). Not in the hosted API. */
    list(query?: ResponseListQuery): Promise<ResponseList>;
    /** Deletes every stored response of this origin's store (running background ones are cancelled). Not in the hosted API. */
    clear(): Promise<ResponsesCleared>;
    inputItems: { list(id: string, query?: InputItemListQuery): Promise<InputItemList> };
    /** `POST /responses/compact`: older turns summarised by the model into one compaction item, accepted back as input. */
    compact(body: CompactResponseParams, options?: RequestOptions): Promise<CompactResource>;
  };
  /** Raw-prompt completions (the legacy Completions API): the prompt reaches the model as is, with no chat template. */
  completions: {
    create(body: CompletionCreateParams & { stream: true }, options?: RequestOptions): Promise<Stream<CompletionChunk>>;
    create(body: CompletionCreateParams & { stream?: false | null }, options?: RequestOptions): Promise<Completion>;
    create(body: CompletionCreateParams, options?: RequestOptions): Promise<Completion | Stream<CompletionChunk>>;
  };
  embeddings: {
    /** Vectors from a local embedding model (`snowflake-arctic-embed-s|m`), resident next to the chat model. */
    create(body: EmbeddingCreateParams, options?: RequestOptions): Promise<CreateEmbeddingResponse>;
  };
  audio: {
    /** Speech to text by a local chat model that takes audio (asked to transcribe, on the same queue). */
    transcriptions: TranscriptionsApi;
  };
  models: {
    list(): Promise<ModelList>;
    retrieve(id: string): Promise<ModelObject>;
    /** Download (if needed) and load a model ahead of the first request. */
    load(id: string, options?: { onProgress?: (progress: LoadProgress) => void; signal?: AbortSignal }): Promise<{ model: string }>;
    /** Whether the model can serve here: `available` (loaded, cached, or no GPU needed), `downloadable`, or `unavailable` with the reason. */
    status(id: string): Promise<ModelStatus>;
  };
  tokens: {
    /** The prompt tokens of a chat request (messages, tools, response_format) in its model, without generating; loads the model if needed. */
    count(body: ChatCompletionCreateParams, options?: RequestOptions): Promise<TokenCount>;
  };
  /** MCP servers' tools, on connections made where the engine runs (`connectMcp` wraps these for a tool loop; docs/mcp.md). */
  mcp: {
    /** The server's tools (`allowed_tools` applied); rejects with the reason a connection failed (CORS, credentials, a timeout). */
    listTools(server: McpServerParams, options?: RequestOptions): Promise<McpToolInfo[]>;
    /** One call: `output`, or `error` (a failing tool, `isError`, a timeout); never rejects for the tool's sake. */
    callTool(call: McpServerParams & { name: string; arguments?: Record<string, unknown> }, options?: RequestOptions): Promise<McpCallResult>;
  };
  gpu: {
    /** The WebGPU adapter as the engine sees it, or why there is none; `worker`: where the engine runs. */
    /** The adapter; `engine`: what runs web-llm records here (with `engine: "auto"`, their fallback where WebGPU is missing); `wllama`: multi- or single-threaded and how many threads (as a loaded wllama reports it, else what a load here asks: threads only where the page is cross-origin isolated). */
    info(): Promise<GpuInfoReply & { worker: WorkerKind }>;
  };
  /** Which worker serves this client (`"shared"`, `"dedicated"`, `"none"`) and how many tabs it serves. */
  workerInfo(): Promise<WorkerInfo>;
  /** A fetch that serves the OpenAI REST API from this client: `new OpenAI({ fetch: client.fetch })`. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  /** Requests waiting and running (tests, diagnostics). */
  queueState(): Promise<{ waiting: number; running: boolean }>;
  /** Forward passes, generated and prefilled tokens, rows per pass since the engine's host started, and whether the loaded model batches (issue 38). */
  stats(): Promise<EngineStats>;
  /** The weight cache of the `cache` backend (web-llm's own cache, filled by our downloader). */
  cache: {
    /** Cached models: id, bytes, complete, lastUsed (most recent first). */
    list(): Promise<CachedModel[]>;
    /** Removes every file of the model (weights, tensor-cache.json, tokenizer, config, wasm). */
    delete(id: string): Promise<{ id: string; deleted: boolean }>;
    /** Removes every cached model of this backend. */
    clear(): Promise<void>;
    /** Bytes per model, the origin's usage and quota, and whether the browser granted persistent storage. */
    usage(): Promise<CacheUsage>;
  };
  /** Stops the worker; in-flight requests fail with 503 and the next request starts a fresh worker. */
  terminate(): void;
}
