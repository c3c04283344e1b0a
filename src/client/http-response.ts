/**
 * The Responses `client.fetch` answers with, shared by its chat and Responses
 * routes: JSON bodies, and SSE bodies over a Stream that behave as a native
 * fetch body does (abort via the request's signal errors the body with the
 * signal's reason; cancelling the body stops generation).
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";
import { bufferedChunks, type Stream } from "./stream.js";

/** Most SSE text sent in one body chunk when items are waiting. */
const SSE_BATCH_CHARS = 64 * 1024;
const encoder = new TextEncoder();

/** How one route writes its stream as SSE. */
export interface SseFraming<T> {
  /** One item's SSE text (items already waiting are joined and encoded at once). */
  text(item: T): string;
  /** Sent after the last item, before the body closes (chat: `data: [DONE]`). */
  end?: string;
  /** The SSE text for a failure after the body started; the body then closes. */
  error(error: ApiError): string;
}

export function json(value: unknown, requestId: string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...extra },
  });
}

/** A body with `stream: true` asks for SSE. */
export const wantsStream = (body: unknown): boolean => typeof body === "object" && body !== null && (body as { stream?: unknown }).stream === true;

export function sseResponse<T>(stream: Stream<T>, signal: AbortSignal | undefined, requestId: string, framing: SseFraming<T>): Response {
  return new Response(sseBody(stream, signal, framing), {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "x-request-id": requestId },
  });
}

/** What a native fetch rejects with once its signal aborted. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** A path segment decoded; a malformed escape is looked up as written (and then not found), not a 500. */
export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function sseBody<T>(stream: Stream<T>, signal: AbortSignal | undefined, framing: SseFraming<T>): ReadableStream<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]();
  let settled = false;
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
          text += framing.text(result.value);
          // Items already waiting go out in one enqueue: the reader (an SDK parsing SSE) pays one read per batch, not per token.
          if ((stream[bufferedChunks]?.() ?? 0) === 0 || text.length >= SSE_BATCH_CHARS) break;
          result = await iterator.next();
        }
        if (settled) return;
        if (text) controller.enqueue(encoder.encode(text));
        if (result.done) {
          finish();
          // v6 of the OpenAI SDK keeps reading after [DONE] until the body closes: close at once.
          if (framing.end) controller.enqueue(encoder.encode(framing.end));
          controller.close();
        }
      } catch (error) {
        if (settled) return;
        finish();
        if (text) controller.enqueue(encoder.encode(text));
        if (isAbortError(error)) controller.error(error);
        else {
          controller.enqueue(encoder.encode(framing.error(ApiError.from(error))));
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
