/**
 * What crosses between the page and the worker. Calls go through comlink;
 * streamed chunks are pushed over a MessagePort per request.
 */
import type { ModelStatus, TokenCount } from "../host/prompt-support.js";
import type { ChatCompletion, ModelList, ModelObject } from "../protocol/types.js";
import type { ApiErrorInit } from "../protocol/api-error.js";
import type { PackedChunks } from "./chunk-wire.js";
import type { PackedEvents } from "./event-wire.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject } from "../protocol/responses/types.js";
import type { CompactResource } from "../protocol/responses/compact.js";
import type { ResponseList, ResponseListQuery } from "../store/response-store.js";
import type { ResponsesCleared } from "../host/responses-face.js";
import type { GpuProbe } from "../gpu/probe.js";
import type { LoadProgress } from "../engine/types.js";
import type { EngineHostOptions } from "../host/engine-host.js";
import type { WorkerHostOption } from "../host/host-options.js";
import type { CachedModel, CacheUsage } from "../cache/manager.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";
import type { PromptCacheOption } from "../engine/prompt-cache/config.js";
import type { Transcription, TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { Completion, CompletionChunk } from "../protocol/completions-types.js";

/** Worker → page, on a request's port. */
export type PortMessage =
  | { type: "chunks"; packed: PackedChunks }
  | { type: "events"; packed: PackedEvents }
  | { type: "transcript"; events: TranscriptionStreamEvent[] }
  | { type: "completion"; chunks: CompletionChunk[] }
  | { type: "end" }
  | { type: "error"; error: ApiErrorInit };

/** Page → worker, on a request's port. */
export type PortCommand = { type: "abort" };

/** Serializable engine choice for the default worker. */
export type EngineSpec =
  | { kind: "webllm" }
  | { kind: "scripted"; replies: string[]; tokenDelayMs?: number; loadDelayMs?: number; embedDelayMs?: number; promptCache?: PromptCacheOption };

/** What the page's `configure` sends: the host's plain-data options (host/host-options.ts lists them) and the engine as data. */
export type WorkerHostConfig = Pick<EngineHostOptions, WorkerHostOption> & { engine: EngineSpec };

/** Which worker serves a client: one SharedWorker for every tab of the origin, a dedicated one, or none (this thread). */
export type WorkerKind = "shared" | "dedicated" | "none";

/** `client.workerInfo()`: which worker serves this client and how many tabs it serves. */
export interface WorkerInfo {
  worker: WorkerKind;
  /** Tabs (clients) connected to the worker, this one included: 1 for a dedicated worker or none. */
  tabs: number;
  /** Set when `worker: "shared"` was asked for but this browser has no SharedWorker (a dedicated one serves instead). */
  fallback?: string;
}

/** A tab joining a shared worker: the Web Lock it holds while alive (the worker waits on it to learn the tab is gone). */
export interface TabHello {
  lock: string;
}

/** What a shared worker answers a tab that joins. */
export interface ConfigureResult {
  /** Options of this tab that were not applied (the first tab's win), e.g. `["models", "maxQueue"]`. */
  ignored: string[];
  /** A Web Lock the worker holds for its whole life: a tab that asks for it is granted it when the worker is gone. */
  workerLock?: string;
}

/** A failed write of the response store, as it crosses to the page (rebuilt there as an ApiError). */
export type StoreErrorListener = (error: ApiErrorInit) => void;

/** The API the worker exposes with comlink. */
export interface WorkerApi {
  configure(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void, tab?: TabHello, onStoreError?: StoreErrorListener): Promise<ConfigureResult | void>;
  workerInfo(): WorkerInfo;
  createChatCompletion(body: unknown, port: MessagePort): Promise<ChatCompletion>;
  /** Resolves when generation has started; chunks then arrive on `port`. */
  streamChatCompletion(body: unknown, port: MessagePort): Promise<void>;
  createResponse(body: unknown, port: MessagePort): Promise<ResponseObject>;
  /** Resolves when generation has started; events then arrive on `port`. */
  streamResponse(body: unknown, port: MessagePort): Promise<void>;
  retrieveResponse(id: string): Promise<ResponseObject>;
  deleteResponse(id: string): Promise<ResponseDeleted>;
  listResponseInputItems(id: string, query?: InputItemListQuery): Promise<InputItemList>;
  /** A background response's events after `startingAfter`, then the live ones, on `port` (abort arrives on it). */
  retrieveResponseStream(id: string, startingAfter: number | undefined, port: MessagePort): Promise<void>;
  cancelResponse(id: string): Promise<ResponseObject>;
  listResponses(query?: ResponseListQuery): Promise<ResponseList>;
  clearResponses(): Promise<ResponsesCleared>;
  compactResponse(body: unknown, port: MessagePort): Promise<CompactResource>;
  /** Raw-prompt completions (`/completions`). Abort arrives on `port`. */
  createCompletion(body: unknown, port: MessagePort): Promise<Completion>;
  /** Resolves when generation has started; `text_completion` chunks then arrive on `port`. */
  streamCompletion(body: unknown, port: MessagePort): Promise<void>;
  /** Abort arrives on `port`. */
  createEmbeddings(body: unknown, port: MessagePort): Promise<CreateEmbeddingResponse>;
  /** `body.file.data` arrives transferred. Abort arrives on `port`. */
  createTranscription(body: unknown, port: MessagePort): Promise<Transcription>;
  /** Resolves when generation has started; `transcript.text.*` events then arrive on `port`. */
  streamTranscription(body: unknown, port: MessagePort): Promise<void>;
  listModels(): Promise<ModelList>;
  retrieveModel(id: string): Promise<ModelObject>;
  gpuInfo(): Promise<GpuProbe>;
  loadModel(model: string, port: MessagePort, onProgress?: (progress: LoadProgress) => void): Promise<{ model: string }>;
  queueState(): { waiting: number; running: boolean };
  cacheList(): Promise<CachedModel[]>;
  cacheDelete(id: string): Promise<{ id: string; deleted: boolean }>;
  cacheClear(): Promise<void>;
  cacheUsage(): Promise<CacheUsage>;
  /** Abort arrives on `port`. */
  countTokens(body: unknown, port: MessagePort): Promise<TokenCount>;
  modelStatus(id: string): Promise<ModelStatus>;
}
