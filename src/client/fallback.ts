/**
 * Outgrowing the device: when the local GPU cannot serve a chat completion
 * (no WebGPU, an adapter without what the model needs, a model that does not
 * fit), send it to a remote OpenAI-compatible server instead and hand back the
 * same shapes: a ChatCompletion, or a stream of chunks parsed from its SSE.
 * A request opts out with `provider.allow_fallbacks: false` or
 * `provider.require_local: true`; it then gets the local 503.
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import type { ChatCompletion, ChatCompletionChunk, ErrorBody, ProviderPreferences } from "../protocol/types.js";
import type { Backend } from "./backend.js";
import type { ChunkQueue } from "./chunk-queue.js";
import { decodeSse } from "./sse-decoder.js";
import { fetchBelowInterception, markOwnRequest } from "./real-fetch.js";

export interface FallbackOptions {
  /** The remote API's base URL, e.g. `https://api.example.com/v1` (a hosted API or a vLLM server). */
  baseURL: string;
  /**
   * Sent as `Authorization: Bearer <apiKey>`; when set, it replaces an
   * `Authorization` in `headers`. Anything in a page's code is readable by
   * anyone who opens it: use a key meant to be public, or a proxy of yours.
   */
  apiKey?: string;
  /** The remote model for a request's `model`; default: the same string. */
  model?: string | ((model: string) => string);
  /** Extra headers for every remote request; names compare case-insensitively and replace the defaults (`accept`, `content-type`). */
  headers?: Record<string, string>;
  /**
   * The fetch to reach the remote server with; default: `globalThis.fetch` at
   * call time, or while `interceptFetch` is in force the fetch that was in
   * place before it (so a fallback to the base URL interceptFetch serves
   * reaches the network, not this client again).
   */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** The local 503s that mean "this device cannot serve it", as opposed to "try again". */
const DEVICE_CANNOT_SERVE = new Set(["webgpu_unavailable", "unsupported_device", "model_does_not_fit"]);

/** Whether `error` from the local host should send `body` to the fallback server. */
export function shouldFallBack(error: unknown, body: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 503 || error.code === null || !DEVICE_CANNOT_SERVE.has(error.code)) return false;
  const provider = (body as { provider?: ProviderPreferences | null } | null)?.provider;
  return provider?.allow_fallbacks !== false && provider?.require_local !== true;
}

/** `local` with chat completions that fall back to the remote server when the device cannot serve them. */
export function withFallback(local: Backend, options: FallbackOptions): Backend {
  const remote = remoteChat(options);
  return {
    ...local,
    async createChatCompletion(body, signal) {
      try {
        return await local.createChatCompletion(body, signal);
      } catch (error) {
        if (!shouldFallBack(error, body)) throw error;
        return remote.create(body, signal);
      }
    },
    async streamChatCompletion(body, queue, signal) {
      try {
        return await local.streamChatCompletion(body, queue, signal);
      } catch (error) {
        if (!shouldFallBack(error, body)) throw error;
        return remote.stream(body, queue, signal);
      }
    },
  };
}

function remoteChat(options: FallbackOptions) {
  const url = `${options.baseURL.replace(/\/+$/, "")}/chat/completions`;

  async function post(body: unknown, stream: boolean, signal: AbortSignal): Promise<Response> {
    const request: Record<string, unknown> = { ...(body as Record<string, unknown>), stream };
    if (options.model !== undefined) {
      request.model = typeof options.model === "function" ? options.model(String(request.model)) : options.model;
    }
    // One Headers object: `Authorization` and `authorization` are one header, so apiKey replaces it instead of joining it.
    const headers = new Headers({ "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json" });
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    if (options.apiKey) headers.set("authorization", `Bearer ${options.apiKey}`);
    const fetchImpl = options.fetch ?? fetchBelowInterception();
    let response: Response;
    try {
      response = await fetchImpl(url, markOwnRequest({ method: "POST", headers, body: JSON.stringify(request), signal }));
    } catch (error) {
      if (signal.aborted || isAbortError(error)) throw abortError();
      throw new ApiError({
        status: 502,
        code: "fallback_unreachable",
        message: `This device cannot run the model, and the fallback server ${options.baseURL} could not be reached (${error instanceof Error ? error.message : String(error)}). Check fallback.baseURL and the network.`,
      });
    }
    if (!response.ok) throw await remoteError(response);
    return response;
  }

  return {
    async create(body: unknown, signal: AbortSignal): Promise<ChatCompletion> {
      const response = await post(body, false, signal);
      let reply: unknown;
      try {
        reply = await response.json();
      } catch (error) {
        if (signal.aborted) throw abortError();
        throw badGateway(options.baseURL, `its reply is not JSON (${String(error)})`);
      }
      return checkedReply<ChatCompletion>(reply, options.baseURL, "reply");
    },

    /** Resolves once the remote stream has started; chunks then go to `queue` until it ends. */
    async stream(body: unknown, queue: ChunkQueue, signal: AbortSignal): Promise<void> {
      const response = await post(body, true, signal);
      if (!response.body) throw badGateway(options.baseURL, "its streamed reply has no body");
      void pump(response.body, queue, signal, options.baseURL);
    },
  };
}

/** Remote SSE → chunks in `queue`. An abort ends the queue quietly, as a local abort does. */
async function pump(body: ReadableStream<Uint8Array>, queue: ChunkQueue, signal: AbortSignal, baseURL: string): Promise<void> {
  try {
    for await (const event of decodeSse(body)) {
      if (event.data === "[DONE]") break;
      let payload: unknown;
      try {
        payload = JSON.parse(event.data);
      } catch {
        throw badGateway(baseURL, `its stream sent an event that is not JSON: ${event.data.slice(0, 200)}`);
      }
      const error = (payload as Partial<ErrorBody> | null)?.error;
      if (event.event === "error" || error) throw new ApiError({ status: 500, ...errorFields(error ?? payload) });
      queue.write([checkedReply<ChatCompletionChunk>(payload, baseURL, "stream chunk")]);
    }
    queue.end();
  } catch (error) {
    if (signal.aborted || isAbortError(error)) queue.end();
    else queue.fail(ApiError.from(error));
  }
}

/**
 * A remote completion or chunk as the app may rely on it: an object with a
 * `choices` array. Its `x_webgpu` is dropped: those are this device's figures
 * (and its request id becomes a response header), never a remote server's.
 */
function checkedReply<T>(value: unknown, baseURL: string, what: string): T {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Array.isArray((value as { choices?: unknown }).choices)) {
    throw badGateway(baseURL, `its ${what} is not a chat completion object with a choices array: ${JSON.stringify(value)?.slice(0, 200)}`);
  }
  const { x_webgpu: _ignored, ...rest } = value as Record<string, unknown>;
  return rest as T;
}

/** The remote error with its status and body fields, so callers see what the server said. */
async function remoteError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the text itself is the message
  }
  const fields = errorFields((parsed as Partial<ErrorBody> | null)?.error ?? { message: text || response.statusText });
  return new ApiError({ status: response.status, ...fields, retryAfterMs: retryAfterMs(response.headers) });
}

function errorFields(value: unknown): { message: string; type?: string; code?: string | null; param?: string | null } {
  const error = (typeof value === "object" && value !== null ? value : { message: String(value) }) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? null : String(v));
  return {
    message: text(error.message) ?? "The fallback server reported an error without a message.",
    type: text(error.type) ?? undefined,
    code: text(error.code),
    param: text(error.param),
  };
}

function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.has("retry-after-ms") && Number.isFinite(ms)) return ms;
  const seconds = Number(headers.get("retry-after"));
  if (headers.has("retry-after") && Number.isFinite(seconds)) return seconds * 1000;
  return undefined;
}

function badGateway(baseURL: string, what: string): ApiError {
  return new ApiError({ status: 502, code: "fallback_bad_response", message: `The fallback server ${baseURL} answered, but ${what}.` });
}
