/**
 * `POST …/audio/transcriptions` on `client.fetch`: the multipart form the
 * OpenAI SDK (and the AI SDK's @ai-sdk/openai) sends — `file`, `model`,
 * `language`, `prompt`, `response_format`, `temperature`, `stream`, and the
 * `include[]` / `timestamp_granularities[]` arrays — read with the platform's
 * own multipart parser, answered as OpenAI answers:
 *   json (default)  `{text, usage}`
 *   text            the transcript as text/plain
 *   stream: true    SSE `data:` frames, `transcript.text.delta` … then `transcript.text.done`
 */
import { ApiError } from "../protocol/api-error.js";
import type { TranscriptionCreateParams, TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { Client } from "./types.js";
import { json, sseResponse, type SseFraming } from "./http-response.js";
import { MAX_AUDIO_BYTES } from "../protocol/audio-part.js";

/** Room for a form's other fields and boundaries around a file at the limit. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/** Bytes of a body whose size is known without reading it. */
function bodySize(body: BodyInit | null | undefined): number | undefined {
  if (typeof body === "string") return body.length;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return body.byteLength;
  if (body && typeof (body as Blob).size === "number") return (body as Blob).size;
  return undefined;
}

const TRANSCRIPT_SSE: SseFraming<TranscriptionStreamEvent> = {
  text: (event) => `data: ${JSON.stringify(event)}\n\n`,
  error: (e) => `data: ${JSON.stringify({ type: "error", error: { type: e.type, code: e.code, message: e.message, param: e.param } })}\n\n`,
};

export async function transcriptionsRoute(client: Pick<Client, "audio">, readForm: () => Promise<FormData>, signal: AbortSignal | undefined, requestId: string): Promise<Response> {
  const params = paramsOf(await readForm());
  if (params.stream === true) {
    const stream = await client.audio.transcriptions.create({ ...params, stream: true }, { signal });
    return sseResponse(stream, signal, requestId, TRANSCRIPT_SSE);
  }
  const result = await client.audio.transcriptions.create({ ...params, stream: false }, { signal });
  if (typeof result === "string") return new Response(result, { status: 200, headers: { "content-type": "text/plain; charset=utf-8", "x-request-id": requestId } });
  return json(result, requestId);
}

/** The form fields of the transcription endpoints SDKs call (OpenAI's, and the AI SDK's `languages`/`keywords`); any other name is a 400, as the hosted API answers an unrecognized argument. */
const FORM_FIELDS = new Set(["file", "model", "language", "prompt", "response_format", "temperature", "stream", "include", "timestamp_granularities", "chunking_strategy", "known_speaker_names", "known_speaker_references", "languages", "keywords"]);

/** Form fields as the JSON-typed params the client takes; values of the wrong kind are left for the host to refuse by name. */
function paramsOf(form: FormData): TranscriptionCreateParams {
  // Collected in a Map: a field is any name the sender chose (`constructor[]`, `__proto__[]`), never a lookup on Object.prototype.
  const fields = new Map<string, unknown>();
  for (const [key, value] of form.entries()) {
    if (key.endsWith("[]")) {
      const name = key.slice(0, -2);
      const list = fields.get(name);
      fields.set(name, Array.isArray(list) ? [...list, value] : [value]);
    } else {
      fields.set(key, value);
    }
  }
  const unknown = [...fields.keys()].filter((name) => !FORM_FIELDS.has(name));
  if (unknown.length > 0) {
    throw new ApiError({
      status: 400,
      code: "unknown_parameter",
      param: unknown[0],
      message: `Unrecognized form field${unknown.length > 1 ? "s" : ""} ${unknown.map((name) => JSON.stringify(name)).join(", ")}: this endpoint takes ${[...FORM_FIELDS].join(", ")}.`,
    });
  }
  const params: Record<string, unknown> = Object.fromEntries(fields);
  if (typeof params.file === "string") {
    throw new ApiError({ status: 400, code: "invalid_type", param: "file", message: "`file` must be a file part of the form (with a filename), not a text field." });
  }
  if (typeof params.temperature === "string" && params.temperature.trim() !== "") params.temperature = Number(params.temperature);
  if (params.stream === "true" || params.stream === "false") params.stream = params.stream === "true";
  return params as unknown as TranscriptionCreateParams;
}

/** The request body as FormData: as given (FormData), or parsed from a multipart or urlencoded body by the platform. */
export async function formOf(body: BodyInit | null | undefined, contentType: string | null, request: Request | null): Promise<FormData> {
  if (body && typeof (body as FormData).getAll === "function" && typeof (body as FormData).entries === "function") return body as FormData;
  const type = contentType ?? "";
  if (!/^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(type)) {
    throw new ApiError({
      status: 400,
      code: "invalid_content_type",
      message: `POST /audio/transcriptions takes multipart/form-data (a \`file\` and \`model\`, as the OpenAI SDK sends them), got ${type ? JSON.stringify(type) : "no content-type"}.`,
    });
  }
  // The platform's parser reads the whole body: a body whose size is known is measured first.
  const declared = bodySize(body) ?? Number(request?.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > MAX_AUDIO_BYTES + FORM_OVERHEAD_BYTES) {
    throw new ApiError({ status: 413, code: "audio_too_large", param: "file", message: `The form is ${(declared / 1024 / 1024).toFixed(1)} MB; \`file\` may be at most ${MAX_AUDIO_BYTES / 1024 / 1024} MB.` });
  }
  try {
    if (body !== undefined && body !== null) return await new Response(body, { headers: { "content-type": type } }).formData();
    if (request) return await request.formData();
  } catch (error) {
    throw new ApiError({ status: 400, code: "invalid_body", message: `The multipart body could not be read: ${error instanceof Error ? error.message : String(error)}` });
  }
  throw new ApiError({ status: 400, code: "missing_required_parameter", param: "file", message: "The request has no body: send a multipart form with `file` and `model`." });
}
