/**
 * IndexedDB puts off the download's thread. `put` clones its value
 * synchronously: measured, 70–160 ms for a 32 MB shard, during which the
 * thread that also reads the network reads nothing, the connections' buffers
 * fill and the line idles. A small worker takes the file's buffer by
 * transfer (no copy), puts it (the clone happens on its thread) and transfers
 * the buffer back for the next file; the commit is reported when it lands.
 *
 * The worker's source is inline and imports nothing, started from a Blob URL:
 * no file for an app's bundler to emit. Where it cannot start (no `Worker` in
 * this context, a Content-Security-Policy without `worker-src blob:`), the
 * writer says so once and the store puts on its own thread, as before.
 */

/** Runs in the worker: opens web-llm's databases as web-llm does (idb-store.ts) and puts what it is sent. */
const WORKER_SOURCE = `
const dbs = new Map();
function open(name) {
  let db = dbs.get(name);
  if (!db) {
    db = new Promise((resolve, reject) => {
      const request = indexedDB.open(name, 1);
      request.onupgradeneeded = () => {
        if (!request.result.objectStoreNames.contains("urls")) request.result.createObjectStore("urls", { keyPath: "url" });
      };
      request.onsuccess = () => {
        const opened = request.result;
        opened.onversionchange = () => { opened.close(); dbs.delete(name); };
        resolve(opened);
      };
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("IndexedDB database " + name + " is blocked by another connection."));
    });
    db.catch(() => dbs.delete(name));
    dbs.set(name, db);
  }
  return db;
}
const describe = (error) => ({ name: (error && error.name) || "Error", message: (error && error.message) || String(error) });
onmessage = async ({ data: { id, scope, url, buffer, warm } }) => {
  if (warm) return void open(warm).catch(() => undefined);
  try {
    const db = await open(scope);
    const transaction = db.transaction("urls", "readwrite");
    transaction.oncomplete = () => postMessage({ id, committed: true });
    transaction.onabort = () => postMessage({ id, committed: true, error: describe(transaction.error || new DOMException("The write was aborted.", "AbortError")) });
    transaction.objectStore("urls").put({ url, data: buffer });
    postMessage({ id, taken: true, buffer }, [buffer]);
  } catch (error) {
    postMessage({ id, taken: true, buffer, error: describe(error) }, [buffer]);
  }
};
postMessage({ ready: true });
`;

/** How long a worker that failed to say it started is waited for before the store puts on its own thread. */
const START_TIMEOUT_MS = 5_000;
/** An idle worker ends after this long (a thread and its heap are not kept for a download that is over). */
const IDLE_MS = 10_000;

interface Pending {
  taken(buffer: ArrayBuffer): void;
  committed(error: Error | null): void;
}

export interface OffThreadPut {
  /** The buffer back, once the worker's copy is made (the caller may reuse it); also when the put failed. */
  buffer: ArrayBuffer;
  /** Settles when the transaction commits; a failed put or commit rejects (a quota failure as a QuotaExceededError). */
  committed: Promise<void>;
}

function rebuild(error: { name: string; message: string }): Error {
  return new DOMException(error.message, error.name);
}

export class IdbWriter {
  private worker: Worker | null = null;
  private ready: Promise<boolean> | null = null;
  /** False once a worker failed to start here: every later put stays on the caller's thread. */
  private usable = typeof Worker !== "undefined" && typeof Blob !== "undefined" && typeof URL?.createObjectURL === "function";
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * Puts `{url, data: buffer}` into `scope`'s `urls` store from the worker;
   * null when no worker can run here (the caller then puts itself). The
   * buffer is transferred: the caller's views of it are detached until it
   * comes back in the result.
   */
  async put(scope: string, url: string, buffer: ArrayBuffer): Promise<OffThreadPut | null> {
    if (!this.usable || !(await this.start())) return null;
    const worker = this.worker as Worker;
    const id = this.nextId++;
    this.busy();
    let resolveCommit!: () => void;
    let rejectCommit!: (error: Error) => void;
    const committed = new Promise<void>((resolve, reject) => {
      resolveCommit = resolve;
      rejectCommit = reject;
    });
    committed.catch(() => undefined);
    const taken = new Promise<ArrayBuffer>((resolve) => {
      this.pending.set(id, {
        taken: resolve,
        committed: (error) => {
          this.pending.delete(id);
          if (this.pending.size === 0) this.idle();
          if (error) rejectCommit(error);
          else resolveCommit();
        },
      });
    });
    worker.postMessage({ id, scope, url, buffer }, [buffer]);
    return { buffer: await taken, committed };
  }

  /**
   * Starts the worker and opens `scope` there ahead of the first put: a
   * download calls it when it starts, so the first shard's hand-over does not
   * wait for a worker to start and a database to open (measured, a stall of
   * 0.2-0.3 s early in the download, which the ETA then extrapolated).
   */
  warm(scope: string): void {
    if (!this.usable) return;
    void this.start().then((started) => {
      if (!started || !this.worker) return;
      this.worker.postMessage({ warm: scope });
      // A warmed worker that gets no put ends like an idle one.
      if (this.pending.size === 0) this.idle();
    });
  }

  private start(): Promise<boolean> {
    this.ready ??= new Promise<boolean>((resolve) => {
      let source: string | null = null;
      const fail = () => {
        this.usable = false;
        this.worker?.terminate();
        this.worker = null;
        this.ready = null;
        if (source) URL.revokeObjectURL(source);
        resolve(false);
      };
      try {
        source = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
        this.worker = new Worker(source, { name: "webgpu-openai idb writer" });
      } catch {
        fail();
        return;
      }
      let started = false;
      const timer = setTimeout(fail, START_TIMEOUT_MS);
      this.worker.onerror = () => {
        // Before it said it started, it never will (a CSP refusal). After, a put's failure comes in its message.
        if (started) return;
        clearTimeout(timer);
        fail();
      };
      this.worker.onmessage = ({ data }) => {
        if (data.ready) {
          started = true;
          clearTimeout(timer);
          if (source) URL.revokeObjectURL(source);
          resolve(true);
          return;
        }
        const waiting = this.pending.get(data.id);
        if (!waiting) return;
        if (data.taken) waiting.taken(data.buffer);
        // A put that failed before its transaction began is also its commit's failure.
        if (data.committed || (data.taken && data.error)) waiting.committed(data.error ? rebuild(data.error) : null);
      };
    });
    return this.ready;
  }

  private busy(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private idle(): void {
    this.busy();
    this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
  }

  /** Ends the worker (a later put starts a new one). */
  close(): void {
    this.busy();
    this.worker?.terminate();
    this.worker = null;
    this.ready = null;
  }
}
