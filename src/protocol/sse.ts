/** Server-sent event framing for chat completion streams (the Responses stream's is in client/fetch-responses.ts). */
import type { ApiError } from "./api-error.js";

/** One `data:` event as text, so a batch of them can be encoded at once. */
export const sseDataText = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
/** The chat stream's last event. */
export const SSE_DONE = "data: [DONE]\n\n";
/** An error after the stream started: the contract's error body as an `error` event. */
export const sseErrorText = (error: ApiError): string => `event: error\ndata: ${JSON.stringify(error.toJSON())}\n\n`;
