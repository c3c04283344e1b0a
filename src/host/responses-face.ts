/**
 * The Responses API face of the EngineHost: the same pipeline as chat
 * (validation into a NormalizedRequest, queue, load, family shaping, the
 * shared generation loop, KV-reuse memory), with the Responses output builder
 * in place of the chat ChoiceBuilder, and the in-memory response store.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import { randomId } from "../protocol/ids.js";
import type { NormalizedRequest } from "../protocol/validate.js";
import { itemsToMessages, validateResponsesRequest, type ResponsesRequest } from "../protocol/responses/validate.js";
import { ResponseOutputBuilder, responseUsage, structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { InputItemList, InputItemListQuery, ResponseDeleted, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Family } from "../families/types.js";
import type { GenerationOutput, GenerationResult } from "./generation-output.js";
import type { ChunkSink } from "./engine-host.js";
import { ResponseStore } from "./response-store.js";

/** What the face needs from the EngineHost: a queue slot with the request prepared, and the generation loop. */
export interface Pipeline<P extends { family: Family }> {
  run<T>(request: NormalizedRequest, signal: AbortSignal | undefined, work: (prepared: P, signal: AbortSignal) => Promise<T>): Promise<T>;
  generate(prepared: P, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult>;
}

export const newResponseId = () => `resp_${randomId(32)}`;

export class ResponsesFace<P extends { family: Family }> {
  constructor(
    private readonly pipeline: Pipeline<P>,
    readonly store: ResponseStore,
  ) {}

  async create(body: unknown, signal: AbortSignal | undefined, client?: string): Promise<ResponseObject> {
    const request = validateResponsesRequest(body, this.store);
    request.normalized.client = client;
    if (request.normalized.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createResponse returns one Response; use streamResponse for `stream: true`." });
    }
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
      this.save(request, response);
      return response;
    }).catch(rethrowForInput);
  }

  /**
   * Starts a streamed response. Resolves once generation has started (errors
   * before that reject, as chat's do); from then on events go to `sink`.
   * An error after the start sends `response.failed`, then fails the sink.
   */
  async stream(body: unknown, sink: ChunkSink<ResponseStreamEvent>, signal: AbortSignal | undefined, client?: string): Promise<void> {
    const request = validateResponsesRequest(body, this.store);
    request.normalized.stream = true;
    request.normalized.client = client;
    return truncatingRetries(request, (attempt) => this.streamOnce(attempt, sink, signal));
  }

  private streamOnce(request: ResponsesRequest, sink: ChunkSink<ResponseStreamEvent>, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolveStarted, rejectStarted) => {
      let started = false;
      let builder: ResponseOutputBuilder | null = null;
      let base: ResponseObject | null = null;
      const run = this.pipeline.run(request.normalized, signal, async (prepared, slotSignal) => {
        const b = new ResponseOutputBuilder({ emit: (events) => sink.write(events), summary: request.summary, logprobs: request.logprobs, newCallId: () => prepared.family.newToolCallId() });
        builder = b;
        const snapshot = baseResponse(request);
        base = snapshot;
        const start = () => {
          if (started) return;
          started = true;
          // Stored from its creation, as on the hosted API: retrievable while it streams (the output so far).
          if (request.store) this.store.put({ response: { ...snapshot, output: b.output }, inputItems: request.inputItems, history: request.history });
          b.opening(structuredCloneLite(snapshot));
          resolveStarted();
        };
        const output: GenerationOutput = {
          write(events, logprobs) {
            start();
            b.write(events, logprobs);
          },
          reply: () => b.reply(),
        };
        const result = await this.pipeline.generate(prepared, output, slotSignal);
        start();
        b.finish(result.finish);
        // The delta events already sent share objects with the builder's items: the response gets its own copy.
        const response = finalResponse(snapshot, structuredCloneLite(b.output), result);
        this.save(request, response, true);
        b.terminal(response);
      });
      run.then(
        () => sink.end(),
        (error) => {
          if (!started) rejectStarted(forInput(error));
          else if (isAbortError(error)) {
            // A stream the app stopped is not kept.
            if (base) this.store.delete((base as ResponseObject).id);
            sink.end();
          } else {
            const failure = ApiError.from(forInput(error));
            const b = builder as ResponseOutputBuilder | null;
            if (b && base) {
              const failed: ResponseObject = { ...(base as ResponseObject), status: "failed", output: structuredCloneLite(b.output), error: { code: failure.code ?? "server_error", message: failure.message } };
              this.save(request, failed, true);
              b.terminal(failed);
            }
            sink.fail(failure);
          }
        },
      );
    });
  }

  retrieve(id: string): ResponseObject {
    const entry = this.store.get(id);
    if (!entry) throw notFound(id);
    return structuredCloneLite(entry.response);
  }

  delete(id: string): ResponseDeleted {
    if (!this.store.delete(id)) throw notFound(id);
    return { id, object: "response", deleted: true };
  }

  inputItems(id: string, query: InputItemListQuery = {}): InputItemList {
    const entry = this.store.get(id);
    if (!entry) throw notFound(id);
    const limit = query.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError({ status: 400, param: "limit", message: "`limit` must be an integer between 1 and 100." });
    const order = query.order ?? "desc";
    if (order !== "asc" && order !== "desc") throw new ApiError({ status: 400, param: "order", message: "`order` must be \"asc\" or \"desc\"." });
    let items = order === "asc" ? [...entry.inputItems] : [...entry.inputItems].reverse();
    if (query.after !== undefined) {
      const at = items.findIndex((item) => item.id === query.after);
      if (at < 0) throw new ApiError({ status: 400, param: "after", message: `\`after\` names no input item of response '${id}'.` });
      items = items.slice(at + 1);
    }
    const data = structuredCloneLite(items.slice(0, limit));
    return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: items.length > limit };
  }

  /** Stores a finished response; `streamed`: only in place of its in-progress entry, so a delete during the stream wins. */
  private save(request: ResponsesRequest, response: ResponseObject, streamed = false): void {
    if (!request.store) return;
    const history = [...request.history, ...itemsToMessages(response.output, "output")];
    const entry = { response: structuredCloneLite(response), inputItems: request.inputItems, history };
    if (streamed) this.store.replace(entry);
    else this.store.put(entry);
  }
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
  return new ApiError({ status: 404, code: "response_not_found", param: "response_id", message: `Response with id '${id}' not found. Responses live in this client's memory only, up to responsesStore.maxResponses (least recently used evicted).` });
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

function finalResponse(base: ResponseObject, output: ResponseObject["output"], result: GenerationResult): ResponseObject {
  const incomplete = result.finish === "length";
  return {
    ...base,
    completed_at: Math.floor(Date.now() / 1000),
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output,
    usage: responseUsage(result.usage),
    x_webgpu: { ...result.decode },
  };
}
