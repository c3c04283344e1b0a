/**
 * The Responses routes of `client.fetch` (any base URL):
 *   POST   …/responses                    JSON, or SSE (`event: <type>` + `data: <json>`) when `stream: true`
 *   GET    …/responses/{id}
 *   DELETE …/responses/{id}
 *   GET    …/responses/{id}/input_items   ?limit=&order=&after=
 *   POST   …/responses/compact            JSON CompactResource (see protocol/responses/compact.ts)
 * An error after a stream started arrives as the `response.failed` event the
 * host sent, then an `error` event, and the body ends.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import type { InputItemListQuery, ResponseCreateParams, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Client } from "./create-client.js";
import type { CompactResponseParams } from "../protocol/responses/compact.js";
import { bufferedChunks, type Stream } from "./stream.js";

const SSE_BATCH_CHARS = 64 * 1024;
const encoder = new TextEncoder();

const eventText = (event: ResponseStreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** The response for a Responses route, or null when the path is not one. */
export async function responsesRoute(
  client: Pick<Client, "responses">,
  method: string,
  url: URL,
  readBody: () => Promise<unknown>,
  signal: AbortSignal | undefined,
  requestId: string,
): Promise<Response | null> {
  const path = url.pathname.replace(/\/+$/, "");
  if (method === "POST" && path.endsWith("/responses/compact")) return json(await client.responses.compact((await readBody()) as CompactResponseParams, { signal }), requestId);
  if (method === "POST" && path.endsWith("/responses")) {
    const body = await readBody();
    const streaming = typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;
    if (!streaming) return json(await client.responses.create(body as ResponseCreateParams & { stream?: false }, { signal }), requestId);
    const stream = await client.responses.create(body as ResponseCreateParams & { stream: true }, { signal });
    return new Response(sseBody(stream, signal), {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-request-id": requestId },
    });
  }
  const items = /\/responses\/([^/]+)\/input_items$/.exec(path);
  if (items && method === "GET") return json(await client.responses.inputItems.list(decode(items[1]), listQuery(url)), requestId);
  const one = /\/responses\/([^/]+)$/.exec(path);
  if (one && one[1] !== "compact") {
    if (method === "GET") return json(await client.responses.retrieve(decode(one[1])), requestId);
    if (method === "DELETE") return json(await client.responses.delete(decode(one[1])), requestId);
  }
  return null;
}

function listQuery(url: URL): InputItemListQuery {
  const query: InputItemListQuery = {};
  const limit = url.searchParams.get("limit");
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n)) throw new ApiError({ status: 400, param: "limit", message: "`limit` must be an integer between 1 and 100." });
    query.limit = n;
  }
  const order = url.searchParams.get("order");
  if (order !== null) query.order = order as "asc" | "desc";
  const after = url.searchParams.get("after");
  if (after !== null) query.after = after;
  return query;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function json(value: unknown, requestId: string): Response {
  return new Response(JSON.stringify(value), { status: 200, headers: { "content-type": "application/json", "x-request-id": requestId } });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** The event stream as SSE bytes; abort and cancel behave as the chat stream's body. */
function sseBody(stream: Stream<ResponseStreamEvent>, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]();
  let settled = false;
  let nextSequence = 0;
  let onAbort: (() => void) | null = null;
  const finish = () => {
    settled = true;
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (!signal) return;
      onAbort = () => {
        if (settled) return;
        finish();
        stream.controller.abort();
        controller.error(abortReason(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      let text = "";
      try {
        let result = await iterator.next();
        while (!result.done) {
          nextSequence = result.value.sequence_number + 1;
          text += eventText(result.value);
          // Events already waiting go out in one enqueue: the reader pays one read per batch, not per token.
          if ((stream[bufferedChunks]?.() ?? 0) === 0 || text.length >= SSE_BATCH_CHARS) break;
          result = await iterator.next();
        }
        if (settled) return;
        if (text) controller.enqueue(encoder.encode(text));
        if (result.done) {
          finish();
          controller.close();
        }
      } catch (error) {
        if (settled) return;
        finish();
        if (text) controller.enqueue(encoder.encode(text));
        if (isAbortError(error)) controller.error(error);
        else {
          const e = ApiError.from(error);
          const event = { type: "error", sequence_number: nextSequence, error: { type: e.type, code: e.code, message: e.message, param: e.param } };
          controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(event)}\n\n`));
          controller.close();
        }
      }
    },
    async cancel() {
      finish();
      await iterator.return?.();
    },
  });
}
