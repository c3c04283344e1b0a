/**
 * `client.fetch`: the OpenAI REST API served from the local client, for SDKs
 * that take a custom fetch. Routes by path suffix, so any base URL works:
 *   POST …/chat/completions   JSON, or SSE when `stream: true`
 *   POST …/responses, GET|DELETE …/responses/{id}, GET …/responses/{id}/input_items, POST …/responses/compact   (fetch-responses.ts)
 *   POST …/completions        JSON, or SSE when `stream: true` (raw prompt, no chat template)
 *   POST …/embeddings         JSON
 *   POST …/audio/transcriptions   multipart form in; JSON, text or SSE out (fetch-transcriptions.ts)
 *   GET  …/models, …/models/{id}
 * Everything else → 404 JSON error. No key is needed; Authorization is ignored.
 *
 * It behaves like a native fetch where SDKs depend on it: an aborted signal
 * rejects the call (or errors the body once streaming) with the signal's
 * reason, and cancelling the body stops generation.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import { newRequestId } from "../protocol/ids.js";
import { SSE_DONE, sseDataText, sseErrorText } from "../protocol/sse.js";
import type { ChatCompletionChunk, ChatCompletionCreateParams } from "../protocol/types.js";
import type { Client } from "./types.js";
import type { EmbeddingCreateParams } from "../protocol/embeddings-types.js";
import type { CompletionChunk, CompletionCreateParams } from "../protocol/completions-types.js";
import { abortReason, json, safeDecode, sseResponse, wantsStream, type SseFraming } from "./http-response.js";
import { responsesRoute } from "./fetch-responses.js";
import { formOf, transcriptionsRoute } from "./fetch-transcriptions.js";
import { readBodyText, refuseUsedBody, untilAborted } from "./request-body.js";

/** The fetch signature SDKs call: `(url | Request | URL, init?) => Promise<Response>`. */
export type FetchFunction = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** 503 codes no retry can fix: the device stays what it is. Others (device lost, worker lost) recover on the next request. */
const PERMANENT_503 = new Set(["webgpu_unavailable", "unsupported_device", "model_does_not_fit", "provider_requirements_unmet"]);

const CHAT_SSE: SseFraming<ChatCompletionChunk> = { text: sseDataText, end: SSE_DONE, error: sseErrorText };
const COMPLETION_SSE: SseFraming<CompletionChunk> = { text: sseDataText, end: SSE_DONE, error: sseErrorText };

interface LocalRequest {
  method: string;
  url: URL;
  signal: AbortSignal | undefined;
  readBody(): Promise<string>;
  readForm(): Promise<FormData>;
}

/** Builds `client.fetch` over a client's JS API. */
export function createFetchHandler(client: Pick<Client, "chat" | "models"> & Partial<Pick<Client, "responses" | "embeddings" | "audio" | "completions">>): FetchFunction {
  return async function localFetch(input, init) {
    const request = describeRequest(input, init);
    const { signal } = request;
    if (signal?.aborted) throw abortReason(signal);
    const requestId = newRequestId();
    const path = request.url.pathname.replace(/\/+$/, "");
    try {
      if (request.method === "POST" && path.endsWith("/chat/completions")) {
        return await chatCompletions(client, parseJson(await request.readBody()), signal, requestId);
      }
      // After chat: "/chat/completions" ends with "/completions" too.
      if (request.method === "POST" && path.endsWith("/completions") && client.completions) {
        return await completions(client as Pick<Client, "completions">, parseJson(await request.readBody()), signal, requestId);
      }
      if (client.responses && path.includes("/responses")) {
        const routed = await responsesRoute(client as Pick<Client, "responses">, request.method, request.url, async () => parseJson(await request.readBody()), signal, requestId);
        if (routed) return routed;
      }
      if (request.method === "POST" && path.endsWith("/audio/transcriptions") && client.audio) {
        return await transcriptionsRoute(client as Pick<Client, "audio">, () => request.readForm(), signal, requestId);
      }
      if (request.method === "POST" && path.endsWith("/embeddings") && client.embeddings) {
        return json(await client.embeddings.create(parseJson(await request.readBody()) as EmbeddingCreateParams, { signal }), requestId);
      }
      if (request.method === "GET" && path.endsWith("/models")) return json(await client.models.list(), requestId);
      const modelMatch = /\/models\/([^/]+(?:\/[^/]+)?)$/.exec(path);
      if (request.method === "GET" && modelMatch) return json(await client.models.retrieve(safeDecode(modelMatch[1])), requestId);
      throw new ApiError({
        status: 404,
        code: "unknown_route",
        message: `No route for ${request.method} ${request.url.pathname}. This local server serves POST {baseURL}/chat/completions, POST {baseURL}/responses, GET|DELETE {baseURL}/responses/{id}, GET {baseURL}/responses/{id}/input_items, POST {baseURL}/responses/compact, POST {baseURL}/completions, POST {baseURL}/embeddings, POST {baseURL}/audio/transcriptions, GET {baseURL}/models and GET {baseURL}/models/{id}.`,
      });
    } catch (error) {
      // A native fetch rejects with the signal's reason once aborted, whatever failed inside.
      if (signal?.aborted) throw abortReason(signal);
      if (isAbortError(error)) throw error;
      return errorResponse(ApiError.from(error), requestId);
    }
  };
}

/** Method, URL, signal and body from any of the forms fetch accepts; `init` wins over a Request's own fields. */
function describeRequest(input: RequestInfo | URL, init: RequestInit | undefined): LocalRequest {
  // Duck-typed, so Requests from another realm or a polyfill (node-fetch, undici) work too.
  const source = typeof input === "object" && !(input instanceof URL) && typeof (input as Request).url === "string" ? (input as Request) : null;
  const href = source ? source.url : input instanceof URL ? input.href : String(input);
  const base = (globalThis as { location?: { href?: string } }).location?.href ?? "http://localhost/";
  const signal = init?.signal ?? source?.signal ?? undefined;
  return {
    method: (init?.method ?? source?.method ?? "GET").toUpperCase(),
    url: new URL(href, base),
    signal,
    readBody: () => readBodyText(init?.body, source, signal),
    async readForm() {
      refuseUsedBody(init?.body, source);
      const headers = new Headers(init?.headers ?? source?.headers);
      return untilAborted(formOf(init?.body, headers.get("content-type"), source), signal);
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError({ status: 400, code: "invalid_json", message: "The request body is not valid JSON. Send the chat completion parameters as a JSON object." });
  }
}

async function chatCompletions(client: Pick<Client, "chat">, body: unknown, signal: AbortSignal | undefined, requestId: string): Promise<Response> {
  if (!wantsStream(body)) {
    const completion = await client.chat.completions.create(body as ChatCompletionCreateParams & { stream?: false }, { signal });
    return json(completion, completion.x_webgpu?.request_id ?? requestId);
  }
  const stream = await client.chat.completions.create(body as ChatCompletionCreateParams & { stream: true }, { signal });
  return sseResponse(stream, signal, requestId, CHAT_SSE);
}

async function completions(client: Pick<Client, "completions">, body: unknown, signal: AbortSignal | undefined, requestId: string): Promise<Response> {
  if (!wantsStream(body)) {
    const completion = await client.completions.create(body as CompletionCreateParams & { stream?: false }, { signal });
    return json(completion, completion.x_webgpu?.request_id ?? requestId);
  }
  const stream = await client.completions.create(body as CompletionCreateParams & { stream: true }, { signal });
  return sseResponse(stream, signal, requestId, COMPLETION_SSE);
}

/** The contract's status and body, with the retry hints SDKs read (`x-should-retry`, `retry-after-ms`). */
function errorResponse(error: ApiError, requestId: string): Response {
  const headers: Record<string, string> = {};
  const permanent = !error.retryable || (error.status === 503 && error.code !== null && PERMANENT_503.has(error.code));
  if (permanent) headers["x-should-retry"] = "false";
  if (error.retryAfterMs !== undefined) headers["retry-after-ms"] = String(Math.max(0, Math.round(error.retryAfterMs)));
  return json(error.toJSON(), requestId, error.status, headers);
}
