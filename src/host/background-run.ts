/**
 * One response generating in the background (`background: true`): the events
 * it emitted so far (for a stream reattached with `starting_after`), the
 * streams following it live (several tabs of a shared worker can follow one
 * run), its abort for `cancel`, and its event log in the response store,
 * written in batches so the stream never waits on storage.
 *
 * A run resumed after its worker died is given the events already logged and
 * the engine chunks journaled with them. It continues the reply after those
 * chunks where the engine can (generation-loop.ts: the chunks replayed
 * through the parser yield the logged events again), or else starts over from
 * the same request; either way the events it produces up to the cut must be
 * the ones sent before (a greedy or scripted generation's are), and are not
 * sent again; the first that differs stops the run (`diverged`).
 */
import type { ApiError } from "../protocol/api-error.js";
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { ChunkSink } from "./pipeline-core.js";
import type { GeneratedChunk } from "../engine/types.js";
import { nextSequenceAfter } from "./event-replay.js";

/** Events are logged at most this often (ms), and at the end. */
const LOG_EVERY_MS = 100;

/**
 * Appends a response's events to its log in the store, in batches, with the
 * engine chunks they came from (the journal a resumed run continues from).
 * A chunk is added before the events it yields, and both go in the same
 * write, so every logged event's chunks are logged with it or before.
 */
export class EventLogWriter {
  private unlogged: ResponseStreamEvent[] = [];
  private unloggedChunks: GeneratedChunk[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Batches of chunks only since the last logged event: their keys fall between that event and the next. */
  private chunkOnlyBatches = 0;

  constructor(
    private readonly store: QueuedResponseStore,
    public id: string,
    /** The sequence number of the last event logged before (a resumed run's). */
    private lastLogged = -1,
  ) {}

  /** `events` must be this writer's own copies (the builder keeps changing the items its events name). */
  add(events: ResponseStreamEvent[]): void {
    for (const event of events) this.unlogged.push(event);
    this.timer ??= setTimeout(() => this.flush(), LOG_EVERY_MS);
  }

  addChunk(chunk: GeneratedChunk): void {
    this.unloggedChunks.push(chunk);
    this.timer ??= setTimeout(() => this.flush(), LOG_EVERY_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.unlogged.length === 0 && this.unloggedChunks.length === 0) return;
    const batch = this.unlogged;
    const chunks = this.unloggedChunks;
    this.unlogged = [];
    this.unloggedChunks = [];
    let batchKey: number | undefined;
    if (batch.length > 0) {
      this.lastLogged = batch[batch.length - 1].sequence_number;
      this.chunkOnlyBatches = 0;
    } else batchKey = this.lastLogged + 1 - 1 / (2 + this.chunkOnlyBatches++);
    void this.store.appendEvents(this.id, batch, chunks, batchKey);
  }
}

export class BackgroundRun implements ChunkSink<ResponseStreamEvent> {
  readonly controller = new AbortController();
  readonly events: ResponseStreamEvent[];
  private readonly followers = new Set<ChunkSink<ResponseStreamEvent>>();
  private readonly log: EventLogWriter | null;
  /** Events up to this sequence number were sent before (a resumed run): regenerated ones are checked, not sent. */
  private readonly replayedUntil: number;
  done = false;
  /** Set by `cancel()`: the abort that follows is a cancellation, kept as `status: "cancelled"`. */
  cancelled = false;
  /** Set when a resumed run regenerated an event other than the one sent before: it cannot continue what was sent. */
  diverged: string | null = null;
  private markDone!: () => void;
  /** Resolves once the run has ended (its last store writes queued) and every follower was closed. */
  readonly whenDone = new Promise<void>((resolve) => (this.markDone = resolve));
  /** The response as it stands (status, output so far); replaced by the face as it changes. */
  current: () => ResponseObject;

  constructor(
    readonly id: string,
    initial: ResponseObject,
    store: QueuedResponseStore | null,
    sentBefore: ResponseStreamEvent[] = [],
  ) {
    this.current = () => structuredCloneLite(initial);
    this.events = [...sentBefore];
    this.replayedUntil = nextSequenceAfter(sentBefore) - 1;
    this.log = store ? new EventLogWriter(store, id, this.replayedUntil) : null;
  }

  write(events: ResponseStreamEvent[]): void {
    if (this.diverged) return;
    // The builder keeps changing the items its events name: the log keeps them as they were sent.
    let copies = structuredCloneLite(events);
    if (this.replayedUntil >= 0 && copies[0]?.sequence_number <= this.replayedUntil) {
      for (const event of copies) {
        if (event.sequence_number > this.replayedUntil) break;
        if (JSON.stringify(event) !== JSON.stringify(this.events[event.sequence_number])) {
          this.diverged = `the regenerated event ${event.sequence_number} (${event.type}) differs from the one sent before the worker stopped (sampling with temperature > 0 does not repeat itself)`;
          this.controller.abort();
          return;
        }
      }
      copies = copies.filter((event) => event.sequence_number > this.replayedUntil);
      if (copies.length === 0) return;
    }
    this.append(copies);
  }

  /** Sends, keeps and logs `events` (this run's own copies), with no replay check: the face's closing event of a run that could not resume. */
  append(events: ResponseStreamEvent[]): void {
    for (const event of events) this.events.push(event);
    for (const follower of this.followers) follower.write(events);
    this.log?.add(events);
  }

  /** Journals a chunk the engine produced (before the events it yields are written). */
  journal(chunk: GeneratedChunk): void {
    if (!this.diverged) this.log?.addChunk(chunk);
  }

  /** The next sequence number. */
  get nextSequence(): number {
    return nextSequenceAfter(this.events);
  }

  /** Stops the run (cancel, delete, clear): it ends `cancelled`, with its output so far. */
  cancel(): void {
    this.cancelled = true;
    this.controller.abort();
  }

  end(): void {
    this.finish((follower) => follower.end());
  }

  fail(error: ApiError): void {
    this.finish((follower) => follower.fail(error));
  }

  /**
   * Sends the events after `startingAfter` to `sink`, then the live ones
   * until the run ends. Live events are filtered by sequence number too: a
   * follower asking for events after 10 while the run is still queued, or
   * one that saw events a resumed run regenerates (those of the last moments
   * before its worker stopped, never logged), gets each event after its
   * `startingAfter` once.
   */
  follow(startingAfter: number, sink: ChunkSink<ResponseStreamEvent>, signal?: AbortSignal): void {
    let last = startingAfter;
    const after = (events: ResponseStreamEvent[]) => {
      const fresh = events.filter((event) => event.sequence_number > last);
      if (fresh.length > 0) last = fresh[fresh.length - 1].sequence_number;
      return fresh;
    };
    const past = after(this.events);
    if (past.length > 0) sink.write(past);
    if (this.done) {
      sink.end();
      return;
    }
    const follower: ChunkSink<ResponseStreamEvent> = {
      write: (events) => {
        const fresh = after(events);
        if (fresh.length > 0) sink.write(fresh);
      },
      end: () => sink.end(),
      fail: (error) => sink.fail(error),
    };
    this.followers.add(follower);
    // A follower that goes away (its tab, its fetch) stops following; the run goes on.
    signal?.addEventListener("abort", () => {
      if (this.followers.delete(follower)) sink.end();
    }, { once: true });
  }

  private finish(close: (follower: ChunkSink<ResponseStreamEvent>) => void): void {
    if (this.done) return;
    this.done = true;
    this.log?.flush();
    for (const follower of this.followers) close(follower);
    this.followers.clear();
    this.markDone();
  }
}
