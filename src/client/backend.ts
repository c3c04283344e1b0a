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
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";

export interface Backend {
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
}

/**
 * The host in a dedicated module worker. A worker that dies (terminated,
 * crashed) fails its in-flight requests with 503; the next request starts a
 * fresh one.
 */
export function workerBackend(options: WorkerBackendOptions): Backend {
  installErrorTransfer();
  let current: { worker: Worker; api: Comlink.Remote<WorkerApi>; ready: Promise<void>; ports: Set<MessagePort> } | null = null;

  /** An app's own Worker cannot be rebuilt: once it is gone, requests fail fast instead of waiting on a dead worker. */
  let customWorkerLost = false;

  function start() {
    if (current) return current;
    if (customWorkerLost) {
      throw new ApiError({ status: 503, code: "worker_lost", message: "The Worker passed to createClient({ worker }) was terminated or crashed, and a Worker object cannot be restarted. Create a new client with a new Worker." });
    }
    const worker = options.worker ?? new Worker(new URL("../worker/entry.js", import.meta.url), { type: "module", name: "webgpu-openai" });
    const api = Comlink.wrap<WorkerApi>(worker);
    const ports = new Set<MessagePort>();
    const onProgress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
    const ready = api.configure(
      { engine: options.engine, models: options.models, maxQueue: options.maxQueue, timeoutMs: options.timeoutMs, cache: options.cache },
      onProgress,
    );
    const state = { worker, api, ready, ports };
    worker.addEventListener("error", (event) => {
      event.preventDefault?.();
      crash(state, `The engine worker failed: ${event.message || "unknown error"}.`);
    });
    current = state;
    return state;
  }

  function crash(state: NonNullable<typeof current>, message: string) {
    if (current === state) current = null;
    if (options.worker) customWorkerLost = true;
    const next = options.worker ? "This client's own Worker cannot be restarted: create a new client with a new Worker." : "The next request starts a fresh worker.";
    const error = new ApiError({ status: 503, code: "worker_lost", message: `${message} ${next}` });
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
      if (current) crash(current, "The client was terminated.");
    },
  };
}
