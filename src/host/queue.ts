/**
 * Admission to the engine, first come first served. Work holds the engine
 * alone (a model load, embeddings, transcription, a generation on an engine
 * that decodes one sequence at a time), except generations on a batching
 * engine (`Engine.batchRows` > 1): up to that many of them, for the same
 * engine and model, run at once and share its forward passes
 * (engine/batching/). Waiting requests beyond `maxQueue` are refused with
 * 429; an aborted waiter leaves the queue at once and never starts.
 */
import { ApiError, abortError } from "../protocol/api-error.js";

/** What lets a generation share the engine with others. */
export interface ShareSpec {
  /** Generations share only with the same group (an engine and its model). */
  group: { engine: object; model: string };
  /** At most this many hold it together (read at each admission: the engine's cap may change with the loaded model). */
  readonly maxRows: number;
  /** Whether the group's model is loaded: otherwise the generation first holds the engine alone, to load it. */
  ready: () => boolean;
}

/** A granted turn; `shared` tells whether it runs beside others. */
export interface Turn {
  release: () => void;
  /** Called once the turn's model is loaded: a turn granted alone (to load) may now let its group in. */
  loaded: () => void;
}

interface Holder {
  share: ShareSpec | null;
  /** Holding alone: exclusive work, or a generation loading its model. */
  alone: boolean;
}

interface Waiter {
  share: ShareSpec | null;
  grant: (holder: Holder) => void;
  reject: (error: unknown) => void;
}

export class RequestQueue {
  private readonly holders = new Set<Holder>();
  private readonly waiters: Waiter[] = [];

  constructor(
    private readonly maxQueue: number,
    /** Rough time one request holds the engine, for `retry-after-ms`. */
    private readonly typicalHoldMs: () => number = () => 1000,
  ) {}

  /** Requests waiting (not counting those running). */
  get waiting(): number {
    return this.waiters.length;
  }

  get running(): boolean {
    return this.holders.size > 0;
  }

  /** The engine alone (loads, embeddings, one-at-a-time generations). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    return (await this.enter(null, signal)).release;
  }

  /** A generation that may share the engine with its group (`share`), or holds it alone until its model is loaded. */
  acquireShared(share: ShareSpec, signal?: AbortSignal): Promise<Turn> {
    return this.enter(share, signal);
  }

  private enter(share: ShareSpec | null, signal?: AbortSignal): Promise<Turn> {
    if (signal?.aborted) return Promise.reject(abortError());
    if (this.waiters.length === 0) {
      const holder = this.admissible(share);
      if (holder) return Promise.resolve(this.hold(holder));
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
        share,
        grant: (holder) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.hold(holder));
        },
        reject,
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(abortError());
        // The waiter at the head may have kept later ones out.
        this.pump();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** The holder `share` would be admitted as now, or null when it must wait. */
  private admissible(share: ShareSpec | null): Holder | null {
    if (this.holders.size === 0) return { share, alone: share === null || !share.ready() };
    if (share === null || !share.ready()) return null;
    let sharing = 0;
    for (const holder of this.holders) {
      if (holder.alone || !holder.share || !sameGroup(holder.share, share)) return null;
      sharing++;
    }
    return sharing < share.maxRows ? { share, alone: false } : null;
  }

  private hold(holder: Holder): Turn {
    this.holders.add(holder);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.holders.delete(holder);
        this.pump();
      },
      loaded: () => {
        if (released || !holder.alone || !holder.share) return;
        holder.alone = false;
        this.pump();
      },
    };
  }

  /** Grants waiters in arrival order while the head can go in (a waiter that cannot keeps those behind it out: no starvation). */
  private pump(): void {
    while (this.waiters.length > 0) {
      const holder = this.admissible(this.waiters[0].share);
      if (!holder) return;
      this.waiters.shift()!.grant(holder);
    }
  }
}

function sameGroup(a: ShareSpec, b: ShareSpec): boolean {
  return a.group.engine === b.group.engine && a.group.model === b.group.model;
}
