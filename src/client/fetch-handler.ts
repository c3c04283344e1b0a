/**
 * `client.fetch`: the OpenAI REST API served from the local client, for SDKs
 * that take a custom fetch. Routes by path suffix, so any base URL works:
 *   POST …/chat/completions   JSON, or SSE when `stream: true`
 *   GET  …/models, …/models/{id}
 * Everything else → 404 JSON error. No key is needed; Authorization is ignored.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import { newRequestId } from "../protocol/ids.js";
import { sseData, sseDone, sseError } from "../protocol/sse.js";
import type { Client } from "./create-client.js";
import type { Stream } from "./stream.js";

export function createFetchHandler(client: Client): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async function localFetch(input, init = {}) {
    const requestId = newRequestId();
    const request = input instanceof Request ? input : null;
    const url = new URL(request ? request.url : String(input), "http://localhost/");
    const method = (init.method ?? request?.method ?? "GET").toUpperCase();
    const signal = init.signal ?? request?.signal ?? undefined;
    const path = url.pathname.replace(/\/+$/, "");
    try {
      if (method === "POST" && path.endsWith("/chat/completions")) {
        const body = await readJson(init.body ?? null, request);
        return await chatCompletions(client, body, signal, requestId);
      }
      if (method === "GET" && path.endsWith("/models")) return json(await client.models.list(), requestId);
      const modelMatch = /\/models\/(.+)$/.exec(path);
      if (method === "GET" && modelMatch) return json(await client.models.retrieve(decodeURIComponent(modelMatch[1])), requestId);
      throw new ApiError({ status: 404, code: "unknown_route", message: `No route for ${method} ${url.pathname}. This local server serves POST /chat/completions, GET /models and GET /models/{id}.` });
    } catch (error) {
      if (isAbortError(error)) throw error;
      return errorResponse(ApiError.from(error), requestId);
    }
  };
}

async function readJson(body: BodyInit | null, request: Request | null): Promise<unknown> {
  let text: string;
  if (typeof body === "string") text = body;
  else if (body !== null) text = await new Response(body).text();
  else if (request) text = await request.text();
  else text = "";
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError({ status: 400, code: "invalid_json", message: "The request body is not valid JSON." });
  }
}

async function chatCompletions(client: Client, body: unknown, signal: AbortSignal | undefined, requestId: string): Promise<Response> {
  const streaming = typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;
  if (!streaming) {
    const completion = await client.chat.completions.create(body as never, { signal });
    return json(completion, requestId);
  }
  const stream = (await client.chat.completions.create(body as never, { signal })) as Stream;
  const iterator = stream[Symbol.asyncIterator]();
  const sse = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await iterator.next();
        if (done) {
          controller.enqueue(sseDone());
          controller.close();
        } else controller.enqueue(sseData(value));
      } catch (error) {
        if (isAbortError(error) || signal?.aborted) {
          controller.error(signal?.reason ?? error);
          return;
        }
        controller.enqueue(sseError(ApiError.from(error)));
        controller.close();
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  signal?.addEventListener("abort", () => stream.controller.abort(), { once: true });
  return new Response(sse, {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-request-id": requestId },
  });
}

function json(value: unknown, requestId: string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...extra },
  });
}

function errorResponse(error: ApiError, requestId: string): Response {
  const headers: Record<string, string> = {};
  if (!error.retryable) headers["x-should-retry"] = "false";
  if (error.retryAfterMs !== undefined) headers["retry-after-ms"] = String(error.retryAfterMs);
  return json(error.toJSON(), requestId, error.status, headers);
}
