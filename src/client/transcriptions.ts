/**
 * `client.audio.transcriptions.create`: reads the app's file into bytes of
 * its own (they move to the worker, not copied) and hands the request to the
 * host, which asks the audio-capable chat model (host/transcriptions.ts).
 */
import { ApiError } from "../protocol/api-error.js";
import { MAX_AUDIO_BYTES } from "../protocol/audio-part.js";
import type { Transcription, TranscriptionCreateParams, TranscriptionRequestBody, TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { Backend } from "./backend.js";
import type { ChunkQueue } from "./chunk-queue.js";
import type { Stream } from "./stream.js";

export interface TranscriptionsApi {
  create(body: TranscriptionCreateParams & { stream: true }, options?: { signal?: AbortSignal | null }): Promise<Stream<TranscriptionStreamEvent>>;
  create(body: TranscriptionCreateParams & { response_format: "text"; stream?: false | null }, options?: { signal?: AbortSignal | null }): Promise<string>;
  create(body: TranscriptionCreateParams & { response_format?: "json"; stream?: false | null }, options?: { signal?: AbortSignal | null }): Promise<Transcription>;
  create(body: TranscriptionCreateParams, options?: { signal?: AbortSignal | null }): Promise<Transcription | string | Stream<TranscriptionStreamEvent>>;
}

type OpenStream = <T>(external: AbortSignal | null | undefined, start: (queue: ChunkQueue<T>, signal: AbortSignal) => Promise<void>) => Promise<Stream<T>>;

export function transcriptionsApi(backend: Backend, openStream: OpenStream): TranscriptionsApi {
  async function create(params: TranscriptionCreateParams, options: { signal?: AbortSignal | null } = {}): Promise<Transcription | string | Stream<TranscriptionStreamEvent>> {
    if (typeof params !== "object" || params === null) throw new ApiError({ status: 400, code: "invalid_type", message: "audio.transcriptions.create takes an object with `file` and `model`." });
    const body: TranscriptionRequestBody = { ...params, file: await readFile(params.file) };
    if (params.stream === true) return openStream<TranscriptionStreamEvent>(options.signal, (queue, signal) => backend.streamTranscription(body, queue, signal));
    const transcription = await backend.createTranscription(body, options.signal ?? new AbortController().signal);
    // As the OpenAI SDK: `text` gives the transcript itself (the host checked the format).
    return params.response_format === "text" ? transcription.text : transcription;
  }
  return { create: create as TranscriptionsApi["create"] };
}

/** 413 for an upload over the audio limit, before its bytes are read or copied. */
function checkSize(bytes: number): void {
  if (bytes > MAX_AUDIO_BYTES) {
    throw new ApiError({ status: 413, code: "audio_too_large", param: "file", message: `\`file\` may be at most ${MAX_AUDIO_BYTES / 1024 / 1024} MB; this one has ${(bytes / 1024 / 1024).toFixed(1)} MB. Split the recording, or compress it (mp3, Opus).` });
  }
}

/**
 * The upload's bytes (a fresh buffer, safe to transfer), name and type; a 400
 * naming `file` for anything else. The size is checked before anything is
 * read: a Blob's `size`, a Response's `content-length`, a stream as it arrives.
 */
export async function readFile(file: unknown): Promise<TranscriptionRequestBody["file"]> {
  if (file === undefined || file === null) throw new ApiError({ status: 400, code: "missing_required_parameter", param: "file", message: "`file` is required: the recording as a File, Blob or bytes." });
  if (file instanceof ArrayBuffer) {
    checkSize(file.byteLength);
    return { data: new Uint8Array(file.slice(0)) };
  }
  if (ArrayBuffer.isView(file)) {
    checkSize(file.byteLength);
    return { data: new Uint8Array(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer) };
  }
  const object = file as { arrayBuffer?: unknown; name?: unknown; type?: unknown; blob?: unknown; size?: unknown; [Symbol.asyncIterator]?: unknown };
  if (typeof object === "object" && typeof object.blob === "function" && typeof object.arrayBuffer === "function" && !("size" in object)) {
    // A fetch Response (the OpenAI SDK takes one): its URL names the file.
    const response = file as Response;
    const declared = Number(response.headers?.get?.("content-length") ?? NaN);
    if (Number.isFinite(declared)) checkSize(declared);
    const blob = await response.blob();
    checkSize(blob.size);
    return { data: new Uint8Array(await blob.arrayBuffer()), name: lastSegment(response.url), type: blob.type || undefined };
  }
  if (typeof object === "object" && typeof object.arrayBuffer === "function") {
    // A Blob or File, from this realm or another.
    if (typeof object.size === "number") checkSize(object.size);
    const data = new Uint8Array(await (file as Blob).arrayBuffer());
    checkSize(data.byteLength);
    return { data, name: typeof object.name === "string" ? object.name : undefined, type: typeof object.type === "string" && object.type ? object.type : undefined };
  }
  if (typeof object === "object" && typeof object[Symbol.asyncIterator] === "function") {
    // A Node stream (fs.createReadStream), as the OpenAI SDK accepts in Node.
    const parts: Uint8Array[] = [];
    let total = 0;
    for await (const part of file as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof part === "string" ? new TextEncoder().encode(part) : part;
      total += bytes.byteLength;
      checkSize(total);
      parts.push(bytes);
    }
    const data = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      data.set(part, at);
      at += part.byteLength;
    }
    const path = (file as { path?: unknown }).path;
    return { data, name: typeof path === "string" ? lastSegment(path) : undefined };
  }
  throw new ApiError({ status: 400, code: "invalid_type", param: "file", message: "`file` must be a File, Blob, Response, ArrayBuffer or typed array holding the recording." });
}

const lastSegment = (path: string) => path.split(/[\\/]/).pop()?.split("?")[0] || undefined;
