/**
 * The Responses routes of `client.fetch` (any base URL):
 *   POST   …/responses                    JSON, or SSE (`event: <type>` + `data: <json>`) when `stream: true`
 *   GET    …/responses/{id}               ?stream=true&starting_after=N: a background response's events as SSE
 *   DELETE …/responses/{id}
 *   POST   …/responses/{id}/cancel
 *   GET    …/responses                    ?limit=&order=&after= (the stored responses; not in the hosted API)
 *   DELETE …/responses                    every stored response (not in the hosted API)
 *   GET    …/responses/{id}/input_items   ?limit=&order=&after=
 *   POST   …/responses/compact            JSON CompactResource (see protocol/responses/compact.ts)
 * An error after a stream started arrives as the `response.failed` event the
 * host sent, then an `error` event, and the body ends.
 */
import { ApiError } from "../protocol/api-error.js";
import type { InputItemListQuery, ResponseCreateParams, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { Client } from "./types.js";
import type { CompactResponseParams } from "../protocol/responses/compact.js";
import { json, safeDecode, sseResponse, wantsStream, type SseFraming } from "./http-response.js";

const eventText = (event: { type: string }): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** Events as `event:` + `data:` frames; a failure is an `error` event numbered after the last event sent. */
function responsesSse(): SseFraming<ResponseStreamEvent> {
  let nextSequence = 0;
  return {
    text(event) {
      nextSequence = event.sequence_number + 1;
      return eventText(event);
    },
    error(e) {
      const event = { type: "error", sequence_number: nextSequence, error: { type: e.type, code: e.code, message: e.message, param: e.param } };
      return eventText(event);
    },
  };
}

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
    if (!wantsStream(body)) return json(await client.responses.create(body as ResponseCreateParams & { stream?: false }, { signal }), requestId);
    const stream = await client.responses.create(body as ResponseCreateParams & { stream: true }, { signal });
    return sseResponse(stream, signal, requestId, responsesSse());
  }
  if (method === "GET" && path.endsWith("/responses")) return json(await client.responses.list(listQuery(url)), requestId);
  if (method === "DELETE" && path.endsWith("/responses")) return json(await client.responses.clear(), requestId);
  const cancel = /\/responses\/([^/]+)\/cancel$/.exec(path);
  if (cancel && method === "POST") return json(await client.responses.cancel(safeDecode(cancel[1])), requestId);
  const items = /\/responses\/([^/]+)\/input_items$/.exec(path);
  if (items && method === "GET") return json(await client.responses.inputItems.list(safeDecode(items[1]), listQuery(url)), requestId);
  const one = /\/responses\/([^/]+)$/.exec(path);
  if (one && one[1] !== "compact") {
    if (method === "GET" && url.searchParams.get("stream") === "true") {
      const stream = await client.responses.retrieve(safeDecode(one[1]), { stream: true, starting_after: startingAfter(url) }, { signal });
      return sseResponse(stream, signal, requestId, responsesSse());
    }
    if (method === "GET") return json(await client.responses.retrieve(safeDecode(one[1])), requestId);
    if (method === "DELETE") return json(await client.responses.delete(safeDecode(one[1])), requestId);
  }
  return null;
}

/**
 * `starting_after` as a query parameter: decimal digits only. `Number()`
 * would take "" for 0 and "0x3", " 4" or "1e1" for numbers; they are a 400
 * naming the parameter. The number itself is checked by the host.
 */
function startingAfter(url: URL): number | undefined {
  const value = url.searchParams.get("starting_after");
  if (value === null) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) {
    throw new ApiError({ status: 400, param: "starting_after", message: `\`starting_after\` must be a sequence number (decimal digits, an integer ≥ 0), not ${JSON.stringify(value)}; leave it out for every event.` });
  }
  return Number(value);
}

/** `limit`, `order`, `after` of a list route (input_items, responses). */
function listQuery(url: URL): InputItemListQuery {
  const query: InputItemListQuery = {};
  const limit = url.searchParams.get("limit");
  // Checked by the host, as for client.responses.inputItems.list.
  if (limit !== null) query.limit = Number(limit);
  const order = url.searchParams.get("order");
  if (order !== null) query.order = order as "asc" | "desc";
  const after = url.searchParams.get("after");
  if (after !== null) query.after = after;
  return query;
}

