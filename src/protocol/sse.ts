/** Server-sent event framing for chat completion streams. */
import type { ApiError } from "./api-error.js";

const encoder = new TextEncoder();

/** One `data:` event as text, so a batch of them can be encoded at once. */
export const sseDataText = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;
export const sseData = (value: unknown): Uint8Array => encoder.encode(sseDataText(value));
export const sseDone = (): Uint8Array => encoder.encode("data: [DONE]\n\n");
export const sseError = (error: ApiError): Uint8Array => encoder.encode(`event: error\ndata: ${JSON.stringify(error.toJSON())}\n\n`);
