/**
 * `truncation: "auto"` for the Responses API: a request whose prompt does not
 * fit the model's window runs again with its oldest turn dropped. Pure
 * protocol: it reshapes the validated request and leaves running it to the
 * caller (the host's Responses run, host/responses-run.ts).
 */
import { ApiError } from "../api-error.js";
import type { ResponsesRequest } from "./validate.js";

/** Runs `attempt`, again with the oldest turn dropped while `truncation: "auto"` allows it (truncatedOnOverflow). */
export async function truncatingRetries<T>(request: ResponsesRequest, attempt: (request: ResponsesRequest) => Promise<T>): Promise<T> {
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
