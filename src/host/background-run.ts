/**
 * One response generating in the background (`background: true`), or a
 * stored response streaming: the events it emitted so far (for a stream
 * reattached with `starting_after`), the streams following it live (several
 * tabs of a shared worker can follow one run), its abort for `cancel`, and
 * its event log in the response store, written in batches so the stream
 * never waits on storage.
 */
import type { ApiError } from "../protocol/api-error.js";
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { ChunkSink } from "./engine-host.js";

/** Events are logged at most this often (ms), and at the end. */
const LOG_EVERY_MS = 100;

export class BackgroundRun implements ChunkSink<ResponseStreamEvent> {
  readonly controller = new AbortController();
  readonly events: ResponseStreamEvent[] = [];
  private readonly followers = new Set<ChunkSink<ResponseStreamEvent>>();
  private unlogged: ResponseStreamEvent[] = [];
  private logTimer: ReturnType<typeof setTimeout> | null = null;
  done = false;
  private markDone!: () => void;
  /** Resolves once the run has ended (its last store writes queued) and every follower was closed. */
  readonly whenDone = new Promise<void>((resolve) => (this.markDone = resolve));
  /** Set by `cancel`: the abort that follows is a cancellation, kept as `status: "cancelled"`. */
  cancelled = false;
  /** The response as it stands (status, output so far); replaced by the face as it changes. */
  current: () => ResponseObject;

  constructor(
    readonly id: string,
    initial: ResponseObject,
    private readonly store: QueuedResponseStore | null,
  ) {
    this.current = () => structuredCloneLite(initial);
  }

  write(events: ResponseStreamEvent[]): void {
    // The builder keeps changing the items its events name: the log keeps them as they were sent.
    const copies = structuredCloneLite(events);
    this.events.push(...copies);
    for (const follower of this.followers) follower.write(copies);
    if (this.store) {
      this.unlogged.push(...copies);
      this.logTimer ??= setTimeout(() => this.flushLog(), LOG_EVERY_MS);
    }
  }

  end(): void {
    this.finish((follower) => follower.end());
  }

  fail(error: ApiError): void {
    this.finish((follower) => follower.fail(error));
  }

  /** Sends the events after `startingAfter` to `sink`, then the live ones until the run ends. */
  follow(startingAfter: number, sink: ChunkSink<ResponseStreamEvent>, signal?: AbortSignal): void {
    const past = this.events.filter((event) => event.sequence_number > startingAfter);
    if (past.length > 0) sink.write(past);
    if (this.done) {
      sink.end();
      return;
    }
    this.followers.add(sink);
    // A follower that goes away (its tab, its fetch) stops following; the run goes on.
    signal?.addEventListener("abort", () => {
      if (this.followers.delete(sink)) sink.end();
    }, { once: true });
  }

  private finish(close: (follower: ChunkSink<ResponseStreamEvent>) => void): void {
    if (this.done) return;
    this.done = true;
    this.flushLog();
    for (const follower of this.followers) close(follower);
    this.followers.clear();
    this.markDone();
  }

  private flushLog(): void {
    if (this.logTimer) clearTimeout(this.logTimer);
    this.logTimer = null;
    if (!this.store || this.unlogged.length === 0) return;
    const batch = this.unlogged;
    this.unlogged = [];
    void this.store.appendEvents(this.id, batch);
  }
}
