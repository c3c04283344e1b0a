/**
 * The Responses API face of the EngineHost: the same pipeline as chat
 * (validation into a NormalizedRequest, queue, load, family shaping, the
 * shared generation loop, KV-reuse memory), with the Responses output builder
 * in place of the chat ChoiceBuilder, the response store (store/), and
 * background responses (background-run.ts): started at once, polled,
 * cancelled, and followed by any number of streams from any event on.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import { randomId } from "../protocol/ids.js";
import type { NormalizedRequest } from "../protocol/validate.js";
import { itemsToMessages, validateResponsesRequest, type ResponsesRequest } from "../protocol/responses/validate.js";
import { ResponseOutputBuilder, responseUsage, structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Family } from "../families/types.js";
import type { GeneratedChunk, GenerationOutput, GenerationResult } from "./generation-output.js";
import type { ChunkSink } from "./engine-host.js";
import type { QueuedResponseStore } from "../store/queued-store.js";
import type { ResponseList, ResponseListQuery, StoredResponse } from "../store/response-store.js";
import { prefetchLookup } from "../store/lookup.js";
import { BackgroundRun, EventLogWriter } from "./background-run.js";
import { checkEventLog, idsFromEvents, nextSequenceAfter, outputFromEvents } from "./event-replay.js";
import { ResponseOwner } from "../store/owner-lock.js";
import { CancelChannel } from "./cancel-channel.js";

/** What the face needs from the EngineHost: a queue slot with the request prepared, and the generation loop. */
export interface Pipeline<P extends { family: Family; resumeFrom?: GeneratedChunk[] }> {
  run<T>(request: NormalizedRequest, signal: AbortSignal | undefined, work: (prepared: P, signal: AbortSignal) => Promise<T>): Promise<T>;
  generate(prepared: P, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult>;
}

export const newResponseId = () => `resp_${randomId(32)}`;

/** A stored response that is not done: retrieve answers its live state, cancel and streams reach its run. */
const UNFINISHED = new Set(["queued", "in_progress"]);

/** How often a stream follows a background response running in another worker (its events read from the store). */
const FOLLOW_STORED_MS = 200;

export interface ResponsesCleared {
  object: "response.cleared";
  deleted: number;
}

export class ResponsesFace<P extends { family: Family; resumeFrom?: GeneratedChunk[] }> {
  /** Responses streaming or in the background, by id: their state as it stands (the store holds the last write). */
  private readonly live = new Map<string, () => ResponseObject>();
  /** Background responses still generating in this host. */
  private readonly runs = new Map<string, BackgroundRun>();
  /** Cancels reaching the worker that runs a response (another tab's dedicated worker). */
  private readonly cancels = new CancelChannel((id) => this.cancelHere(id));

  constructor(
    private readonly pipeline: Pipeline<P>,
    readonly store: QueuedResponseStore,
    private readonly owner = new ResponseOwner(),
  ) {}

  private async validate(body: unknown, client: string | undefined): Promise<ResponsesRequest> {
    const request = validateResponsesRequest(body, await prefetchLookup(body, this.store));
    request.normalized.client = client;
    request.body = body;
    return request;
  }

  async create(body: unknown, signal: AbortSignal | undefined, client?: string): Promise<ResponseObject> {
    const request = await this.validate(body, client);
    if (request.normalized.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createResponse returns one Response; use streamResponse for `stream: true`." });
    }
    if (request.echo.background) return this.startBackground(request).current();
    return truncatingRetries(request, (attempt) => this.createOnce(attempt, signal));
  }

  private createOnce(request: ResponsesRequest, signal: AbortSignal | undefined): Promise<ResponseObject> {
    return this.pipeline.run(request.normalized, signal, async (prepared, slotSignal) => {
      const base = baseResponse(request);
      const builder = new ResponseOutputBuilder({ emit: null, summary: request.summary, logprobs: request.logprobs, newCallId: () => prepared.family.newToolCallId() });
      const result = await this.pipeline.generate(prepared, builder, slotSignal);
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
    const request = await this.validate(body, client);
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
  private startBackground(request: ResponsesRequest, resume?: { base: ResponseObject; sentBefore: ResponseStreamEvent[]; journaled: GeneratedChunk[] }): BackgroundRun {
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
    // A stored stream's events are logged too: if its worker stops, what it had sent is kept (recover()).
    const log = request.store && !background ? new EventLogWriter(this.store, "") : null;
    return new Promise<void>((resolveStarted, rejectStarted) => {
      let started = false;
      let builder: ResponseOutputBuilder | null = null;
      let base: ResponseObject | null = null;
      const run = this.pipeline.run(request.normalized, signal, async (prepared, slotSignal) => {
        const emit = (events: ResponseStreamEvent[]) => {
          log?.add(structuredCloneLite(events));
          sink.write(events);
        };
        const callIds = [...(background?.callIds ?? [])];
        const b = new ResponseOutputBuilder({ emit, summary: request.summary, logprobs: request.logprobs, newCallId: () => callIds.shift() ?? prepared.family.newToolCallId(), itemIds: [...(background?.itemIds ?? [])] });
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
        const result = await this.pipeline.generate(prepared, output, slotSignal);
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
            const ended = interruptedResponse(snapshot, run.events, "resume_diverged", `The response could not resume after its worker stopped: ${run.diverged}. It ends with the output sent before.`);
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

  async retrieve(id: string): Promise<ResponseObject> {
    const live = this.live.get(id);
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
    const run = this.runs.get(id);
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
        const run = this.runs.get(id);
        if (run) return run.follow(last, sink, signal);
        const entry = await this.store.get(id);
        if (!entry || !UNFINISHED.has(entry.response.status) || events.some((e) => e.type === "response.completed" || e.type === "response.failed" || e.type === "response.incomplete")) {
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
    if (UNFINISHED.has(entry.response.status)) {
      const there = await this.cancels.elsewhere(id);
      if (there) return there;
      throw new ApiError({ status: 409, code: "response_not_running", param: "response_id", message: `Response '${id}' is stored as ${entry.response.status}, but no live worker of this origin is generating it (its worker stopped; the next client to start resumes it or ends it incomplete). Retrieve it again shortly.` });
    }
    // Already done: cancelling changes nothing, as on the hosted API.
    return entry.response;
  }

  /** Cancels a run of this host: its final state, or null when it runs no such response. */
  private async cancelHere(id: string): Promise<ResponseObject | null> {
    const run = this.runs.get(id);
    if (!run || run.done) return null;
    run.cancel();
    await run.whenDone;
    return run.current();
  }

  async delete(id: string): Promise<ResponseDeleted> {
    const wasLive = this.live.delete(id);
    const run = this.runs.get(id);
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
    return page(stored.map((response) => this.live.get(response.id)?.() ?? response), query, () => "`after` names no stored response.");
  }

  /** `client.responses.clear()`: deletes every stored response (background ones still running are cancelled). */
  async clear(): Promise<ResponsesCleared> {
    for (const run of this.runs.values()) run.cancel();
    this.live.clear();
    return { object: "response.cleared", deleted: await this.store.clear() };
  }

  private entry(request: ResponsesRequest, response: ResponseObject): StoredResponse {
    const history = [...request.history, ...itemsToMessages(response.output, "output")];
    const entry: StoredResponse = { response: structuredCloneLite(response), inputItems: request.inputItems, history };
    if (UNFINISHED.has(response.status) && request.body !== undefined) entry.journal = { body: request.body, owner: this.owner.name, client: request.normalized.client };
    return entry;
  }

  /**
   * When a host starts: the stored responses whose worker stopped mid-way (a
   * reload, the last tab of a shared worker closed; owner-lock.ts tells them
   * from ones another live worker generates). A background one resumes where
   * `canResume` allows (its model ready without a download); a stored stream,
   * whose reader went with its page, and one that cannot resume end
   * `incomplete` with the output they had sent. None stays `in_progress`.
   */
  async recover(canResume: (model: string) => Promise<boolean>): Promise<void> {
    if (!ResponseOwner.available) return;
    await this.owner.held;
    const alive = await ResponseOwner.alive();
    for (const response of await this.store.list()) {
      if (!UNFINISHED.has(response.status)) continue;
      const entry = await this.store.get(response.id).catch(() => undefined);
      if (!entry?.journal || alive.has(entry.journal.owner)) continue;
      void ResponseOwner.exclusively(response.id, () => this.resume(response.id, canResume)).catch((error) => {
        console.warn(`webgpu-openai: could not recover response '${response.id}': ${(error as Error)?.message ?? error}`);
      });
    }
  }

  private async resume(id: string, canResume: (model: string) => Promise<boolean>): Promise<void> {
    // Read again under the resume lock: another host may have resumed or ended it meanwhile.
    const entry = await this.store.get(id);
    if (!entry?.journal || !UNFINISHED.has(entry.response.status)) return;
    if (entry.journal.owner !== this.owner.name && (await ResponseOwner.alive()).has(entry.journal.owner)) return;
    const sent = await this.store.readEvents(id);
    const store = (ended: ResponseObject) => void this.store.put({ response: ended, inputItems: entry.inputItems, history: [...entry.history, ...itemsToMessages(ended.output, "output")] });
    try {
      checkEventLog(id, sent);
    } catch (error) {
      // A damaged log is refused, never replayed: the response ends with the output its record holds, and says why.
      const { message } = ApiError.from(error);
      return store({ ...interruptedResponse(entry.response, [], "stored_response_corrupt", message), output: entry.response.output });
    }
    const stop = (code: string, message: string) => {
      const ended = interruptedResponse(entry.response, sent, code, message);
      // A background response's log ends with the terminal event (a stream may reattach); a stream's log has no reader left.
      if (entry.response.background) void this.store.appendEvents(id, [{ type: "response.incomplete", sequence_number: nextSequenceAfter(sent), response: structuredCloneLite(ended) }]);
      store(ended);
      if (!entry.response.background) void this.store.dropLog(id);
    };
    if (!entry.response.background) return stop("interrupted", "The stream's worker stopped (its page reloaded or closed) before the response was complete; it ends with the output sent before.");
    let request: ResponsesRequest;
    try {
      request = await this.validate(entry.journal.body, entry.journal.client);
    } catch (error) {
      return stop("resume_impossible", `The response could not resume after its worker stopped: its request no longer validates (${(error as Error).message}).`);
    }
    if (!(await canResume(request.normalized.model).catch(() => false))) {
      return stop("model_not_cached", `The response could not resume after its worker stopped: its model ${request.normalized.model} is not in the cache (resuming never downloads).`);
    }
    // The stored request as it was: its input items keep their ids.
    request.inputItems = entry.inputItems;
    await this.startBackground(request, { base: entry.response, sentBefore: sent, journaled: await this.store.readChunks(id) }).whenDone;
  }

  /** Stores a finished response; `streamed`: only in place of its in-progress entry, so a delete during the stream wins. */
  private save(request: ResponsesRequest, response: ResponseObject, streamed = false): Promise<boolean> {
    if (!request.store) return Promise.resolve(false);
    const entry = this.entry(request, response);
    return streamed ? this.store.replace(entry) : this.store.put(entry);
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

/** Runs `attempt`, again with the oldest turn dropped while `truncation: "auto"` allows it (truncatedOnOverflow). */
async function truncatingRetries<T>(request: ResponsesRequest, attempt: (request: ResponsesRequest) => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt(request);
    } catch (error) {
      const shorter = truncatedOnOverflow(request, error);
      if (!shorter) throw error;
      request = shorter;
    }
  }
}

/**
 * `truncation: "auto"`: when the prompt does not fit the model's window, the
 * oldest turn (everything before the second user message after the system
 * prefix) is dropped and the request runs again; null when it cannot shrink
 * or truncation is off. The stored conversation keeps every turn.
 */
function truncatedOnOverflow(request: ResponsesRequest, error: unknown): ResponsesRequest | null {
  if (request.echo.truncation !== "auto" || !(error instanceof ApiError) || error.code !== "context_length_exceeded") return null;
  const messages = request.normalized.messages;
  let first = 0;
  while (first < messages.length && messages[first].role === "system") first++;
  let next = first + 1;
  while (next < messages.length && messages[next].role !== "user") next++;
  if (next >= messages.length) return null;
  return { ...request, normalized: { ...request.normalized, messages: [...messages.slice(0, first), ...messages.slice(next)] } };
}

/** The pipeline names the chat face's `messages`; here the conversation is `input`. */
function forInput(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.param !== "messages") return error;
  return new ApiError({ status: error.status, type: error.type, code: error.code, param: "input", message: error.message, retryAfterMs: error.retryAfterMs });
}

function rethrowForInput(error: unknown): never {
  throw forInput(error);
}

function notFound(id: string): ApiError {
  return new ApiError({ status: 404, code: "response_not_found", param: "response_id", message: `Response with id '${id}' not found. It was deleted, dropped by the response store's retention (oldest first), stored with \`store: false\`, or kept in another client's memory store.` });
}

function baseResponse(request: ResponsesRequest): ResponseObject {
  const e = request.echo;
  return {
    id: newResponseId(),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    completed_at: null,
    status: "in_progress",
    incomplete_details: null,
    model: e.model,
    previous_response_id: e.previous_response_id,
    instructions: e.instructions,
    output: [],
    error: null,
    tools: e.tools,
    tool_choice: e.tool_choice,
    truncation: e.truncation,
    parallel_tool_calls: e.parallel_tool_calls,
    text: e.text,
    top_p: e.top_p,
    presence_penalty: e.presence_penalty,
    frequency_penalty: e.frequency_penalty,
    top_logprobs: e.top_logprobs,
    temperature: e.temperature,
    reasoning: e.reasoning,
    usage: null,
    max_output_tokens: e.max_output_tokens,
    max_tool_calls: e.max_tool_calls,
    store: e.store,
    background: e.background,
    service_tier: e.service_tier,
    metadata: e.metadata,
    safety_identifier: e.safety_identifier,
    prompt_cache_key: e.prompt_cache_key,
    user: e.user,
  };
}

/** A response whose worker stopped and that could not go on: `incomplete`, with the output its events had sent. */
function interruptedResponse(base: ResponseObject, sent: readonly ResponseStreamEvent[], code: string, message: string): ResponseObject {
  return {
    ...base,
    status: "incomplete",
    completed_at: Math.floor(Date.now() / 1000),
    incomplete_details: { reason: "interrupted" },
    error: { code, message },
    output: outputFromEvents(sent, base.id),
  };
}

function finalResponse(base: ResponseObject, output: ResponseObject["output"], result: GenerationResult): ResponseObject {
  const incomplete = result.finish === "length";
  return {
    ...base,
    completed_at: Math.floor(Date.now() / 1000),
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output,
    usage: responseUsage(result.usage),
    x_webgpu: { ...result.decode, ...(result.continued ? { resumed: result.continued } : {}) },
  };
}
