/**
 * Reading a request's body for `client.fetch`, as a native fetch would
 * treat it: a Request whose body was already read is refused before
 * anything else (400 `body_already_read`, where a native fetch throws a
 * TypeError and the handler used to answer 500), and an abort stops the
 * read at once, cancelling a streamed body that stalls, rather than waiting
 * for bytes that may never come.
 */
import { ApiError } from "../protocol/api-error.js";
import { abortReason } from "./http-response.js";

/** A body that can no longer be read: the app read it (or handed it to something that did) before this call. */
export function refuseUsedBody(body: BodyInit | null | undefined, request: Request | null): void {
  const stream = isWebStream(body) ? body : null;
  const used = stream ? stream.locked : body === undefined && request?.bodyUsed === true;
  if (!used) return;
  throw new ApiError({
    status: 400,
    code: "body_already_read",
    message: stream
      ? "The request body stream is already locked or read: pass a stream nothing else reads."
      : "The Request's body has already been read (`bodyUsed` is true): pass a new Request (`request.clone()` before reading it), or the body as `init.body`.",
  });
}

/** The body's text: `init.body` when given, else the Request's. An abort rejects with the signal's reason and cancels the read. */
export async function readBodyText(body: BodyInit | null | undefined, request: Request | null, signal: AbortSignal | undefined): Promise<string> {
  if (typeof body === "string") return body;
  refuseUsedBody(body, request);
  if (body !== undefined && body !== null) return streamText(new Response(body).body, signal);
  if (!request) return "";
  // A Request from another implementation (node-fetch, a test double) may have text() and no web stream.
  if (!isWebStream(request.body)) return request.body === null ? "" : untilAborted(request.text(), signal);
  return streamText(request.body, signal);
}

/** `work`, or the signal's reason as soon as it aborts (for reads that cannot be cancelled, such as formData()). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(abortReason(signal));
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

async function streamText(stream: ReadableStream<Uint8Array> | null, signal: AbortSignal | undefined): Promise<string> {
  if (!stream) return "";
  const reader = stream.getReader();
  // Cancelling ends the pending read(), so a body that stalls is let go rather than waited on.
  const cancel = () => void reader.cancel(signal ? abortReason(signal) : undefined).catch(() => {});
  signal?.addEventListener("abort", cancel, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const { done, value } = await reader.read();
      if (signal?.aborted) throw abortReason(signal);
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}

function isWebStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === "object" && value !== null && typeof (value as ReadableStream).getReader === "function";
}
