/**
 * The OpenAI Audio Transcriptions API shapes (`POST /audio/transcriptions`),
 * as served locally: a chat model that takes audio is asked to transcribe
 * (host/transcriptions.ts), so only what such a model can give is offered —
 * the text, token usage, and its stream — and nothing that needs timestamps.
 */

/** What `client.audio.transcriptions.create` takes as `file`: what the OpenAI SDK takes that a browser can read. */
export type TranscriptionFile = Blob | ArrayBuffer | ArrayBufferView | Response;

export interface TranscriptionCreateParams {
  /** The recording: WAV, MP3, WebM or Ogg (Opus, as MediaRecorder writes it). A File's name and type help, the bytes decide. */
  file: TranscriptionFile;
  /** A local chat model that takes audio (its `input_modalities` include "audio"), e.g. `gemma-4-E2B-it-q4f16_1-MLC`. */
  model: string;
  /** ISO-639-1 code of the spoken language (`en`, `fr`): named in the instruction the model gets. */
  language?: string;
  /** Text the recording follows or whose spelling and style it should match (names, terms). */
  prompt?: string;
  /** `json` (default): `{text, usage}`. `text`: the transcript alone. Formats with timestamps are refused (400). */
  response_format?: "json" | "text";
  /** Sampling temperature, 0 to 1; default 0 (greedy, the most likely words). */
  temperature?: number;
  /** Stream `transcript.text.delta` events, then one `transcript.text.done`. */
  stream?: boolean | null;
  /** Accepted only empty (there are no token log probabilities here). */
  include?: string[];
}

/** Token usage of one transcription: the audio and instruction in, the transcript out. */
export interface TranscriptionUsage {
  type: "tokens";
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** The `json` response. */
export interface Transcription {
  text: string;
  usage: TranscriptionUsage;
}

export interface TranscriptionTextDeltaEvent {
  type: "transcript.text.delta";
  delta: string;
}

export interface TranscriptionTextDoneEvent {
  type: "transcript.text.done";
  text: string;
  usage: TranscriptionUsage;
}

export type TranscriptionStreamEvent = TranscriptionTextDeltaEvent | TranscriptionTextDoneEvent;

/**
 * What crosses to the host (and the worker): the params with the file read
 * into bytes. `name` and `type` are the File's, when it had them.
 */
export interface TranscriptionRequestBody extends Omit<TranscriptionCreateParams, "file"> {
  file: { data: Uint8Array; name?: string; type?: string };
}
