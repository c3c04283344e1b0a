/**
 * llama.cpp's Worker for a GGUF engine that lives in a SharedWorker.
 *
 * wllama 3.8.1 runs llama.cpp in a Worker it starts itself
 * (`createWorker`: `new Worker(URL.createObjectURL(script), { type: "module" })`,
 * with no option to start it any other way), and Chromium gives a
 * SharedWorker no Worker constructor. So a connected tab starts it: for the
 * length of one `loadModel`, until wllama has constructed its Worker, this
 * context's `Worker` is a stand-in (`TabHostedWorker`) with the part of
 * Worker's interface wllama uses (postMessage with transfer, onmessage,
 * onerror, terminate). The stand-in reads wllama's script (a blob: URL made
 * here) and asks a tab (the shared host's offer, `offerHostingTabs`) to start
 * a Worker from it; the tab (client/tab-hosted-workers.ts) relays messages
 * between that Worker and a MessagePort whose other end is the stand-in.
 *
 * Threads: none. A SharedWorker is not cross-origin isolated, so wllama
 * starts llama.cpp single-threaded here (as gpu.info and models.status say).
 *
 * When the hosting tab is gone (closed, reloaded, crashed, its client
 * terminated), its Worker is gone with it and would never answer: the lease
 * is lost, whatever waits on it fails with a 503 `gguf_host_tab_closed`, and
 * the engine lets go of the model, so the next load is hosted by another
 * connected tab.
 */
import { ApiError } from "../../protocol/api-error.js";

/** Stand-in → tab, on the port of one hosted Worker. */
export type HostedWorkerCommand = { type: "post"; data: unknown; transfer: Transferable[] } | { type: "terminate" };

/** Tab → stand-in: what the hosted Worker posted, or its error event's message. */
export type HostedWorkerReport = { type: "message"; data: unknown } | { type: "error"; message: string };

/** A connected tab that can start a Worker for this SharedWorker. */
export interface HostingTab {
  /** Starts a Worker of `type` from `script` in the tab, its messages relayed over `port`. */
  startWorker(script: Blob, port: MessagePort, type: WorkerType): Promise<void>;
  /** Aborts when the tab is gone. */
  gone: AbortSignal;
}

/** Which connected tab hosts the next Worker (null: none can). */
export type HostingTabs = () => HostingTab | null;

let hostingTabs: HostingTabs | null = null;

/**
 * Whether this context has a Worker constructor of its own. Read once, on the
 * first lease (before any stand-in is set: a second load must not take the
 * first's for one), not at import: importing the library reads no browser
 * global (SSR, Node; test/unit/node-import.test.ts).
 */
let ownWorker: boolean | null = null;
function hasOwnWorker(): boolean {
  return (ownWorker ??= typeof Worker !== "undefined");
}

/** Set by the shared host (worker/shared-host.ts): how a GGUF load here finds a tab to start llama.cpp's Worker. */
export function offerHostingTabs(tabs: HostingTabs | null): void {
  hostingTabs = tabs;
}

export function tabClosedError(modelId: string): ApiError {
  return new ApiError({
    status: 503,
    code: "gguf_host_tab_closed",
    param: "model",
    message: `The tab hosting the GGUF engine of ${modelId} closed: in a shared worker, llama.cpp runs in a Worker that one connected tab starts, and it ended with that tab. The next request loads the model again in another connected tab.`,
  });
}

/** A tab's Worker for one loaded GGUF: lost when the tab is gone, the Worker could not start, or its load was abandoned (the request aborted). */
export class TabWorkerLease {
  private readonly controller = new AbortController();
  /** Aborted with the error that what waits on the Worker fails with (an ApiError; an AbortError for an abandoned load). */
  readonly lost: AbortSignal = this.controller.signal;

  private readonly onGone = () => this.lose(tabClosedError(this.modelId));

  constructor(
    readonly tab: HostingTab,
    readonly modelId: string,
  ) {
    if (tab.gone.aborted) this.onGone();
    else tab.gone.addEventListener("abort", this.onGone, { once: true });
  }

  /**
   * Done with (its model unloaded, or its load failed): stops watching the tab,
   * which may live on and host many more loads; its listener would otherwise
   * keep this lease, and what listens to `lost`, for the tab's whole life.
   */
  release(): void {
    this.tab.gone.removeEventListener("abort", this.onGone);
  }

  lose(error: Error): void {
    if (!this.lost.aborted) this.controller.abort(error);
  }

  /** `work`, or the lease's error once it is lost (a Worker that is gone never answers). */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.lost.aborted) return Promise.reject(this.lost.reason);
    return new Promise<T>((resolve, reject) => {
      const onLost = () => reject(this.lost.reason);
      this.lost.addEventListener("abort", onLost, { once: true });
      work.then(resolve, reject).finally(() => this.lost.removeEventListener("abort", onLost));
    });
  }

  /** `source`'s items until it ends, or the lease's error once it is lost. */
  async *stream<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
    const iterator = source[Symbol.asyncIterator]();
    let ended = false;
    try {
      for (;;) {
        const next = await this.race(iterator.next());
        if (next.done) {
          ended = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // Left early by the caller: the source is closed as a for-await would (not once lost: nothing would answer).
      if (!ended && !this.lost.aborted) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }
}

/**
 * Null where this context starts Workers itself (a page, a dedicated worker);
 * else a lease on a connected tab that will start llama.cpp's Worker.
 */
export function leaseHostingTab(modelId: string): TabWorkerLease | null {
  if (hasOwnWorker()) return null;
  const tab = hostingTabs?.() ?? null;
  if (!tab) {
    throw new ApiError({
      status: 503,
      code: "wllama_needs_worker",
      param: "model",
      message: `${modelId} is a GGUF model: @wllama/wllama runs llama.cpp in a Worker of its own, and this context cannot start one, nor is a tab connected that could start it for it (a SharedWorker has no Worker constructor in Chromium; its tabs start llama.cpp's Worker for it). Use createClient({ worker: "shared" }) from the page, createClient({ worker: true }) (a dedicated worker) or worker: false.`,
    });
  }
  return new TabWorkerLease(tab, modelId);
}

/** The part of Worker's interface wllama's ProxyToWorker uses, over a tab's relay. */
class TabHostedWorker extends EventTarget {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  private readonly port: MessagePort;
  /** The Worker has posted a message: it started, so a later error event is its own to report, not a failed start. */
  private answered = false;

  constructor(
    private readonly lease: TabWorkerLease,
    url: string | URL,
    options?: WorkerOptions,
  ) {
    super();
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // Messages posted before the tab holds port2 wait in it and travel with it.
    port1.onmessage = (event: MessageEvent<unknown>) => {
      // The tab's relay sends only reports; anything else (a broken or hostile page) is dropped, never thrown here.
      if (isReport(event.data)) this.report(event.data);
    };
    this.start(String(url), port2, options?.type ?? "classic").catch((error) => lease.lose(startError(lease.modelId, error)));
  }

  private async start(url: string, port: MessagePort, type: WorkerType): Promise<void> {
    // wllama's script is a blob: URL made in this worker: it is read here and sent as a Blob the tab makes a URL of its own for.
    const script = await (await fetch(url)).blob();
    await this.lease.tab.startWorker(script, port, type);
  }

  private report(report: HostedWorkerReport): void {
    if (report.type === "message") {
      this.answered = true;
      const event = new MessageEvent("message", { data: report.data });
      this.onmessage?.(event);
      this.dispatchEvent(event);
      return;
    }
    if (!this.answered) this.lease.lose(startError(this.lease.modelId, report.message));
    // An ErrorEvent where there is one (not in Node, where the unit tests run).
    const event = typeof ErrorEvent === "function" ? new ErrorEvent("error", { message: report.message }) : Object.assign(new Event("error"), { message: report.message });
    this.onerror?.(event);
    this.dispatchEvent(event);
  }

  postMessage(data: unknown, transfer?: Transferable[] | StructuredSerializeOptions): void {
    const list = Array.isArray(transfer) ? transfer : (transfer?.transfer ?? []);
    this.port.postMessage({ type: "post", data, transfer: list } satisfies HostedWorkerCommand, list);
  }

  terminate(): void {
    this.port.postMessage({ type: "terminate" } satisfies HostedWorkerCommand);
    this.port.close();
  }
}

function isReport(data: unknown): data is HostedWorkerReport {
  if (typeof data !== "object" || data === null) return false;
  const report = data as { type?: unknown; message?: unknown };
  return report.type === "message" || (report.type === "error" && typeof report.message === "string");
}

function startError(modelId: string, error: unknown): ApiError {
  return new ApiError({
    status: 503,
    code: "gguf_host_tab_failed",
    param: "model",
    message: `The connected tab asked to run llama.cpp's Worker for ${modelId} (the shared worker cannot start one) could not start it: ${error instanceof Error ? error.message : String(error)}.`,
  });
}

/** Loads waiting for the stand-in: one at a time, each until its Worker is constructed. */
let standInTurn: Promise<void> = Promise.resolve();

/**
 * How long an abandoned load (its tab gone before wllama made its Worker) may
 * keep the turn while it runs on: wllama makes its Worker early in `loadModel`,
 * so it settles within milliseconds (its `new Worker` throws once the global
 * is gone); the bound only keeps a load stuck before that from blocking every
 * later one for good.
 */
const ABANDONED_LOAD_TURN_MS = 10_000;

/**
 * Runs `load` (a wllama `loadModel`) with this context's `Worker` set to a
 * stand-in hosted by the lease's tab, from the call until wllama constructs
 * its Worker (or `load` settles); then `Worker` is undefined again. Two such
 * loads take turns, so each Worker goes to its own lease: a load abandoned
 * before its Worker was made keeps the turn until it settles, or else its late
 * `new Worker` could take the next load's stand-in.
 */
export async function loadWithTabWorker<T>(lease: TabWorkerLease, load: () => Promise<T>): Promise<T> {
  const previous = standInTurn;
  let done = () => {};
  standInTurn = new Promise((resolve) => (done = resolve));
  await previous;
  if (lease.lost.aborted) {
    done();
    throw lease.lost.reason;
  }
  const scope = globalThis as { Worker?: unknown };
  let installed = true;
  const restore = () => {
    if (!installed) return;
    installed = false;
    delete scope.Worker;
    done();
  };
  scope.Worker = class extends TabHostedWorker {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(lease, url, options);
      restore();
    }
  };
  let loading: Promise<T> | null = null;
  try {
    loading = load();
    return await lease.race(loading);
  } finally {
    if (installed) {
      installed = false;
      delete scope.Worker;
      passTurnWhenSettled(loading, done);
    }
  }
}

/** Passes the turn once an abandoned load settles, or after ABANDONED_LOAD_TURN_MS. */
function passTurnWhenSettled(loading: Promise<unknown> | null, done: () => void): void {
  if (loading === null) return done();
  const timer = setTimeout(done, ABANDONED_LOAD_TURN_MS);
  const pass = () => {
    clearTimeout(timer);
    done();
  };
  loading.then(pass, pass);
}

/** A wllama stream (`createCompletion`'s promise of one); hosted by a tab, it fails with the lease's error once the tab is gone. */
export async function hostedStream<T>(lease: TabWorkerLease | null, source: Promise<AsyncIterable<T>>): Promise<AsyncIterable<T>> {
  if (!lease) return source;
  return lease.stream(await lease.race(source));
}
