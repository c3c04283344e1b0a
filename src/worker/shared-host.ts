/// <reference lib="webworker" />
/**
 * One EngineHost for every tab of the origin, in a SharedWorker. Each tab
 * connects over its own MessagePort and is served by exposeEngineHost with the
 * same API as a dedicated worker; what is shared lives here:
 *
 * - the host: the first tab's `configure` builds it, later tabs join it (a
 *   model is downloaded and loaded once, all requests share one FIFO queue,
 *   and the KV-reuse memory is keyed by conversation, never by tab);
 * - the tabs' lives: a SharedWorker port has no close event, so each tab holds
 *   a Web Lock named for its connection and the worker asks for the same lock;
 *   the browser grants it the moment the tab is gone (closed, reloaded,
 *   crashed) or leaves (`client.terminate()`), and the worker then aborts that
 *   tab's running and queued requests. The other tabs' requests go on.
 *   A tab also says goodbye on its port when its page unloads for good or
 *   its client is terminated: where Web Locks are missing (an insecure
 *   context) that is the only sign of a tab leaving (one that crashes there
 *   counts until the worker ends).
 *   The other way round, the worker holds a lock for its whole life, so tabs
 *   learn when it dies (Chromium may run it in the process of one of the
 *   tabs, and a crash of that process ends it): their requests fail with 503
 *   `worker_lost` instead of waiting forever, and the next one starts a fresh
 *   worker.
 * - Workers: Chromium gives a SharedWorker no Worker constructor, so the
 *   Worker a GGUF engine runs llama.cpp in is started by a connected tab (the
 *   longest-connected one that offers to, passing over one that failed to)
 *   and relayed to this worker over a MessagePort (engine/wllama/wllama-tab-host.ts); when that tab is gone its
 *   requests fail with 503 and the next load is hosted by another tab.
 * - load progress: reported to every connected tab that asked for it, since
 *   the model one tab loads is the model all of them use; so are failed
 *   writes of the response store, which every tab reads.
 *
 * When the last tab is gone the browser ends the worker, and with it the GPU
 * device and its memory.
 */
import * as Comlink from "comlink";
import type { EngineHost } from "../host/engine-host.js";
import { ApiError } from "../protocol/api-error.js";
import type { LoadProgress } from "../engine/types.js";
import { isScriptedSpec, isTabGoodbye, type ConfigureResult, type StoreErrorListener, type TabHello, type TabWorkerStarter, type WorkerHostConfig } from "./protocol.js";
import { exposeEngineHost, hostFromConfig, type HostAccess } from "./expose.js";
import { webLocks } from "../cache/locks.js";
import { WORKER_HOST_OPTIONS } from "../host/host-options.js";
import { offerHostingTabs, type HostingTab } from "../engine/wllama/wllama-tab-host.js";

interface Tab {
  onProgress?: (progress: LoadProgress) => void;
  onStoreError?: StoreErrorListener;
  /** The tab's offer to start Workers for this worker (a comlink proxy to the page). */
  hostWorker?: TabWorkerStarter;
  /** It failed to start a Worker asked of it (e.g. its page's CSP refuses blob: workers): others are asked first. */
  failedToHost?: boolean;
  gone: AbortController;
  /** The pending request for the tab's lock (kept referenced for the tab's life). */
  watching?: Promise<unknown>;
}

/** The options a later tab sends that the running host was not built with (the first tab's win). */
function ignoredOptions(first: WorkerHostConfig, next: WorkerHostConfig): string[] {
  return WORKER_HOST_OPTIONS.filter((key) => JSON.stringify(first[key] ?? null) !== JSON.stringify(next[key] ?? null));
}

function describeEngine(engine: WorkerHostConfig["engine"], other?: WorkerHostConfig["engine"]): string {
  const name = engine.kind === "webllm" ? "web-llm" : isScriptedSpec(engine) ? "a scripted engine" : `the registered engine kind ${JSON.stringify(engine.kind)}`;
  return other && other.kind === engine.kind ? `${name} with other settings` : name;
}

/**
 * Lets go of the callbacks a tab that left sent with configure: comlink
 * proxies, each holding a MessagePort to the page, which the worker would
 * otherwise keep for its whole life.
 */
function releaseCallbacks(tab: Tab): void {
  for (const callback of [tab.onProgress, tab.onStoreError, tab.hostWorker]) releaseRemote(callback);
  tab.onProgress = undefined;
  tab.onStoreError = undefined;
  tab.hostWorker = undefined;
}

/** comlink's release of a proxy; nothing for a plain function, and never a throw (a released proxy throws on any use). */
function releaseRemote(callback: unknown): void {
  if (typeof callback !== "function") return;
  try {
    (callback as { [Comlink.releaseProxy]?: () => void })[Comlink.releaseProxy]?.();
  } catch {
    // Released already: nothing is left to let go of. (A gone page's port takes the release message and drops it.)
  }
}

/**
 * The client always sends `{ engine: { kind } }`; any script of the origin
 * can reach the port, so anything else is a 400 here, not a TypeError.
 */
function checkConfig(config: unknown): asserts config is WorkerHostConfig {
  const engine = typeof config === "object" && config !== null ? (config as { engine?: unknown }).engine : undefined;
  if (typeof engine === "object" && engine !== null && typeof (engine as { kind?: unknown }).kind === "string") return;
  throw new ApiError({
    status: 400,
    code: "invalid_worker_config",
    param: "engine",
    type: "invalid_request_error",
    message: `The shared worker was sent a configure whose config names no engine (it must be { engine: { kind: string }, ... }): configure it through createClient({ worker: "shared" }).`,
  });
}

export class SharedHost {
  private host: EngineHost | null;
  private config: WorkerHostConfig | null = null;
  private readonly tabs = new Set<Tab>();
  /** Numbers the tabs' connections: each is its own client of the host. */
  private connections = 0;

  /**
   * A lock held until this worker ends, resolved once granted (its name is
   * handed to tabs only then: a tab asking before the worker holds it would be
   * granted it at once). Tabs wait on it to learn the worker died, e.g. with
   * the tab process it ran in.
   */
  private readonly workerLock: Promise<string | undefined>;
  /** Never settles; kept here so nothing about the held lock can be collected. */
  private readonly holding = new Promise<never>(() => undefined);

  constructor(private readonly initial?: EngineHost) {
    this.host = initial ?? null;
    const locks = webLocks();
    // Web Locks (and randomUUID) exist only in secure contexts: without them tabs cannot watch the worker.
    this.workerLock = !locks
      ? Promise.resolve(undefined)
      : new Promise((resolve) => {
          const name = `webgpu-openai-worker:${crypto.randomUUID()}`;
          locks
            .request(name, () => {
              resolve(name);
              return this.holding;
            })
            .catch(() => resolve(undefined));
        });
    offerHostingTabs(() => this.hostingTab());
  }

  /** Tabs connected now (each has configured and is alive). */
  get tabCount(): number {
    return this.tabs.size;
  }

  /** Serves one tab's port. */
  connect(port: MessagePort): void {
    const tab: Tab = { gone: new AbortController() };
    // Beside comlink's calls (the port guard drops it unanswered): comlink's expose starts the port.
    port.addEventListener("message", (event) => {
      if (isTabGoodbye(event.data)) this.leave(tab, port);
    });
    const access: HostAccess = {
      configure: (config, onProgress, hello, onStoreError, hostWorker) => this.join(tab, port, config, { onProgress, hello, onStoreError, hostWorker }),
      host: () => this.hostOrThrow(),
      info: () => ({ worker: "shared", tabs: this.tabs.size }),
      gone: tab.gone.signal,
      client: `tab-${++this.connections}`,
    };
    exposeEngineHost(this.initial, port, access);
  }

  private async join(tab: Tab, port: MessagePort, config: WorkerHostConfig, from: { onProgress?: (p: LoadProgress) => void; hello?: TabHello; onStoreError?: StoreErrorListener; hostWorker?: TabWorkerStarter }): Promise<ConfigureResult> {
    const { onProgress, hello, onStoreError } = from;
    const result: ConfigureResult = { ignored: [], workerLock: await this.workerLock };
    if (!this.initial) {
      checkConfig(config);
      if (!this.config) {
        // Kept only once the host is built: a config it refuses must not keep the next tab out (409).
        this.host = hostFromConfig(
          config,
          (progress) => this.progress(progress),
          (error) => this.storeError(error),
        );
        this.config = config;
      } else {
        if (JSON.stringify(this.config.engine) !== JSON.stringify(config.engine)) {
          throw new ApiError({
            status: 409,
            code: "shared_worker_config_conflict",
            param: "engine",
            type: "invalid_request_error",
            message: `The shared worker already runs an engine configured by another tab (${describeEngine(this.config.engine)}); this tab asked for ${describeEngine(config.engine, this.config.engine)}. Every tab of an origin shares one engine: give all of them the same engine, or use createClient({ worker: true }) for a worker of this tab's own.`,
          });
        }
        result.ignored = ignoredOptions(this.config, config);
      }
    }
    tab.onProgress = onProgress;
    tab.onStoreError = onStoreError;
    tab.hostWorker = from.hostWorker;
    // Said goodbye while the worker's lock was awaited: it is not counted, and what it sent is let go of.
    if (tab.gone.signal.aborted) {
      releaseCallbacks(tab);
      return result;
    }
    this.tabs.add(tab);
    this.watch(tab, port, hello);
    return result;
  }

  /**
   * Waits for the tab's lock: granted to the worker once the tab is gone.
   * Without a lock name (an old page) or Web Locks only the tab's goodbye
   * (connect) ends it, or the worker's end.
   */
  private watch(tab: Tab, port: MessagePort, hello?: TabHello): void {
    const locks = webLocks();
    if (!hello?.lock || !locks) return;
    tab.watching = locks.request(hello.lock, () => this.leave(tab, port)).catch(() => undefined);
  }

  /** The tab is gone (its lock granted, or its goodbye): its requests stop, and it no longer counts or hosts. */
  private leave(tab: Tab, port: MessagePort): void {
    if (tab.gone.signal.aborted) return;
    this.tabs.delete(tab);
    tab.gone.abort();
    releaseCallbacks(tab);
    port.close();
  }

  /**
   * The tab that starts the next Worker asked for here: the longest-connected
   * live tab that offers to and has not failed to (so one tab that cannot does
   * not fail every load while others could); else the longest-connected that
   * offers. Null: none does.
   */
  private hostingTab(): HostingTab | null {
    const offering = [...this.tabs].filter((tab) => tab.hostWorker && !tab.gone.signal.aborted);
    const tab = offering.find((each) => !each.failedToHost) ?? offering[0];
    const start = tab?.hostWorker;
    if (!tab || !start) return null;
    return {
      gone: tab.gone.signal,
      // Through comlink: the port moves to the tab; a tab that cannot start the Worker rejects.
      startWorker: async (script, port, type) => {
        try {
          await start(script, Comlink.transfer(port, [port]), type);
        } catch (error) {
          tab.failedToHost = true;
          throw error;
        }
      },
    };
  }

  private progress(progress: LoadProgress): void {
    for (const tab of this.tabs) {
      // A tab's comlink proxy answers asynchronously; a dead tab's never does, and that is fine.
      if (tab.onProgress) void Promise.resolve(tab.onProgress(progress)).catch(() => undefined);
    }
  }

  /** A failed write of the store every tab shares: each tab that listens hears of it (the error names the response). */
  private storeError(error: Parameters<StoreErrorListener>[0]): void {
    for (const tab of this.tabs) {
      if (tab.onStoreError) void Promise.resolve(tab.onStoreError(error)).catch(() => undefined);
    }
  }

  private hostOrThrow(): EngineHost {
    if (this.host) return this.host;
    throw new ApiError({ status: 500, code: "not_configured", message: "The shared worker was called before configure: create the client with createClient({ worker: \"shared\" })." });
  }
}

/**
 * Serves one host to every tab that connects to this SharedWorker. The
 * default worker (entry.ts), started as a SharedWorker, calls it; an app's own SharedWorker
 * may too, with its own host (which then wins over the tabs' options).
 */
export function exposeSharedEngineHost(initial?: EngineHost): SharedHost {
  const shared = new SharedHost(initial);
  const scope = self as unknown as SharedWorkerGlobalScope;
  scope.addEventListener("connect", (event) => {
    const port = (event as MessageEvent).ports[0];
    shared.connect(port);
  });
  return shared;
}
