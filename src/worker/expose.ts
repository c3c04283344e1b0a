/**
 * Serves an EngineHost to the page over comlink. The default worker
 * (entry.ts) calls this; an app can write its own worker that builds the host
 * its way (e.g. with a scripted engine) and calls `exposeEngineHost` too.
 */
import * as Comlink from "comlink";
import { EngineHost } from "../host/engine-host.js";
import { createScriptedEngine } from "../engine/scripted.js";
import type { LoadProgress } from "../engine/types.js";
import type { PortCommand, WorkerApi, WorkerHostConfig } from "./protocol.js";
import { EventPortSink, PortSink } from "./port-sink.js";
import { installErrorTransfer } from "./transfer.js";

/** An AbortSignal that fires when the page posts `abort` on the port. */
function abortSignalOf(port: MessagePort): AbortSignal {
  const controller = new AbortController();
  port.onmessage = (event: MessageEvent<PortCommand>) => {
    if (event.data?.type === "abort") controller.abort();
  };
  return controller.signal;
}

export function exposeEngineHost(initial?: EngineHost, endpoint: Comlink.Endpoint = self as unknown as Comlink.Endpoint): void {
  installErrorTransfer();
  let host = initial ?? null;
  const ready = () => {
    host ??= new EngineHost();
    return host;
  };

  const api: WorkerApi = {
    async configure(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void) {
      if (initial) return; // the worker's own host wins
      host = new EngineHost({
        engine: config.engine.kind === "scripted" ? createScriptedEngine(config.engine) : undefined,
        models: config.models,
        maxQueue: config.maxQueue,
        timeoutMs: config.timeoutMs,
        cache: config.cache,
        responsesStore: config.responsesStore,
        onProgress,
      });
    },
    createChatCompletion(body, port) {
      const signal = abortSignalOf(port);
      return ready()
        .createChatCompletion(body, { signal })
        .finally(() => port.close());
    },
    streamChatCompletion(body, port) {
      const signal = abortSignalOf(port);
      return ready().streamChatCompletion(body, new PortSink(port), { signal });
    },
    createResponse(body, port) {
      const signal = abortSignalOf(port);
      return ready()
        .createResponse(body, { signal })
        .finally(() => port.close());
    },
    streamResponse(body, port) {
      const signal = abortSignalOf(port);
      return ready().streamResponse(body, new EventPortSink(port), { signal });
    },
    retrieveResponse: (id) => ready().retrieveResponse(id),
    deleteResponse: (id) => ready().deleteResponse(id),
    listResponseInputItems: (id, query) => ready().listResponseInputItems(id, query),
    compactResponse(body, port) {
      const signal = abortSignalOf(port);
      return ready()
        .compactResponse(body, { signal })
        .finally(() => port.close());
    },
    createEmbeddings(body, port) {
      const signal = abortSignalOf(port);
      return ready()
        .createEmbeddings(body, { signal })
        .finally(() => port.close());
    },
    listModels: () => ready().listModels(),
    retrieveModel: (id) => ready().retrieveModel(id),
    gpuInfo: () => ready().gpuInfo(),
    loadModel(model, port, onProgress) {
      const signal = abortSignalOf(port);
      return ready()
        .loadModel(model, { signal, onProgress })
        .finally(() => port.close());
    },
    queueState: () => ready().queueState(),
    cacheList: () => ready().cacheList(),
    cacheDelete: (id) => ready().cacheDelete(id),
    cacheClear: () => ready().cacheClear(),
    cacheUsage: () => ready().cacheUsage(),
  };
  Comlink.expose(api, endpoint);
}
