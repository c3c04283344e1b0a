/**
 * The response store as the Responses face uses it: every operation runs in
 * order after the ones before it (a retrieve sees the write queued before it;
 * a delete during a stream wins over the stream's later writes), and writes
 * made while a response streams are fire-and-forget: the stream never waits on
 * IndexedDB, and a failed write (a quota error, a closed database) is reported
 * through `onError` — and the console — instead of failing the stream.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ResponseStreamEvent } from "../protocol/responses/types.js";
import type { ResponseStore, StoredResponse } from "./response-store.js";
import type { GeneratedChunk } from "../engine/types.js";

export type StoreErrorHandler = (error: ApiError) => void;

export class QueuedResponseStore {
  private tail: Promise<unknown> = Promise.resolve();
  /** Failed writes so far (what an app or test can read back). */
  readonly failures: ApiError[] = [];

  constructor(
    readonly store: ResponseStore,
    private readonly onError?: StoreErrorHandler,
  ) {}

  /** Runs `op` after everything queued before it. */
  private queued<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(op, op);
    this.tail = run.catch(() => {});
    return run;
  }

  /** A write that never rejects: its failure is reported. Resolves true once written. */
  private background(what: string, id: string, op: () => Promise<unknown>): Promise<boolean> {
    return this.queued(op).then(
      (result) => result !== false,
      (cause) => {
        this.report(what, id, cause);
        return false;
      },
    );
  }

  put(entry: StoredResponse): Promise<boolean> {
    return this.background("store", entry.response.id, () => this.store.put(entry));
  }

  /** Only in place of the record still held (a delete meanwhile wins). */
  replace(entry: StoredResponse): Promise<boolean> {
    return this.background("update", entry.response.id, () => this.store.replace(entry));
  }

  appendEvents(id: string, events: ResponseStreamEvent[], chunks?: GeneratedChunk[], batchKey?: number): Promise<boolean> {
    return this.background("log the events of", id, () => this.store.appendEvents(id, events, chunks, batchKey));
  }

  dropLog(id: string): Promise<boolean> {
    return this.background("drop the event log of", id, () => this.store.dropLog(id));
  }

  get = (id: string) => this.queued(() => this.store.get(id));
  item = (itemId: string) => this.queued(() => this.store.item(itemId));
  list = () => this.queued(() => this.store.list());
  readEvents = (id: string, fromBatch?: number) => this.queued(() => this.store.readEvents(id, fromBatch));
  readChunks = (id: string) => this.queued(() => this.store.readChunks(id));
  delete = (id: string) => this.queued(() => this.store.delete(id));
  clear = () => this.queued(() => this.store.clear());

  /** Resolves once every operation queued so far has settled. */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  private report(what: string, id: string, cause: unknown): void {
    const name = (cause as { name?: string })?.name ?? "Error";
    const detail = (cause as { message?: string })?.message ?? String(cause);
    const quota = name === "QuotaExceededError";
    const error = new ApiError({
      status: quota ? 507 : 500,
      code: quota ? "response_store_quota_exceeded" : "response_store_write_failed",
      message: `Could not ${what} response '${id}' in the ${this.store.kind === "indexeddb" ? "IndexedDB" : "memory"} response store (${name}: ${detail}). The response itself was not affected; it may be missing after a reload.${quota ? " Free storage (client.responses.clear, client.cache.delete) or lower responsesStore.maxBytes." : ""}`,
    });
    if (this.failures.length >= 20) this.failures.shift();
    this.failures.push(error);
    console.warn(`webgpu-openai: ${error.message}`);
    try {
      this.onError?.(error);
    } catch {
      // An app's handler that throws must not break the queue.
    }
  }
}
