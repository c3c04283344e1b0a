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
import { isScriptedSpec, type ConfigureResult, type PortCommand, type StoreErrorListener, type TabHello, type TabWorkerStarter, type WorkerApi, type WorkerHostConfig, type WorkerInfo } from "./protocol.js";
import { portSinkFor } from "./port-sink.js";
import { endpointEntries, leading, type EndpointName, type EndpointSpec } from "../host/endpoints.js";
import { installErrorTransfer, serializeError } from "./transfer.js";
import { guardedEndpoint } from "./port-guard.js";
import { WORKER_HOST_OPTIONS, pickOptions } from "../host/host-options.js";

/** How one connection reaches its host: the dedicated worker's own, or a SharedWorker's host shared by every tab. */
export interface HostAccess {
  configure(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void, tab?: TabHello, onStoreError?: StoreErrorListener, hostWorker?: TabWorkerStarter): Promise<ConfigureResult | void>;
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
    // web-llm is the host's own default; another name is a kind registered in this worker (a 400 naming it where none is).
    engine: isScriptedSpec(config.engine) ? createScriptedEngine(config.engine) : config.engine.kind === "webllm" ? undefined : config.engine.kind,
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

  /** How the worker serves one endpoint of the table: a port becomes the request's signal, a stream's items go out on it. */
  const serve = (name: EndpointName, spec: EndpointSpec) => {
    const count = spec.args.length;
    const method = (host: EngineHost) => (host[name] as (...args: unknown[]) => unknown).bind(host);
    if (spec.kind === "stream") {
      return (...args: unknown[]) => {
        const port = args[count] as MessagePort;
        return streamOn(port, (host, signal) => method(host)(...leading(args, count), portSinkFor(spec.wire, port), { signal, client }) as Promise<void>);
      };
    }
    if (!spec.port) return (...args: unknown[]) => method(ready())(...leading(args, count));
    return (...args: unknown[]) => {
      const port = args[count] as MessagePort;
      // loadModel's options carry its progress callback (a proxy to the page), not the client.
      const options = spec.progress ? (signal: AbortSignal) => ({ signal, onProgress: args[count + 1] }) : (signal: AbortSignal) => ({ signal, client });
      return withPort(port, (host, signal) => method(host)(...leading(args, count), options(signal)) as Promise<unknown>);
    };
  };

  const api = {
    configure: (config, onProgress, tab, onStoreError, hostWorker) => access.configure(config, onProgress, tab, onStoreError, hostWorker),
    workerInfo: () => access.info(),
    ...Object.fromEntries(endpointEntries.map(([name, spec]) => [name, serve(name, spec)])),
  } as WorkerApi;
  // Only calls of `api`'s own methods: comlink alone would also serve GET, SET, CONSTRUCT and ENDPOINT on any path.
  Comlink.expose(api, guardedEndpoint(endpoint, api));
}
