/**
 * Serves an EngineHost to the page over comlink. The default worker
 * (entry.ts) calls this; an app can write its own worker that builds the host
 * its way (e.g. with a scripted engine) and calls `exposeEngineHost` too.
 * A SharedWorker (shared-host.ts) calls it once per connected tab, with a
 * `HostAccess` that hands every tab the one host and aborts a tab's requests
 * when the tab is gone: every method below serves both kinds of worker.
 */
import * as Comlink from "comlink";
import { EngineHost } from "../host/engine-host.js";
import { createScriptedEngine } from "../engine/scripted.js";
import type { LoadProgress } from "../engine/types.js";
import type { ConfigureResult, PortCommand, StoreErrorListener, TabHello, WorkerApi, WorkerHostConfig, WorkerInfo } from "./protocol.js";
import { CompletionPortSink, EventPortSink, PortSink, TranscriptPortSink } from "./port-sink.js";
import { installErrorTransfer, serializeError } from "./transfer.js";
import { guardedEndpoint } from "./port-guard.js";
import { WORKER_HOST_OPTIONS, pickOptions } from "../host/host-options.js";

/** How one connection reaches its host: the dedicated worker's own, or a SharedWorker's host shared by every tab. */
export interface HostAccess {
  configure(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void, tab?: TabHello, onStoreError?: StoreErrorListener): Promise<ConfigureResult | void>;
  host(): EngineHost;
  info(): WorkerInfo;
  /** Aborts when the page behind this connection is gone (a SharedWorker's tab); absent for a dedicated worker. */
  gone?: AbortSignal;
  /** This connection's id among the host's clients (a SharedWorker's tab): conversation memory is per client. */
  client?: string;
}

/** The host built from the page's `configure` (or the worker's own `initial` host, which wins). */
export function hostFromConfig(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void, onStoreError?: StoreErrorListener): EngineHost {
  return new EngineHost({
    engine: config.engine.kind === "scripted" ? createScriptedEngine(config.engine) : undefined,
    ...pickOptions(config, WORKER_HOST_OPTIONS),
    onProgress,
    // To the page as plain fields (an ApiError's own fields do not survive structured clone); a gone page's proxy never answers, and that is fine.
    onResponseStoreError: onStoreError ? (error) => void Promise.resolve(onStoreError(serializeError(error))).catch(() => undefined) : undefined,
  });
}

function dedicatedAccess(initial?: EngineHost): HostAccess {
  let host = initial ?? null;
  return {
    async configure(config, onProgress, _tab, onStoreError) {
      if (initial) return; // the worker's own host wins
      host = hostFromConfig(config, onProgress, onStoreError);
    },
    host: () => (host ??= new EngineHost()),
    info: () => ({ worker: "dedicated", tabs: 1 }),
  };
}

/** An AbortSignal that fires when the page posts `abort` on the port, or when the page is gone. */
function portSignal(port: MessagePort, gone?: AbortSignal): AbortSignal {
  const controller = new AbortController();
  port.onmessage = (event: MessageEvent<PortCommand>) => {
    if (event.data?.type === "abort") controller.abort();
  };
  if (gone?.aborted) controller.abort();
  else gone?.addEventListener("abort", () => controller.abort(), { once: true });
  return controller.signal;
}

export function exposeEngineHost(
  initial?: EngineHost,
  endpoint: Comlink.Endpoint = self as unknown as Comlink.Endpoint,
  access: HostAccess = dedicatedAccess(initial),
): void {
  installErrorTransfer();
  const ready = () => access.host();
  const abortSignalOf = (port: MessagePort) => portSignal(port, access.gone);
  const client = access.client;
  /**
   * A request with its own port: abort arrives on it, and it closes once the
   * call settles, however it fails (a host method or `ready()` that throws
   * before returning a promise included).
   */
  const withPort = async <T>(port: MessagePort, call: (host: EngineHost, signal: AbortSignal) => Promise<T>): Promise<T> => {
    const signal = abortSignalOf(port);
    try {
      return await call(ready(), signal);
    } finally {
      port.close();
    }
  };
  /** A stream: its sink closes the port once the stream ends; a stream that never starts closes it here. */
  const streamOn = async (port: MessagePort, start: (host: EngineHost, signal: AbortSignal) => Promise<void>): Promise<void> => {
    const signal = abortSignalOf(port);
    try {
      await start(ready(), signal);
    } catch (error) {
      port.close();
      throw error;
    }
  };

  const api: WorkerApi = {
    configure: (config, onProgress, tab, onStoreError) => access.configure(config, onProgress, tab, onStoreError),
    workerInfo: () => access.info(),
    createChatCompletion: (body, port) => withPort(port, (host, signal) => host.createChatCompletion(body, { signal, client })),
    streamChatCompletion: (body, port) => streamOn(port, (host, signal) => host.streamChatCompletion(body, new PortSink(port), { signal, client })),
    createResponse: (body, port) => withPort(port, (host, signal) => host.createResponse(body, { signal, client })),
    streamResponse: (body, port) => streamOn(port, (host, signal) => host.streamResponse(body, new EventPortSink(port), { signal, client })),
    retrieveResponse: (id) => ready().retrieveResponse(id),
    deleteResponse: (id) => ready().deleteResponse(id),
    listResponseInputItems: (id, query) => ready().listResponseInputItems(id, query),
    retrieveResponseStream: (id, startingAfter, port) => streamOn(port, (host, signal) => host.retrieveResponseStream(id, startingAfter, new EventPortSink(port), { signal })),
    cancelResponse: (id) => ready().cancelResponse(id),
    listResponses: (query) => ready().listResponses(query),
    clearResponses: () => ready().clearResponses(),
    compactResponse: (body, port) => withPort(port, (host, signal) => host.compactResponse(body, { signal, client })),
    createCompletion: (body, port) => withPort(port, (host, signal) => host.createCompletion(body, { signal, client })),
    streamCompletion: (body, port) => streamOn(port, (host, signal) => host.streamCompletion(body, new CompletionPortSink(port), { signal, client })),
    createEmbeddings: (body, port) => withPort(port, (host, signal) => host.createEmbeddings(body, { signal })),
    createTranscription: (body, port) => withPort(port, (host, signal) => host.createTranscription(body, { signal })),
    streamTranscription: (body, port) => streamOn(port, (host, signal) => host.streamTranscription(body, new TranscriptPortSink(port), { signal })),
    listModels: () => ready().listModels(),
    retrieveModel: (id) => ready().retrieveModel(id),
    gpuInfo: () => ready().gpuInfo(),
    loadModel: (model, port, onProgress) => withPort(port, (host, signal) => host.loadModel(model, { signal, onProgress })),
    queueState: () => ready().queueState(),
    cacheList: () => ready().cacheList(),
    cacheDelete: (id) => ready().cacheDelete(id),
    cacheClear: () => ready().cacheClear(),
    cacheUsage: () => ready().cacheUsage(),
    countTokens: (body, port) => withPort(port, (host, signal) => host.countTokens(body, { signal })),
    modelStatus: (id) => ready().modelStatus(id),
  };
  // Only calls of `api`'s own methods: comlink alone would also serve GET, SET, CONSTRUCT and ENDPOINT on any path.
  Comlink.expose(api, guardedEndpoint(endpoint, api));
}
