/**
 * One generation (or model load) at a time, first come first served. Waiting
 * requests beyond `maxQueue` are refused with 429; an aborted waiter leaves the
 * queue at once and never starts.
 */
import { ApiError, abortError } from "../protocol/api-error.js";

interface Waiter {
  grant: (release: () => void) => void;
  reject: (error: unknown) => void;
}

export class RequestQueue {
  private busy = false;
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly maxQueue: number,
    /** Rough time one request holds the engine, for `retry-after-ms`. */
    private readonly typicalHoldMs: () => number = () => 1000,
  ) {}

  /** Requests waiting (not counting the one running). */
  get waiting(): number {
    return this.waiters.length;
  }

  get running(): boolean {
    return this.busy;
  }

  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(this.releaser());
    }
    if (this.waiters.length >= this.maxQueue) {
      const retryAfterMs = Math.max(100, Math.round(this.typicalHoldMs() * (this.waiters.length + 1)));
      return Promise.reject(
        new ApiError({
          status: 429,
          code: "queue_full",
          retryAfterMs,
          message: `Too many requests are waiting for the local model (${this.waiters.length} queued, limit ${this.maxQueue}). Retry after ${retryAfterMs} ms, or raise createClient({ maxQueue }).`,
        }),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(release);
        },
        reject,
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(abortError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.grant(this.releaser());
      else this.busy = false;
    };
  }
}
