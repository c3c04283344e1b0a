/**
 * The Responses API face of the EngineHost: the same pipeline as chat
 * (validation into a NormalizedRequest, queue, load, family shaping, the
 * shared generation loop, KV-reuse memory), with the Responses output builder
 * in place of the chat ChoiceBuilder, the response store (store/), and
 * background responses (background-run.ts): started at once, polled,
 * cancelled, and followed by any number of streams from any event on.
 *
 * This file is the face's front: each endpoint's method, and recovery started
 * once, on the face's first use (not when the host is built, so a client that
 * never touches the Responses API never reads its store). The work lives in
 * responses-run.ts (running a request), responses-stored.ts (the stored-
 * response methods), responses-recovery.ts (interrupted responses), and the
 * response objects in protocol/responses/response-object.ts.
 */
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Family } from "../families/types.js";
import type { GeneratedChunk } from "../engine/types.js";
import type { ChunkSink } from "./pipeline-core.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { ResponseList, ResponseListQuery } from "../store/response-store.js";
import { ResponseOwner } from "../store/owner-lock.js";
import { ResponseRuns, type RunSteps } from "./responses-run.js";
import { StoredResponses, type ResponsesCleared } from "./responses-stored.js";
import { recoverInterrupted, type CanResume } from "./responses-recovery.js";
import type { McpPool } from "../mcp/pool.js";

export type { ResponsesCleared } from "./responses-stored.js";

export class ResponsesFace<P extends { family: Family; resumeFrom?: GeneratedChunk[] }> {
  private readonly running: ResponseRuns<P>;
  private readonly stored: StoredResponses;
  private recovery: Promise<void> | undefined;

  /** `canResume`: whether a model loads without a download (recovery resumes only those). */
  constructor(
    steps: RunSteps<P>,
    readonly store: QueuedResponseStore,
    private readonly canResume: CanResume,
    mcp: McpPool,
    // Taken now, for the host's whole life: a response this host generates is told from an interrupted one by it.
    private readonly owner = new ResponseOwner(),
  ) {
    this.running = new ResponseRuns(steps, store, owner, mcp);
    this.stored = new StoredResponses(this.running, store);
  }

  /**
   * Every method starts recovery the first time (responses-recovery.ts): the
   * responses whose worker stopped mid-way resume or end `incomplete`. Nothing
   * waits on it, as nothing waited on it when the host's constructor started it.
   */
  private used(): void {
    this.recovery ??= recoverInterrupted(this.running, this.store, this.owner, this.canResume);
  }

  create(body: unknown, signal: AbortSignal | undefined, client?: string): Promise<ResponseObject> {
    this.used();
    return this.running.create(body, signal, client);
  }

  /** Resolves once generation has started; events then go to `sink` (responses-run.ts). */
  stream(body: unknown, sink: ChunkSink<ResponseStreamEvent>, signal: AbortSignal | undefined, client?: string): Promise<void> {
    this.used();
    return this.running.stream(body, sink, signal, client);
  }

  retrieve(id: string): Promise<ResponseObject> {
    this.used();
    return this.stored.retrieve(id);
  }

  /** A background response's events after `startingAfter`, then the live ones. */
  retrieveStream(id: string, startingAfter: number | undefined, sink: ChunkSink<ResponseStreamEvent>, signal?: AbortSignal): Promise<void> {
    this.used();
    return this.stored.retrieveStream(id, startingAfter, sink, signal);
  }

  cancel(id: string): Promise<ResponseObject> {
    this.used();
    return this.stored.cancel(id);
  }

  delete(id: string): Promise<ResponseDeleted> {
    this.used();
    return this.stored.delete(id);
  }

  inputItems(id: string, query?: InputItemListQuery): Promise<InputItemList> {
    this.used();
    return this.stored.inputItems(id, query);
  }

  list(query?: ResponseListQuery): Promise<ResponseList> {
    this.used();
    return this.stored.list(query);
  }

  clear(): Promise<ResponsesCleared> {
    this.used();
    return this.stored.clear();
  }
}
