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
import { ApiError } from "../protocol/api-error.js";
import type { EngineSpec, PortMessage, WorkerApi } from "../worker/protocol.js";
import { deserializeError, installErrorTransfer, serializeError } from "../worker/transfer.js";
import { unpackChunks } from "../worker/chunk-wire.js";
import type { ChunkQueue } from "./chunk-queue.js";
import { WORKER_START_TIMEOUT_MS, describeStartFailure, startDefaultWorker } from "./worker-start.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { unpackEvents } from "../worker/event-wire.js";
import type { CompactResource } from "../protocol/responses/compact.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";

export interface Backend {
  createResponse(body: unknown, signal: AbortSignal): Promise<ResponseObject>;
  streamResponse(body: unknown, queue: ChunkQueue<ResponseStreamEvent>, signal: AbortSignal): Promise<void>;
  retrieveResponse(id: string): Promise<ResponseObject>;
  deleteResponse(id: string): Promise<ResponseDeleted>;
  listResponseInputItems(id: string, query?: InputItemListQuery): Promise<InputItemList>;
  compactResponse(body: unknown, signal: AbortSignal): Promise<CompactResource>;
  createChatCompletion(body: unknown, signal: AbortSignal): Promise<ChatCompletion>;
  streamChatCompletion(body: unknown, queue: ChunkQueue, signal: AbortSignal): Promise<void>;
  createEmbeddings(body: unknown, signal: AbortSignal): Promise<CreateEmbeddingResponse>;
  listModels(): Promise<ModelList>;
  retrieveModel(id: string): Promise<ModelObject>;
  gpuInfo(): Promise<GpuProbe>;
  loadModel(model: string, options: { onProgress?: (p: LoadProgress) => void; signal?: AbortSignal }): Promise<{ model: string }>;
  queueState(): Promise<{ waiting: number; running: boolean }>;
  cacheList(): Promise<CachedModel[]>;
  cacheDelete(id: string): Promise<{ id: string; deleted: boolean }>;
  cacheClear(): Promise<void>;
  cacheUsage(): Promise<CacheUsage>;
  terminate(): void;
}

export function inProcessBackend(options: EngineHostOptions): Backend {
  let hostPromise: Promise<EngineHost> | null = null;
  const host = () => (hostPromise ??= import("../host/engine-host.js").then(({ EngineHost }) => new EngineHost(options)));
  return {
    createChatCompletion: async (body, signal) => (await host()).createChatCompletion(body, { signal }),
    streamChatCompletion: async (body, queue, signal) => (await host()).streamChatCompletion(body, queue, { signal }),
    createResponse: async (body, signal) => (await host()).createResponse(body, { signal }),
    streamResponse: async (body, queue, signal) => (await host()).streamResponse(body, queue, { signal }),
    retrieveResponse: async (id) => (await host()).retrieveResponse(id),
    deleteResponse: async (id) => (await host()).deleteResponse(id),
    listResponseInputItems: async (id, query) => (await host()).listResponseInputItems(id, query),
    compactResponse: async (body, signal) => (await host()).compactResponse(body, { signal }),
    createEmbeddings: async (body, signal) => (await host()).createEmbeddings(body, { signal }),
    listModels: async () => (await host()).listModels(),
    retrieveModel: async (id) => (await host()).retrieveModel(id),
    gpuInfo: async () => (await host()).gpuInfo(),
    loadModel: async (model, opts) => (await host()).loadModel(model, opts),
    queueState: async () => (await host()).queueState(),
    cacheList: async () => (await host()).cacheList(),
    cacheDelete: async (id) => (await host()).cacheDelete(id),
    cacheClear: async () => (await host()).cacheClear(),
    cacheUsage: async () => (await host()).cacheUsage(),
    terminate() {},
  };
}

export interface WorkerBackendOptions extends Omit<EngineHostOptions, "engine" | "probeGpu"> {
  engine: EngineSpec;
  /** A worker to use instead of the default one (e.g. one that calls exposeEngineHost itself). */
  worker?: Worker;
  /** How long a starting worker may take to answer `configure` before requests fail with 503. */
  startTimeoutMs?: number;
  /** Tests only: starts the "default" worker from another URL (a 404, an HTML page) to see the failure path. */
  spawnDefault?: () => { worker: Worker; url: string | undefined };
}

/** The literal pattern bundlers recognise and rewrite: keep it one expression, relative to this file. */
const spawnDefaultWorker = () =>
  startDefaultWorker("webgpu-openai", () => new Worker(new URL("../worker/entry.js", import.meta.url), { type: "module", name: "webgpu-openai" }));

interface WorkerState {
  worker: Worker;
  api: Comlink.Remote<WorkerApi>;
  /** Resolves once the worker answered `configure`; rejects with 503 if it never starts. */
  ready: Promise<void>;
  ports: Set<MessagePort>;
  /** The worker answered `configure`. */
  started: boolean;
  /** A start failure is being described (once). */
  failing: boolean;
  failStart: (error: ApiError) => void;
  /** The default worker's script URL, as the app's bundler wrote it (unknown for an app's own Worker). */
  url: string | undefined;
}

/**
 * The host in a dedicated module worker. A worker that dies (terminated,
 * crashed) fails its in-flight requests with 503; the next request starts a
 * fresh one.
 */
export function workerBackend(options: WorkerBackendOptions): Backend {
  installErrorTransfer();
  let current: WorkerState | null = null;

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
    const { worker, url } = options.worker
      ? { worker: options.worker, url: undefined }
      : (options.spawnDefault ?? spawnDefaultWorker)();
    const api = Comlink.wrap<WorkerApi>(worker);
    const ports = new Set<MessagePort>();
    const onProgress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
    const configured = api.configure(
      { engine: options.engine, models: options.models, maxQueue: options.maxQueue, timeoutMs: options.timeoutMs, cache: options.cache, responsesStore: options.responsesStore },
      onProgress,
    );
    // Until the worker answers `configure`, an error event or silence means it never started: fail with 503, never hang.
    let failStart: (error: ApiError) => void = () => {};
    const failed = new Promise<never>((_, reject) => (failStart = reject));
    const timeoutMs = options.startTimeoutMs ?? WORKER_START_TIMEOUT_MS;
    const timer = setTimeout(() => void startFailed(state, { timeoutMs }), timeoutMs);
    const ready = Promise.race([configured, failed]).finally(() => clearTimeout(timer));
    ready.catch(() => {});
    const state: WorkerState = { worker, api, ready, ports, started: false, failStart, url, failing: false };
    configured.then(
      () => (state.started = true),
      () => {}, // a configure that throws rejects `ready` (the race) for the callers
    );
    worker.addEventListener("error", (event) => {
      event.preventDefault?.();
      if (!state.started) void startFailed(state, { event });
      else crash(state, `The engine worker failed: ${(event as ErrorEvent).message || "unknown error"}.`);
    });
    current = state;
    return state;
  }

  async function startFailed(state: NonNullable<typeof current>, how: { event?: Event; timeoutMs?: number }) {
    if (state.failing || state.started) return;
    state.failing = true;
    state.worker.terminate();
    const error = await describeStartFailure({ url: state.url, custom: options.worker !== undefined, ...how });
    startFailure = error;
    if (options.worker) customWorkerLost = true; // even after terminate(): the same Worker object cannot start again
    if (current === state) current = null;
    state.failStart(error);
  }

  function crash(state: NonNullable<typeof current>, message: string) {
    if (current === state) current = null;
    if (options.worker) customWorkerLost = true;
    const next = options.worker ? "This client's own Worker cannot be restarted: create a new client with a new Worker." : "The next request starts a fresh worker.";
    const error = new ApiError({ status: 503, code: "worker_lost", message: `${message} ${next}` });
    state.failStart(error); // requests still waiting for the worker to start
    for (const port of state.ports) port.dispatchEvent(new MessageEvent("message", { data: { type: "error", error: serializeError(error) } satisfies PortMessage }));
    state.worker.terminate();
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

  return {
    async createChatCompletion(body, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      try {
        return await guarded(state, port1, state.api.createChatCompletion(body, Comlink.transfer(port2, [port2])));
      } finally {
        done();
        port1.close();
      }
    },
    async streamChatCompletion(body, queue, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      port1.onmessage = (event: MessageEvent<PortMessage>) => {
        const message = event.data;
        if (message.type === "chunks") queue.write(unpackChunks(message.packed));
        else if (message.type === "events") return;
        else {
          if (message.type === "end") queue.end();
          else queue.fail(deserializeError(message.error) as ApiError);
          done();
          port1.close();
        }
      };
      try {
        await guarded(state, port1, state.api.streamChatCompletion(body, Comlink.transfer(port2, [port2])));
      } catch (error) {
        done();
        port1.close();
        throw error;
      }
    },
    async createResponse(body, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      try {
        return await guarded(state, port1, state.api.createResponse(body, Comlink.transfer(port2, [port2])));
      } finally {
        done();
        port1.close();
      }
    },
    async createEmbeddings(body, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      try {
        return await guarded(state, port1, state.api.createEmbeddings(body, Comlink.transfer(port2, [port2])));
      } finally {
        done();
        port1.close();
      }
    },
    async streamResponse(body, queue, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      port1.onmessage = (event: MessageEvent<PortMessage>) => {
        const message = event.data;
        if (message.type === "events") queue.write(unpackEvents(message.packed));
        else if (message.type === "chunks") return;
        else {
          if (message.type === "end") queue.end();
          else queue.fail(deserializeError(message.error) as ApiError);
          done();
          port1.close();
        }
      };
      try {
        await guarded(state, port1, state.api.streamResponse(body, Comlink.transfer(port2, [port2])));
      } catch (error) {
        done();
        port1.close();
        throw error;
      }
    },
    async compactResponse(body, signal) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, signal);
      try {
        return await guarded(state, port1, state.api.compactResponse(body, Comlink.transfer(port2, [port2])));
      } finally {
        done();
        port1.close();
      }
    },
    retrieveResponse: async (id) => {
      const state = start();
      await state.ready;
      return state.api.retrieveResponse(id);
    },
    deleteResponse: async (id) => {
      const state = start();
      await state.ready;
      return state.api.deleteResponse(id);
    },
    listResponseInputItems: async (id, query) => {
      const state = start();
      await state.ready;
      return state.api.listResponseInputItems(id, query);
    },
    listModels: async () => {
      const state = start();
      await state.ready;
      return state.api.listModels();
    },
    retrieveModel: async (id) => {
      const state = start();
      await state.ready;
      return state.api.retrieveModel(id);
    },
    gpuInfo: async () => {
      const state = start();
      await state.ready;
      return state.api.gpuInfo();
    },
    async loadModel(model, opts) {
      const state = start();
      await state.ready;
      const { port1, port2, done } = channel(state, opts.signal);
      try {
        return await guarded(state, port1, state.api.loadModel(model, Comlink.transfer(port2, [port2]), opts.onProgress ? Comlink.proxy(opts.onProgress) : undefined));
      } finally {
        done();
        port1.close();
      }
    },
    queueState: async () => {
      const state = start();
      await state.ready;
      return state.api.queueState();
    },
    cacheList: async () => {
      const state = start();
      await state.ready;
      return state.api.cacheList();
    },
    cacheDelete: async (id) => {
      const state = start();
      await state.ready;
      return state.api.cacheDelete(id);
    },
    cacheClear: async () => {
      const state = start();
      await state.ready;
      return state.api.cacheClear();
    },
    cacheUsage: async () => {
      const state = start();
      await state.ready;
      return state.api.cacheUsage();
    },
    terminate() {
      startFailure = null;
      if (current) crash(current, "The client was terminated.");
    },
  };
}
