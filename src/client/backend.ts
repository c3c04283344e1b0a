/**
 * How the client reaches its EngineHost: directly (in-process) or through a
 * worker. Both look the same to create-client.ts.
 */
import * as Comlink from "comlink";
import type { EngineHost, EngineHostOptions } from "../host/engine-host.js";
import type { ChatCompletion, ModelList, ModelObject } from "../protocol/types.js";
import type { GpuProbe } from "../gpu/probe.js";
import type { LoadProgress } from "../engine/types.js";
import type { CachedModel, CacheUsage } from "../cache/manager.js";
import { ApiError, type ApiErrorInit } from "../protocol/api-error.js";
import { load } from "../lazy-imports.js";
import type { EngineSpec, PortMessage, WorkerApi, WorkerHostConfig, WorkerInfo } from "../worker/protocol.js";
import { WORKER_HOST_OPTIONS, pickOptions } from "../host/host-options.js";
import { deserializeError, installErrorTransfer, serializeError } from "../worker/transfer.js";
import { withAudioTransfer } from "./audio-transfer.js";
import { unpackChunks } from "../worker/chunk-wire.js";
import type { ChunkQueue } from "./chunk-queue.js";
import { dedicatedLink, type WorkerLink } from "./worker-link.js";
import { WORKER_START_TIMEOUT_MS, describeStartFailure } from "./worker-start.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { unpackEvents } from "../worker/event-wire.js";
import type { CompactResource } from "../protocol/responses/compact.js";
import type { ResponseList, ResponseListQuery } from "../store/response-store.js";
import type { ResponsesCleared } from "../host/responses-face.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";
import type { ModelStatus, TokenCount } from "../host/prompt-support.js";
import type { Transcription, TranscriptionRequestBody, TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { Completion, CompletionChunk } from "../protocol/completions-types.js";

export interface Backend {
  createResponse(body: unknown, signal: AbortSignal): Promise<ResponseObject>;
  streamResponse(body: unknown, queue: ChunkQueue<ResponseStreamEvent>, signal: AbortSignal): Promise<void>;
  retrieveResponse(id: string): Promise<ResponseObject>;
  deleteResponse(id: string): Promise<ResponseDeleted>;
  listResponseInputItems(id: string, query?: InputItemListQuery): Promise<InputItemList>;
  retrieveResponseStream(id: string, startingAfter: number | undefined, queue: ChunkQueue<ResponseStreamEvent>, signal: AbortSignal): Promise<void>;
  cancelResponse(id: string): Promise<ResponseObject>;
  listResponses(query?: ResponseListQuery): Promise<ResponseList>;
  clearResponses(): Promise<ResponsesCleared>;
  compactResponse(body: unknown, signal: AbortSignal): Promise<CompactResource>;
  createChatCompletion(body: unknown, signal: AbortSignal): Promise<ChatCompletion>;
  streamChatCompletion(body: unknown, queue: ChunkQueue, signal: AbortSignal): Promise<void>;
  createCompletion(body: unknown, signal: AbortSignal): Promise<Completion>;
  streamCompletion(body: unknown, queue: ChunkQueue<CompletionChunk>, signal: AbortSignal): Promise<void>;
  createEmbeddings(body: unknown, signal: AbortSignal): Promise<CreateEmbeddingResponse>;
  createTranscription(body: TranscriptionRequestBody, signal: AbortSignal): Promise<Transcription>;
  streamTranscription(body: TranscriptionRequestBody, queue: ChunkQueue<TranscriptionStreamEvent>, signal: AbortSignal): Promise<void>;
  listModels(): Promise<ModelList>;
  retrieveModel(id: string): Promise<ModelObject>;
  gpuInfo(): Promise<GpuProbe>;
  loadModel(model: string, options: { onProgress?: (p: LoadProgress) => void; signal?: AbortSignal }): Promise<{ model: string }>;
  queueState(): Promise<{ waiting: number; running: boolean }>;
  cacheList(): Promise<CachedModel[]>;
  cacheDelete(id: string): Promise<{ id: string; deleted: boolean }>;
  cacheClear(): Promise<void>;
  cacheUsage(): Promise<CacheUsage>;
  /** Which worker serves this client, and how many tabs it serves. */
  workerInfo(): Promise<WorkerInfo>;
  countTokens(body: unknown, signal: AbortSignal): Promise<TokenCount>;
  modelStatus(id: string): Promise<ModelStatus>;
  terminate(): void;
}

export function inProcessBackend(options: EngineHostOptions): Backend {
  let hostPromise: Promise<EngineHost> | null = null;
  const host = () => (hostPromise ??= load.engineHost().then(({ EngineHost }) => new EngineHost(options)));
  return {
    createChatCompletion: async (body, signal) => (await host()).createChatCompletion(body, { signal }),
    streamChatCompletion: async (body, queue, signal) => (await host()).streamChatCompletion(body, queue, { signal }),
    createResponse: async (body, signal) => (await host()).createResponse(body, { signal }),
    streamResponse: async (body, queue, signal) => (await host()).streamResponse(body, queue, { signal }),
    retrieveResponse: async (id) => (await host()).retrieveResponse(id),
    deleteResponse: async (id) => (await host()).deleteResponse(id),
    listResponseInputItems: async (id, query) => (await host()).listResponseInputItems(id, query),
    retrieveResponseStream: async (id, startingAfter, queue, signal) => (await host()).retrieveResponseStream(id, startingAfter, queue, { signal }),
    cancelResponse: async (id) => (await host()).cancelResponse(id),
    listResponses: async (query) => (await host()).listResponses(query),
    clearResponses: async () => (await host()).clearResponses(),
    compactResponse: async (body, signal) => (await host()).compactResponse(body, { signal }),
    createCompletion: async (body, signal) => (await host()).createCompletion(body, { signal }),
    streamCompletion: async (body, queue, signal) => (await host()).streamCompletion(body, queue, { signal }),
    createEmbeddings: async (body, signal) => (await host()).createEmbeddings(body, { signal }),
    createTranscription: async (body, signal) => (await host()).createTranscription(body, { signal }),
    streamTranscription: async (body, queue, signal) => (await host()).streamTranscription(body, queue, { signal }),
    listModels: async () => (await host()).listModels(),
    retrieveModel: async (id) => (await host()).retrieveModel(id),
    gpuInfo: async () => (await host()).gpuInfo(),
    loadModel: async (model, opts) => (await host()).loadModel(model, opts),
    queueState: async () => (await host()).queueState(),
    cacheList: async () => (await host()).cacheList(),
    cacheDelete: async (id) => (await host()).cacheDelete(id),
    cacheClear: async () => (await host()).cacheClear(),
    cacheUsage: async () => (await host()).cacheUsage(),
    workerInfo: async () => ({ worker: "none", tabs: 1 }),
    countTokens: async (body, signal) => (await host()).countTokens(body, { signal }),
    modelStatus: async (id) => (await host()).modelStatus(id),
    terminate() {},
  };
}

export interface WorkerBackendOptions extends Omit<EngineHostOptions, "engine" | "probeGpu"> {
  engine: EngineSpec;
  /** A worker to use instead of the default one (e.g. one that calls exposeEngineHost itself). */
  worker?: Worker;
  /** How to reach the worker; default: a dedicated worker (`worker`, or the library's). worker-link.ts has the shared one. */
  link?: () => WorkerLink;
  /** How long a starting worker may take to answer `configure` before requests fail with 503. */
  startTimeoutMs?: number;
  /** Tests only: starts the "default" worker from another URL (a 404, an HTML page) to see the failure path. */
  spawnDefault?: () => { worker: Worker; url: string | undefined };
}

interface WorkerState {
  link: WorkerLink;
  api: Comlink.Remote<WorkerApi>;
  /** Resolves once the worker answered `configure`; rejects with 503 if it never starts. */
  ready: Promise<void>;
  ports: Set<MessagePort>;
  /** The worker answered `configure`. */
  started: boolean;
  /** A start failure is being described (once). */
  failing: boolean;
  failStart: (error: ApiError) => void;
}

/**
 * The host in a worker: a dedicated module worker, or the origin's
 * SharedWorker (`options.link`); every method is the same over either link.
 * A worker that dies (terminated, crashed; for the shared one: this client
 * terminated) fails its in-flight requests with 503; the next request starts
 * (or joins) a fresh one.
 */
export function workerBackend(options: WorkerBackendOptions): Backend {
  installErrorTransfer();
  let current: WorkerState | null = null;
  const connect = options.link ?? (() => dedicatedLink(options.worker, options.spawnDefault));

  /** An app's own Worker cannot be rebuilt: once it is gone, requests fail fast instead of waiting on a dead worker. */
  let customWorkerLost = false;

  /** Why the worker never came up: later requests fail fast with it instead of starting a new failing worker each (until terminate()). */
  let startFailure: ApiError | null = null;

  function start() {
    if (current) return current;
    if (startFailure) throw startFailure;
    if (customWorkerLost) {
      throw new ApiError({ status: 503, code: "worker_lost", message: "The Worker passed to createClient({ worker }) was terminated or crashed, and a Worker object cannot be restarted. Create a new client with a new Worker." });
    }
    const link = connect();
    const api = Comlink.wrap<WorkerApi>(link.endpoint);
    const ports = new Set<MessagePort>();
    const onProgress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
    const onResponseStoreError = options.onResponseStoreError;
    const onStoreError = onResponseStoreError ? Comlink.proxy((wire: ApiErrorInit) => onResponseStoreError(deserializeError(wire) as ApiError)) : undefined;
    const config: WorkerHostConfig = { engine: options.engine, ...pickOptions(options, WORKER_HOST_OPTIONS) };
    const configured = (link.tab ?? Promise.resolve(undefined)).then(async (tab) => {
      const result = await api.configure(config, onProgress, tab, onStoreError);
      if (result?.workerLock) link.watchWorker?.(result.workerLock, (message) => crash(state, message));
      if (result && result.ignored.length > 0) {
        console.warn(`webgpu-openai: the shared worker was configured by another tab; this tab's options ${result.ignored.join(", ")} differ from its and were not applied (the first tab's options win).`);
      }
    });
    // Until the worker answers `configure`, an error event or silence means it never started: fail with 503, never hang.
    let failStart: (error: ApiError) => void = () => {};
    const failed = new Promise<never>((_, reject) => (failStart = reject));
    const timeoutMs = options.startTimeoutMs ?? WORKER_START_TIMEOUT_MS;
    const timer = setTimeout(() => void startFailed(state, { timeoutMs }), timeoutMs);
    const ready = Promise.race([configured, failed]).finally(() => clearTimeout(timer));
    ready.catch(() => {});
    const state: WorkerState = { link, api, ready, ports, started: false, failStart, failing: false };
    configured.then(
      () => (state.started = true),
      () => {
        // A refused configure (a shared worker running another engine) rejects `ready` for the callers and is
        // retried by the next request: the worker that refused may be gone by then. An app's own worker is kept.
        if (current === state && link.restartable) {
          current = null;
          link.close();
        }
      },
    );
    link.onError((message, event) => {
      if (!state.started) void startFailed(state, { event });
      else crash(state, message);
    });
    current = state;
    return state;
  }

  async function startFailed(state: NonNullable<typeof current>, how: { event?: Event; timeoutMs?: number }) {
    if (state.failing || state.started) return;
    state.failing = true;
    state.link.close();
    const error = await describeStartFailure({ url: state.link.url, custom: !state.link.restartable, ...how });
    startFailure = error;
    if (!state.link.restartable) customWorkerLost = true; // even after terminate(): the same Worker object cannot start again
    if (current === state) current = null;
    state.failStart(error);
  }

  function crash(state: NonNullable<typeof current>, message: string) {
    if (current === state) current = null;
    if (!state.link.restartable) customWorkerLost = true;
    const next = !state.link.restartable ? "This client's own Worker cannot be restarted: create a new client with a new Worker." : "The next request starts a fresh worker.";
    const error = new ApiError({ status: 503, code: "worker_lost", message: `${message} ${next}` });
    state.failStart(error); // requests still waiting for the worker to start
    for (const port of state.ports) port.dispatchEvent(new MessageEvent("message", { data: { type: "error", error: serializeError(error) } satisfies PortMessage }));
    state.link.close();
  }

  /** A port pair for one request: port2 goes to the worker, abort goes over port1. */
  function channel(state: NonNullable<typeof current>, signal?: AbortSignal) {
    const { port1, port2 } = new MessageChannel();
    state.ports.add(port1);
    const onAbort = () => port1.postMessage({ type: "abort" });
    // A signal that fired while the worker was starting must still reach it.
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      signal?.removeEventListener("abort", onAbort);
      state.ports.delete(port1);
    };
    return { port1, port2, done };
  }

  /** Rejects with 503 when the worker dies while `call` is pending. */
  function guarded<T>(state: NonNullable<typeof current>, port1: MessagePort, call: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      port1.addEventListener("message", (event: MessageEvent<PortMessage>) => {
        if (event.data.type === "error" && (event.data.error as { code?: string }).code === "worker_lost") reject(deserializeError(event.data.error));
      });
      port1.start();
      call.then(resolve, reject);
    });
  }

  /** The started worker's API, for calls that need no request port. */
  async function started(): Promise<Comlink.Remote<WorkerApi>> {
    const state = start();
    await state.ready;
    return state.api;
  }

  /** A request with its own port: abort goes over it, and it fails with 503 if the worker dies meanwhile. */
  async function withPort<T>(signal: AbortSignal | undefined, call: (api: Comlink.Remote<WorkerApi>, port: MessagePort) => Promise<T>): Promise<T> {
    const state = start();
    await state.ready;
    const { port1, port2, done } = channel(state, signal);
    try {
      return await guarded(state, port1, call(state.api, Comlink.transfer(port2, [port2])));
    } finally {
      done();
      port1.close();
    }
  }

  /** A streamed request: the packed chunks (chat) or events (Responses) arriving on its port go to `queue`. */
  async function streamed<T>(
    signal: AbortSignal,
    queue: ChunkQueue<T>,
    unpack: (message: PortMessage) => T[] | undefined,
    call: (api: Comlink.Remote<WorkerApi>, port: MessagePort) => Promise<void>,
  ): Promise<void> {
    const state = start();
    await state.ready;
    const { port1, port2, done } = channel(state, signal);
    port1.onmessage = (event: MessageEvent<PortMessage>) => {
      const message = event.data;
      if (message.type === "end" || message.type === "error") {
        if (message.type === "end") queue.end();
        else queue.fail(deserializeError(message.error) as ApiError);
        done();
        port1.close();
        return;
      }
      const items = unpack(message);
      if (items) queue.write(items);
    };
    try {
      await guarded(state, port1, call(state.api, Comlink.transfer(port2, [port2])));
    } catch (error) {
      done();
      port1.close();
      throw error;
    }
  }

  const chunksOf = (message: PortMessage) => (message.type === "chunks" ? unpackChunks(message.packed) : undefined);
  const eventsOf = (message: PortMessage) => (message.type === "events" ? unpackEvents(message.packed) : undefined);
  const transcriptOf = (message: PortMessage) => (message.type === "transcript" ? message.events : undefined);
  const completionOf = (message: PortMessage) => (message.type === "completion" ? message.chunks : undefined);
  // The recording's bytes move to the worker instead of being copied (the client read them into a buffer of its own).
  const withAudio = (body: TranscriptionRequestBody) => Comlink.transfer(body, [body.file.data.buffer as ArrayBuffer]);

  return {
    createChatCompletion: (body, signal) => withPort(signal, (api, port) => api.createChatCompletion(withAudioTransfer(body), port)),
    streamChatCompletion: (body, queue, signal) => streamed(signal, queue, chunksOf, (api, port) => api.streamChatCompletion(withAudioTransfer(body), port)),
    createResponse: (body, signal) => withPort(signal, (api, port) => api.createResponse(withAudioTransfer(body), port)),
    streamResponse: (body, queue, signal) => streamed(signal, queue, eventsOf, (api, port) => api.streamResponse(withAudioTransfer(body), port)),
    compactResponse: (body, signal) => withPort(signal, (api, port) => api.compactResponse(body, port)),
    createCompletion: (body, signal) => withPort(signal, (api, port) => api.createCompletion(body, port)),
    streamCompletion: (body, queue, signal) => streamed(signal, queue, completionOf, (api, port) => api.streamCompletion(body, port)),
    createEmbeddings: (body, signal) => withPort(signal, (api, port) => api.createEmbeddings(body, port)),
    createTranscription: (body, signal) => withPort(signal, (api, port) => api.createTranscription(withAudio(body), port)),
    streamTranscription: (body, queue, signal) => streamed(signal, queue, transcriptOf, (api, port) => api.streamTranscription(withAudio(body), port)),
    loadModel: (model, opts) => withPort(opts.signal, (api, port) => api.loadModel(model, port, opts.onProgress ? Comlink.proxy(opts.onProgress) : undefined)),
    retrieveResponse: async (id) => (await started()).retrieveResponse(id),
    deleteResponse: async (id) => (await started()).deleteResponse(id),
    listResponseInputItems: async (id, query) => (await started()).listResponseInputItems(id, query),
    retrieveResponseStream: (id, startingAfter, queue, signal) => streamed(signal, queue, eventsOf, (api, port) => api.retrieveResponseStream(id, startingAfter, port)),
    cancelResponse: async (id) => (await started()).cancelResponse(id),
    listResponses: async (query) => (await started()).listResponses(query),
    clearResponses: async () => (await started()).clearResponses(),
    listModels: async () => (await started()).listModels(),
    retrieveModel: async (id) => (await started()).retrieveModel(id),
    gpuInfo: async () => (await started()).gpuInfo(),
    queueState: async () => (await started()).queueState(),
    cacheList: async () => (await started()).cacheList(),
    cacheDelete: async (id) => (await started()).cacheDelete(id),
    cacheClear: async () => (await started()).cacheClear(),
    cacheUsage: async () => (await started()).cacheUsage(),
    workerInfo: async () => (await started()).workerInfo(),
    countTokens: (body, signal) => withPort(signal, (api, port) => api.countTokens(withAudioTransfer(body), port)),
    modelStatus: async (id) => (await started()).modelStatus(id),
    terminate() {
      startFailure = null;
      if (current) crash(current, "The client was terminated.");
    },
  };
}
