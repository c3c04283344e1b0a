/**
 * How the client reaches its EngineHost: directly (in-process) or through a
 * worker. Both look the same to create-client.ts.
 */
import * as Comlink from "comlink";
import type { EngineHost, EngineHostOptions } from "../host/engine-host.js";
import type { LoadProgress } from "../engine/types.js";
import { ApiError, type ApiErrorInit } from "../protocol/api-error.js";
import { loadModule } from "../lazy-imports.js";
import type { EngineSpec, PortMessage, WorkerApi, WorkerHostConfig, WorkerInfo } from "../worker/protocol.js";
import { endpointEntries, leading, type BodyTransfer, type Endpoint, type EndpointName, type EndpointSpec, type HostOptionsArg, type HostResult, type LeadingArgs, type StreamItem, type StreamWire } from "../host/endpoints.js";
import { WORKER_HOST_OPTIONS, pickOptions } from "../host/host-options.js";
import { deserializeError, installErrorTransfer, serializeError } from "../worker/transfer.js";
import { withAudioTransfer } from "./audio-transfer.js";
import { unpackChunks } from "../worker/chunk-wire.js";
import type { ChunkQueue } from "./chunk-queue.js";
import { dedicatedLink, type WorkerLink } from "./worker-link.js";
import { WORKER_START_TIMEOUT_MS, describeStartFailure } from "./worker-start.js";
import { unpackEvents } from "../worker/event-wire.js";
import type { TranscriptionRequestBody } from "../protocol/transcription-types.js";

/** The leading arguments as the client passes them: a file upload's body is the one the client read (its bytes are transferred). */
type ClientArgs<K extends EndpointName> = Endpoint<K> extends { transfer: "file" } ? [body: TranscriptionRequestBody] : LeadingArgs<K>;

/** How the client calls endpoint `K` of the table (host/endpoints.ts): with the request's signal, a stream with its queue too. */
type BackendMethod<K extends EndpointName> =
  Endpoint<K> extends { kind: "stream" } ? (...args: [...ClientArgs<K>, queue: ChunkQueue<StreamItem<K>>, signal: AbortSignal]) => Promise<void>
  : Endpoint<K> extends { progress: true } ? (...args: [...ClientArgs<K>, options: HostOptionsArg<K>]) => Promise<Awaited<HostResult<K>>>
  : Endpoint<K> extends { port: true } ? (...args: [...ClientArgs<K>, signal: AbortSignal]) => Promise<Awaited<HostResult<K>>>
  : (...args: LeadingArgs<K>) => Promise<Awaited<HostResult<K>>>;

/** What create-client.ts calls: every endpoint of the table, plus the two about the worker. */
export type Backend = { [K in EndpointName]: BackendMethod<K> } & {
  /** Which worker serves this client, and how many tabs it serves. */
  workerInfo(): Promise<WorkerInfo>;
  terminate(): void;
};

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

/** The table's endpoints as `method(name, spec)` builds them, typed as the Backend's. */
function endpointMethods(method: (name: EndpointName, spec: EndpointSpec) => AnyMethod): Omit<Backend, "workerInfo" | "terminate"> {
  return Object.fromEntries(endpointEntries.map(([name, spec]) => [name, method(name, spec)])) as unknown as Omit<Backend, "workerInfo" | "terminate">;
}

export function inProcessBackend(options: EngineHostOptions): Backend {
  let hostPromise: Promise<EngineHost> | null = null;
  const host = () => (hostPromise ??= loadModule("engineHost", () => import("../host/engine-host.js")).then(({ EngineHost }) => new EngineHost(options)));
  const call = async (name: EndpointName, args: unknown[]) => {
    const served = await host();
    return (served[name] as (...args: unknown[]) => unknown).apply(served, args);
  };
  return {
    ...endpointMethods((name, spec) => {
      const count = spec.args.length;
      if (spec.kind === "stream") return async (...args) => call(name, [...leading(args, count), args[count], { signal: args[count + 1] }]);
      if (!spec.port) return async (...args) => call(name, leading(args, count));
      // loadModel takes its `{ signal, onProgress }` as given; the others a signal.
      return async (...args) => call(name, [...leading(args, count), spec.progress ? args[count] : { signal: args[count] }]);
    }),
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
      // A shared worker asks this tab to start the Workers it cannot start itself (llama.cpp's, for GGUF models).
      const hostWorker = link.hostWorker ? Comlink.proxy(link.hostWorker) : undefined;
      const result = await api.configure(config, onProgress, tab, onStoreError, hostWorker);
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
  const unpackers: Record<StreamWire, (message: PortMessage) => unknown[] | undefined> = { chunks: chunksOf, events: eventsOf, transcript: transcriptOf, completion: completionOf };
  // The recording's bytes move to the worker instead of being copied (the client read them into a buffer of its own).
  const withFile = (body: TranscriptionRequestBody) => Comlink.transfer(body, [body.file.data.buffer as ArrayBuffer]);
  const transfers: Record<BodyTransfer, (body: never) => unknown> = { audio: withAudioTransfer, file: withFile };
  /** The leading arguments as they go to the worker: the body's buffers marked for transfer where the entry says so. */
  const outgoing = (spec: EndpointSpec, args: unknown[]) => {
    const lead = leading(args, spec.args.length);
    if (spec.kind === "unary" && !spec.port) return lead;
    if (spec.transfer) lead[0] = transfers[spec.transfer](lead[0] as never);
    return lead;
  };
  type RemoteMethod = (...args: unknown[]) => Promise<unknown>;
  const remote = (api: Comlink.Remote<WorkerApi>, name: EndpointName) => (api as unknown as Record<EndpointName, RemoteMethod>)[name];

  return {
    ...endpointMethods((name, spec) => {
      const count = spec.args.length;
      if (spec.kind === "stream") {
        return (...args) => streamed(args[count + 1] as AbortSignal, args[count] as ChunkQueue<unknown>, unpackers[spec.wire], (api, port) => remote(api, name)(...outgoing(spec, args), port) as Promise<void>);
      }
      if (!spec.port) return async (...args) => remote(await started(), name)(...leading(args, count));
      if (spec.progress) {
        // loadModel: the progress callback crosses as a proxy the worker calls back.
        return (...args) => {
          const { signal, onProgress } = args[count] as { signal?: AbortSignal; onProgress?: (progress: LoadProgress) => void };
          return withPort(signal, (api, port) => remote(api, name)(...leading(args, count), port, onProgress ? Comlink.proxy(onProgress) : undefined));
        };
      }
      return (...args) => withPort(args[count] as AbortSignal, (api, port) => remote(api, name)(...outgoing(spec, args), port));
    }),
    workerInfo: async () => (await started()).workerInfo(),
    terminate() {
      startFailure = null;
      if (current) crash(current, "The client was terminated.");
    },
  };
}
