/**
 * How a client reaches its worker: a comlink endpoint, how to notice the
 * worker failing, and how to let go of it. workerBackend (backend.ts) speaks
 * the same API over any link, so every Backend method works for a dedicated
 * worker and for the SharedWorker alike.
 */
import type * as Comlink from "comlink";
import { TAB_GOODBYE, type TabHello, type TabWorkerStarter } from "../worker/protocol.js";
import { VERSION } from "../version.js";
import { startDefaultWorker } from "./worker-start.js";
import { webLocks } from "../cache/locks.js";
import { tabHostedWorkers } from "./tab-hosted-workers.js";

export interface WorkerLink {
  readonly kind: "dedicated" | "shared";
  readonly endpoint: Comlink.Endpoint;
  /** False for an app's own Worker/SharedWorker object: once lost it cannot be made again. */
  readonly restartable: boolean;
  /** The default worker's script URL, as the app's bundler wrote it (unknown for an app's own worker). */
  readonly url?: string;
  /** The shared worker's liveness lock, resolved once this tab holds it (sent with configure). */
  readonly tab?: Promise<TabHello | undefined>;
  onError(listener: (message: string, event: Event) => void): void;
  /** The shared worker's: this tab starts the Workers it cannot (llama.cpp's, for a GGUF model), sent with configure. */
  readonly hostWorker?: TabWorkerStarter;
  /** The shared worker's own lock (from configure): `listener` runs when the worker is gone. */
  watchWorker?(lock: string, listener: (message: string) => void): void;
  /** Ends the dedicated worker; leaves the shared one (its requests for this tab stop; other tabs go on). */
  close(): void;
}

/** The SharedWorker's name: one worker per origin and library version. */
export const SHARED_WORKER_NAME = `webgpu-openai@${VERSION}`;

/** The literal pattern bundlers recognise and rewrite: keep it one expression, relative to this file. */
const spawnDefaultWorker = () =>
  startDefaultWorker("webgpu-openai", () => new Worker(new URL("../worker/entry.js", import.meta.url), { type: "module", name: "webgpu-openai" }));

export function dedicatedLink(custom?: Worker, spawn: () => { worker: Worker; url: string | undefined } = spawnDefaultWorker): WorkerLink {
  const { worker, url } = custom ? { worker: custom, url: undefined } : spawn();
  return {
    kind: "dedicated",
    endpoint: worker,
    restartable: !custom,
    url,
    onError(listener) {
      worker.addEventListener("error", (event) => {
        event.preventDefault?.();
        listener(`The engine worker failed: ${(event as ErrorEvent).message || "unknown error"}.`, event);
      });
    },
    close: () => worker.terminate(),
  };
}

export function sharedLink(custom?: SharedWorker): WorkerLink {
  // Written out in full: bundlers (Vite, webpack 5) recognise exactly this form and emit the worker.
  const { worker, url } = custom
    ? { worker: custom, url: undefined }
    : startDefaultWorker(
        SHARED_WORKER_NAME,
        () => new SharedWorker(new URL("../worker/entry.js", import.meta.url), { type: "module", name: SHARED_WORKER_NAME }),
        "SharedWorker",
      );
  const port = worker.port;
  port.start();
  const lock = holdTabLock();
  const stopWatching = new AbortController();
  let watching: Promise<unknown> | undefined;
  const hosted = tabHostedWorkers();
  const goodbye = sayGoodbyeOnUnload(port);
  return {
    kind: "shared",
    endpoint: port,
    restartable: !custom,
    url,
    tab: lock.held,
    hostWorker: hosted.start,
    onError(listener) {
      // A SharedWorker reports here only a script that failed to load or start; its runtime errors stay in the worker.
      worker.addEventListener("error", (event) => {
        event.preventDefault?.();
        listener(`The shared engine worker failed to start: ${(event as ErrorEvent).message || "unknown error"}.`, event);
      });
    },
    watchWorker(name, listener) {
      const locks = webLocks();
      watching = locks
        ?.request(name, { signal: stopWatching.signal }, () => listener("The shared engine worker ended (the browser process it ran in crashed or was stopped)."))
        .catch(() => undefined);
    },
    close() {
      stopWatching.abort();
      // The Workers this tab runs for the shared worker end with this tab's client (the worker learns it from the lock, or the goodbye).
      hosted.endAll();
      lock.release();
      goodbye.now();
      port.close();
    },
  };
}

/**
 * Tells the shared worker this tab is leaving (worker/protocol.ts's
 * TAB_GOODBYE): when its page unloads for good (`pagehide` not into the
 * back/forward cache, from which it may come back and go on using the port),
 * and when the link closes (`now`). Where Web Locks are missing (an insecure
 * context) this is how the worker learns the tab left. No heartbeat: a
 * background tab's timers run once a minute or less, and a frozen one's not
 * at all, so a worker timing beats would let go of live tabs.
 */
function sayGoodbyeOnUnload(port: MessagePort): { now(): void } {
  // A page's global (a window); in a worker, or in Node, there is no page to unload.
  const page = typeof globalThis.addEventListener === "function" ? globalThis : undefined;
  const onPageHide = (event: Event) => {
    if (!(event as PageTransitionEvent).persisted) port.postMessage(TAB_GOODBYE);
  };
  page?.addEventListener("pagehide", onPageHide);
  return {
    now() {
      page?.removeEventListener("pagehide", onPageHide);
      port.postMessage(TAB_GOODBYE);
    },
  };
}

/**
 * Holds a Web Lock named for this connection for as long as the link is open.
 * The shared worker requests the same name; the browser grants it when this
 * tab releases it or dies (closed, reloaded, crashed), which is how the worker
 * learns that the tab is gone: a SharedWorker port has no close event.
 */
function holdTabLock(): { held: Promise<TabHello | undefined>; release(): void } {
  const locks = webLocks();
  if (!locks) return { held: Promise.resolve(undefined), release() {} };
  const name = `webgpu-openai-tab:${crypto.randomUUID()}`;
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = new Promise<TabHello | undefined>((resolve) => {
    locks
      .request(name, () => {
        resolve({ lock: name });
        return released;
      })
      .catch(() => resolve(undefined));
  });
  return { held, release: () => release() };
}
