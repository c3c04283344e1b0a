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
import type { EngineSpec, PortMessage, WorkerApi, WorkerInfo } from "../worker/protocol.js";
import { deserializeError, installErrorTransfer, serializeError } from "../worker/transfer.js";
import { unpackChunks } from "../worker/chunk-wire.js";
import type { ChunkQueue } from "./chunk-queue.js";
import { dedicatedLink, type WorkerLink } from "./worker-link.js";

export interface Backend {
  createChatCompletion(body: unknown, signal: AbortSignal): Promise<ChatCompletion>;
  streamChatCompletion(body: unknown, queue: ChunkQueue, signal: AbortSignal): Promise<void>;
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
  terminate(): void;
}

export function inProcessBackend(options: EngineHostOptions): Backend {
  let hostPromise: Promise<EngineHost> | null = null;
  const host = () => (hostPromise ??= import("../host/engine-host.js").then(({ EngineHost }) => new EngineHost(options)));
  return {
    createChatCompletion: async (body, signal) => (await host()).createChatCompletion(body, { signal }),
    streamChatCompletion: async (body, queue, signal) => (await host()).streamChatCompletion(body, queue, { signal }),
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
    terminate() {},
  };
}

export interface WorkerBackendOptions extends Omit<EngineHostOptions, "engine" | "probeGpu"> {
  engine: EngineSpec;
  /** A worker to use instead of the default one (e.g. one that calls exposeEngineHost itself). */
  worker?: Worker;
  /** How to reach the worker; default: a dedicated worker (`worker`, or the library's). worker-link.ts has the shared one. */
  link?: () => WorkerLink;
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
  let current: { link: WorkerLink; api: Comlink.Remote<WorkerApi>; ready: Promise<void>; ports: Set<MessagePort> } | null = null;
  const connect = options.link ?? (() => dedicatedLink(options.worker));

  /** An app's own Worker cannot be rebuilt: once it is gone, requests fail fast instead of waiting on a dead worker. */
  let customWorkerLost = false;

  function start() {
    if (current) return current;
    if (customWorkerLost) {
      throw new ApiError({ status: 503, code: "worker_lost", message: "The Worker passed to createClient({ worker }) was terminated or crashed, and a Worker object cannot be restarted. Create a new client with a new Worker." });
    }
    const link = connect();
    const api = Comlink.wrap<WorkerApi>(link.endpoint);
    const ports = new Set<MessagePort>();
    const onProgress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
    const config = { engine: options.engine, models: options.models, maxQueue: options.maxQueue, timeoutMs: options.timeoutMs, cache: options.cache };
    const ready = (link.tab ?? Promise.resolve(undefined)).then(async (tab) => {
      const result = await api.configure(config, onProgress, tab);
      if (result?.workerLock) link.watchWorker?.(result.workerLock, (message) => crash(state, message));
      if (result && result.ignored.length > 0) {
        console.warn(`webgpu-openai: the shared worker was configured by another tab; this tab's options ${result.ignored.join(", ")} differ from its and were not applied (the first tab's options win).`);
      }
    });
    const state = { link, api, ready, ports };
    link.onError((message) => crash(state, message));
    // A refused configure (a shared worker running another engine) is retried by the next request:
    // the worker that refused may be gone by then. An app's own worker is kept as it is.
    ready.catch(() => {
      if (current === state && link.restartable) {
        current = null;
        link.close();
      }
    });
    current = state;
    return state;
  }

  function crash(state: NonNullable<typeof current>, message: string) {
    if (current === state) current = null;
    if (!state.link.restartable) customWorkerLost = true;
    const next = !state.link.restartable ? "This client's own Worker cannot be restarted: create a new client with a new Worker." : "The next request starts a fresh worker.";
    const error = new ApiError({ status: 503, code: "worker_lost", message: `${message} ${next}` });
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
    workerInfo: async () => {
      const state = start();
      await state.ready;
      return state.api.workerInfo();
    },
    terminate() {
      if (current) crash(current, "The client was terminated.");
    },
  };
}
