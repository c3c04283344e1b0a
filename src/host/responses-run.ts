/**
 * Running a Responses request: validated, then generated through the shared
 * pipeline with the Responses output builder, in one of three ways — answered
 * once (`create`), streamed (`stream`), or in the background (stored `queued`
 * at once and generated as a stream whose events its BackgroundRun keeps, so
 * it can be polled, cancelled and followed, and resumed after its worker
 * stopped). It keeps what is running now (`live`, `runs`) for the stored-
 * response methods (responses-stored.ts) and recovery (responses-recovery.ts).
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import type { NormalizedRequest } from "../protocol/normalized.js";
import { validateResponsesRequest, type ResponsesRequest } from "../protocol/responses/validate.js";
import { itemsToMessages } from "../protocol/responses/items.js";
import { ResponseOutputBuilder, structuredCloneLite } from "../protocol/responses/output-builder.js";
import { baseResponse, finalResponse, interruptedResponse, isUnfinished } from "../protocol/responses/response-object.js";
import { truncatingRetries } from "../protocol/responses/truncation.js";
import type { ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Family } from "../families/types.js";
import type { GeneratedChunk, GenerationOutput, GenerationResult } from "./generation-output.js";
import type { ChunkSink } from "./pipeline-core.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { StoredResponse } from "../store/response-store.js";
import { prefetchLookup } from "../store/lookup.js";
import { BackgroundRun, EventLogWriter } from "./background-run.js";
import { idsFromEvents, outputFromEvents } from "./event-replay.js";
import type { ResponseOwner } from "../store/owner-lock.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { ToolChoice } from "../protocol/types.js";
import type { McpPool } from "../mcp/pool.js";
import { generateRounds, hostedCallsOf, planMcp } from "./responses-mcp.js";
import { withoutMcpSecrets } from "../protocol/responses/mcp-items.js";

/** The steps of the pipeline (pipeline-core.ts) a Responses run takes: a queue slot with the request prepared, and the generation loop. */
export interface RunSteps<P extends { family: Family; resumeFrom?: GeneratedChunk[] }> {
  run<T>(request: NormalizedRequest, signal: AbortSignal | undefined, work: (prepared: P, signal: AbortSignal) => Promise<T>): Promise<T>;
  generate(prepared: P, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult>;
  /** The request prepared again in its slot with more messages (a hosted tool's next round: responses-mcp.ts); `toolChoice` when it changes. */
  prepareAgain(prepared: P, messages: NormalizedMessage[], toolChoice?: ToolChoice): P;
}

/** A background run started over after its worker stopped: its stored response, the events it had sent, and the engine chunks journaled. */
export interface Resumed {
  base: ResponseObject;
  sentBefore: ResponseStreamEvent[];
  journaled: GeneratedChunk[];
}

export class ResponseRuns<P extends { family: Family; resumeFrom?: GeneratedChunk[] }> {
  /** Responses streaming or in the background, by id: their state as it stands (the store holds the last write). */
  readonly live = new Map<string, () => ResponseObject>();
  /** Background responses still generating in this host. */
  readonly runs = new Map<string, BackgroundRun>();

  constructor(
    private readonly steps: RunSteps<P>,
    private readonly store: QueuedResponseStore,
    private readonly owner: ResponseOwner,
    private readonly mcp: McpPool,
  ) {}

  async validate(body: unknown, client: string | undefined, signal?: AbortSignal): Promise<ResponsesRequest> {
    const lookup = await prefetchLookup(body, this.store);
    const request = validateResponsesRequest(body, lookup);
    request.normalized.client = client;
    request.body = body;
    // The `mcp` tools' listings and approved calls, before the queue slot: network work never holds the engine.
    await planMcp(request, lookup, this.mcp, signal);
    return request;
  }

  /** The generations of a response: one, or the rounds of its hosted tools (responses-mcp.ts). */
  private generate(request: ResponsesRequest, prepared: P, builder: ResponseOutputBuilder, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult> {
    return generateRounds(request, prepared, builder, output, this.steps, this.mcp, signal);
  }

  async create(body: unknown, signal: AbortSignal | undefined, client?: string): Promise<ResponseObject> {
    const request = await this.validate(body, client, signal);
    if (request.normalized.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createResponse returns one Response; use streamResponse for `stream: true`." });
    }
    if (request.echo.background) return this.startBackground(request).current();
    return truncatingRetries(request, (attempt) => this.createOnce(attempt, signal));
  }

  private createOnce(request: ResponsesRequest, signal: AbortSignal | undefined): Promise<ResponseObject> {
    return this.steps.run(request.normalized, signal, async (prepared, slotSignal) => {
      const base = baseResponse(request);
      const builder = new ResponseOutputBuilder({ emit: null, summary: request.summary, logprobs: request.logprobs, newCallId: () => prepared.family.newToolCallId(), hostedCall: hostedCallsOf(request) });
      const result = await this.generate(request, prepared, builder, builder, slotSignal);
      builder.finish(result.finish);
      // The builder is this request's alone and emitted nothing: its items can be the response's.
      const response = finalResponse(base, builder.output, result);
      // Answered once stored: a response the app holds survives a reload right after (a failed write is reported, not thrown).
      await this.save(request, response);
      return response;
    }).catch(rethrowForInput);
  }

  /**
   * Starts a streamed response. Resolves once generation has started (errors
   * before that reject, as chat's do); from then on events go to `sink`.
   * An error after the start sends `response.failed`, then fails the sink.
   * A background response resolves at once: `sink` follows its run, and
   * closing it (`signal`) leaves the run going.
   */
  async stream(body: unknown, sink: ChunkSink<ResponseStreamEvent>, signal: AbortSignal | undefined, client?: string): Promise<void> {
    const request = await this.validate(body, client, signal);
    request.normalized.stream = true;
    if (request.echo.background) {
      this.startBackground(request).follow(-1, sink, signal);
      return;
    }
    return truncatingRetries(request, (attempt) => this.streamOnce(attempt, sink, signal));
  }

  /**
   * A background response: stored `queued` at once, generated as a stream
   * whose events its run keeps. `resume`: one whose worker stopped, started
   * over from its request with the events it had sent (background-run.ts).
   */
  startBackground(request: ResponsesRequest, resume?: Resumed): BackgroundRun {
    request.normalized.stream = true;
    const queued: ResponseObject = resume ? resume.base : { ...baseResponse(request), status: "queued" };
    const run = new BackgroundRun(queued.id, queued, this.store, resume?.sentBefore);
    const ids = idsFromEvents(resume?.sentBefore ?? []);
    this.runs.set(run.id, run);
    this.live.set(run.id, () => structuredCloneLite(queued));
    void this.store.put(this.entry(request, queued));
    void run.whenDone.then(() => this.runs.delete(run.id));
    truncatingRetries(request, (attempt) => this.streamOnce(attempt, run, run.controller.signal, { run, base: queued, ...ids, journaled: resume?.journaled ?? [] })).catch((error) => {
      // Ended before generation started: cancelled while queued, or refused (model, context window, ...).
      const cancelled = run.cancelled && isAbortError(error);
      const failure = cancelled ? null : ApiError.from(forInput(error));
      const ended: ResponseObject = cancelled
        ? { ...queued, status: "cancelled" }
        : { ...queued, status: "failed", error: { code: failure?.code ?? "server_error", message: failure?.message ?? "" } };
      void this.save(request, ended, true);
      this.live.delete(run.id);
      run.current = () => structuredCloneLite(ended);
      if (failure) {
        run.append([{ type: "response.failed", sequence_number: run.nextSequence, response: structuredCloneLite(ended) }]);
        run.fail(failure);
      } else run.end();
    });
    return run;
  }

  private streamOnce(
    request: ResponsesRequest,
    sink: ChunkSink<ResponseStreamEvent>,
    signal: AbortSignal | undefined,
    background?: { run: BackgroundRun; base: ResponseObject; itemIds: string[]; callIds: string[]; journaled: GeneratedChunk[] },
  ): Promise<void> {
    // A stored stream's events are logged too: if its worker stops, what it had sent is kept (responses-recovery.ts).
    const log = request.store && !background ? new EventLogWriter(this.store, "") : null;
    return new Promise<void>((resolveStarted, rejectStarted) => {
      let started = false;
      let builder: ResponseOutputBuilder | null = null;
      let base: ResponseObject | null = null;
      const run = this.steps.run(request.normalized, signal, async (prepared, slotSignal) => {
        const emit = (events: ResponseStreamEvent[]) => {
          log?.add(structuredCloneLite(events));
          sink.write(events);
        };
        const callIds = [...(background?.callIds ?? [])];
        const b = new ResponseOutputBuilder({ emit, summary: request.summary, logprobs: request.logprobs, newCallId: () => callIds.shift() ?? prepared.family.newToolCallId(), itemIds: [...(background?.itemIds ?? [])], hostedCall: hostedCallsOf(request) });
        builder = b;
        const snapshot: ResponseObject = background ? { ...background.base, status: "in_progress" } : baseResponse(request);
        base = snapshot;
        if (log) log.id = snapshot.id;
        const start = () => {
          if (started) return;
          started = true;
          // Stored from its creation, as on the hosted API: retrievable while it streams (the output so far).
          if (request.store) {
            const view = () => ({ ...structuredCloneLite(snapshot), output: b.outputSoFar() });
            this.live.set(snapshot.id, view);
            if (background) {
              background.run.current = view;
              void this.store.replace(this.entry(request, snapshot));
            } else void this.store.put(this.entry(request, snapshot));
          }
          b.opening(structuredCloneLite(snapshot));
          resolveStarted();
        };
        const output: GenerationOutput = {
          write(events, logprobs) {
            start();
            b.write(events, logprobs);
          },
          reply: () => b.reply(),
          // A background reply is journaled chunk by chunk: a run resumed after its worker stopped continues after them.
          ...(background ? { generated: (chunk: GeneratedChunk) => background.run.journal(chunk) } : {}),
        };
        if (background && background.journaled.length > 0) prepared.resumeFrom = background.journaled;
        const result = await this.generate(request, prepared, b, output, slotSignal);
        start();
        b.finish(result.finish);
        // The delta events already sent share objects with the builder's items: the response gets its own copy.
        const response = finalResponse(snapshot, structuredCloneLite(b.output), result);
        // The tokens never waited on storage; the terminal event does, so "completed" means stored (a failed write is reported, not thrown).
        await this.end(request, response, background?.run);
        b.terminal(response);
      });
      run
        .finally(() => {
          if (!log) return;
          log.flush();
          // The stream is over: its log served recovery only (no stream reattaches to one not in the background).
          if (log.id) void this.store.dropLog(log.id);
        })
        .catch(() => {});
      run.then(
        () => sink.end(),
        (error) => {
          const b = builder as ResponseOutputBuilder | null;
          const snapshot = base as ResponseObject | null;
          if (!started) rejectStarted(forInput(error));
          else if (background?.run.diverged && snapshot) {
            const run = background.run;
            const ended = interruptedResponse(snapshot, outputFromEvents(run.events, snapshot.id), "resume_diverged", `The response could not resume after its worker stopped: ${run.diverged}. It ends with the output sent before.`);
            void this.end(request, ended, run);
            run.append([{ type: "response.incomplete", sequence_number: run.nextSequence, response: structuredCloneLite(ended) }]);
            sink.end();
          } else if (isAbortError(error)) {
            if (background?.run.cancelled && snapshot && b) {
              void this.end(request, { ...snapshot, status: "cancelled", output: b.outputSoFar() }, background.run);
            } else if (snapshot) {
              // A stream the app stopped is not kept.
              this.live.delete(snapshot.id);
              void this.store.delete(snapshot.id);
            }
            sink.end();
          } else {
            const failure = ApiError.from(forInput(error));
            if (b && snapshot) {
              const failed: ResponseObject = { ...snapshot, status: "failed", output: structuredCloneLite(b.output), error: { code: failure.code ?? "server_error", message: failure.message } };
              void this.end(request, failed, background?.run);
              b.terminal(failed);
            }
            sink.fail(failure);
          }
        },
      );
    });
  }

  /** A streamed response is done: its last state stored (in place of its entry, so a delete meanwhile wins), no longer live. */
  private end(request: ResponsesRequest, response: ResponseObject, run: BackgroundRun | undefined): Promise<boolean> {
    const saved = this.save(request, response, true);
    this.live.delete(response.id);
    if (run) run.current = () => structuredCloneLite(response);
    return saved;
  }

  private entry(request: ResponsesRequest, response: ResponseObject): StoredResponse {
    const history = [...request.history, ...itemsToMessages(response.output, "output")];
    const entry: StoredResponse = { response: structuredCloneLite(response), inputItems: request.inputItems, history, ...(request.mcp ? { mcpListings: request.mcp.listings } : {}) };
    if (isUnfinished(response.status) && request.body !== undefined) entry.journal = { body: withoutMcpSecrets(request.body), owner: this.owner.name, client: request.normalized.client };
    return entry;
  }

  /** Stores a finished response; `streamed`: only in place of its in-progress entry, so a delete during the stream wins. */
  private save(request: ResponsesRequest, response: ResponseObject, streamed = false): Promise<boolean> {
    if (!request.store) return Promise.resolve(false);
    const entry = this.entry(request, response);
    return streamed ? this.store.replace(entry) : this.store.put(entry);
  }
}

/** The pipeline names the chat face's `messages`; here the conversation is `input`. */
function forInput(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.param !== "messages") return error;
  return new ApiError({ status: error.status, type: error.type, code: error.code, param: "input", message: error.message, retryAfterMs: error.retryAfterMs });
}

function rethrowForInput(error: unknown): never {
  throw forInput(error);
}
