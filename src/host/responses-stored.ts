/**
 * The stored-response methods of the Responses API: retrieve (as JSON, or as
 * the events of a background response from any one on), cancel, delete,
 * input items, list and clear. They read the response store, and reach what
 * runs now in this host (responses-run.ts) or, for a background response
 * another worker generates, its event log and the cancel channel.
 */
import { ApiError } from "../protocol/api-error.js";
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import { isUnfinished } from "../protocol/responses/response-object.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { ChunkSink } from "./pipeline-core.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { ResponseList, ResponseListQuery } from "../store/response-store.js";
import { CancelChannel } from "./cancel-channel.js";
import type { BackgroundRun } from "./background-run.js";

/** How often a stream follows a background response running in another worker (its events read from the store). */
const FOLLOW_STORED_MS = 200;

export interface ResponsesCleared {
  object: "response.cleared";
  deleted: number;
}

/** What runs in this host now (responses-run.ts's ResponseRuns). */
export interface RunningResponses {
  readonly live: Map<string, () => ResponseObject>;
  readonly runs: Map<string, BackgroundRun>;
}

export class StoredResponses {
  /** Cancels reaching the worker that runs a response (another tab's dedicated worker). */
  private readonly cancels = new CancelChannel((id) => this.cancelHere(id));

  constructor(
    private readonly running: RunningResponses,
    private readonly store: QueuedResponseStore,
  ) {}

  async retrieve(id: string): Promise<ResponseObject> {
    const live = this.running.live.get(id);
    if (live) return live();
    const entry = await this.store.get(id);
    if (!entry) throw notFound(id);
    return entry.response;
  }

  /**
   * `retrieve(id, { stream: true, starting_after })`: the events of a
   * background response after `startingAfter`, then the live ones. A run in
   * this host is followed directly; one in another worker (another tab's
   * dedicated worker) through its event log in the store.
   */
  async retrieveStream(id: string, startingAfter: number | undefined, sink: ChunkSink<ResponseStreamEvent>, signal?: AbortSignal): Promise<void> {
    // null, as an app may pass a parameter it leaves out, is every event as undefined is.
    if (startingAfter != null && (!Number.isInteger(startingAfter) || startingAfter < 0)) {
      throw new ApiError({ status: 400, param: "starting_after", message: `\`starting_after\` must be a sequence number (an integer ≥ 0), not ${typeof startingAfter === "number" ? String(startingAfter) : JSON.stringify(startingAfter)}; leave it out for every event.` });
    }
    const after = startingAfter ?? -1;
    const run = this.running.runs.get(id);
    if (run) return run.follow(after, sink, signal);
    const entry = await this.store.get(id);
    if (!entry) throw notFound(id);
    if (!entry.response.background) {
      throw new ApiError({ status: 400, param: "stream", message: `Response '${id}' was not created with \`background: true\`: only background responses can be streamed again.` });
    }
    void this.followStored(id, after, sink, signal);
  }

  private async followStored(id: string, after: number, sink: ChunkSink<ResponseStreamEvent>, signal?: AbortSignal): Promise<void> {
    let last = after;
    // After the first read every batch read was whole: the next ones start after the last event sent.
    let fromBatch: number | undefined;
    try {
      for (;;) {
        const events = (await this.store.readEvents(id, fromBatch)).filter((event) => event.sequence_number > last);
        if (events.length > 0) {
          sink.write(events);
          last = events[events.length - 1].sequence_number;
        }
        fromBatch = last + 1;
        const run = this.running.runs.get(id);
        if (run) return run.follow(last, sink, signal);
        const entry = await this.store.get(id);
        if (!entry || !isUnfinished(entry.response.status) || events.some((e) => e.type === "response.completed" || e.type === "response.failed" || e.type === "response.incomplete")) {
          // Events logged after the status changed are read once more, then the stream ends.
          const rest = (await this.store.readEvents(id, last + 1)).filter((event) => event.sequence_number > last);
          if (rest.length > 0) sink.write(rest);
          return sink.end();
        }
        if (signal?.aborted) return sink.end();
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_STORED_MS));
      }
    } catch (error) {
      sink.fail(ApiError.from(error));
    }
  }

  /** `POST /responses/{id}/cancel`: stops a background response (`status: "cancelled"`, its output so far kept). */
  async cancel(id: string): Promise<ResponseObject> {
    const here = await this.cancelHere(id);
    if (here) return here;
    const entry = await this.store.get(id);
    if (!entry) throw notFound(id);
    if (!entry.response.background) throw new ApiError({ status: 400, param: "response_id", message: `Response '${id}' was not created with \`background: true\`: only background responses can be cancelled.` });
    if (isUnfinished(entry.response.status)) {
      const there = await this.cancels.elsewhere(id);
      if (there) return there;
      throw new ApiError({ status: 409, code: "response_not_running", param: "response_id", message: `Response '${id}' is stored as ${entry.response.status}, but no live worker of this origin is generating it (its worker stopped; the next client to call the Responses API resumes it or ends it incomplete). Retrieve it again shortly.` });
    }
    // Already done: cancelling changes nothing, as on the hosted API.
    return entry.response;
  }

  /** Cancels a run of this host: its final state, or null when it runs no such response. */
  private async cancelHere(id: string): Promise<ResponseObject | null> {
    const run = this.running.runs.get(id);
    if (!run || run.done) return null;
    run.cancel();
    await run.whenDone;
    return run.current();
  }

  async delete(id: string): Promise<ResponseDeleted> {
    const wasLive = this.running.live.delete(id);
    const run = this.running.runs.get(id);
    if (run && !run.done) run.cancel();
    if (!(await this.store.delete(id)) && !wasLive) throw notFound(id);
    return { id, object: "response", deleted: true };
  }

  async inputItems(id: string, query: InputItemListQuery = {}): Promise<InputItemList> {
    const entry = await this.store.get(id);
    if (!entry) throw notFound(id);
    return page(entry.inputItems, query, () => `\`after\` names no input item of response '${id}'.`);
  }

  /** `client.responses.list()`: the stored responses, newest first by default (live ones as they stand). */
  async list(query: ResponseListQuery = {}): Promise<ResponseList> {
    const stored = await this.store.list();
    return page(stored.map((response) => this.running.live.get(response.id)?.() ?? response), query, () => "`after` names no stored response.");
  }

  /** `client.responses.clear()`: deletes every stored response (background ones still running are cancelled). */
  async clear(): Promise<ResponsesCleared> {
    for (const run of this.running.runs.values()) run.cancel();
    this.running.live.clear();
    return { object: "response.cleared", deleted: await this.store.clear() };
  }
}

/** One page of `items` (stored oldest first) by `limit`, `order` (default newest first) and `after` (an id). */
function page<T extends { id?: string }>(items: T[], query: { limit?: number; order?: "asc" | "desc"; after?: string }, noAfter: () => string) {
  const limit = query.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError({ status: 400, param: "limit", message: "`limit` must be an integer between 1 and 100." });
  const order = query.order ?? "desc";
  if (order !== "asc" && order !== "desc") throw new ApiError({ status: 400, param: "order", message: "`order` must be \"asc\" or \"desc\"." });
  let ordered = order === "asc" ? [...items] : [...items].reverse();
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === query.after);
    if (at < 0) throw new ApiError({ status: 400, param: "after", message: noAfter() });
    ordered = ordered.slice(at + 1);
  }
  const data = structuredCloneLite(ordered.slice(0, limit));
  return { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: ordered.length > limit };
}

function notFound(id: string): ApiError {
  return new ApiError({ status: 404, code: "response_not_found", param: "response_id", message: `Response with id '${id}' not found. It was deleted, dropped by the response store's retention (oldest first), stored with \`store: false\`, or kept in another client's memory store.` });
}
