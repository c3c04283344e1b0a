/**
 * `POST /audio/transcriptions` parameters checked and normalized, with 400s
 * that name the field. The recording's container is read from its first
 * bytes (an upload's name and MIME type are often missing or generic, e.g.
 * the AI SDK's `audio` blob); the name and type decide only when the bytes do
 * not.
 */
import { ApiError, invalidParam } from "./api-error.js";
import { audioFormatOf } from "./audio-part.js";
import { describe, isAbsent, isObject, optionalBoolean, optionalNumber, optionalString, type Body } from "./params.js";
import type { AudioFormat } from "./types.js";

export interface NormalizedTranscription {
  model: string;
  audio: { data: Uint8Array; format: AudioFormat };
  /** ISO-639-1 code as sent (lower case). */
  language?: string;
  prompt?: string;
  responseFormat: "json" | "text";
  /** 0 (greedy) unless the request says otherwise. */
  temperature: number;
  stream: boolean;
}

/** Why each format OpenAI offers beyond json/text is refused: they all need what a chat model does not give. */
const NEEDS_TIMESTAMPS: Record<string, string> = {
  srt: "SubRip subtitles need a start and end time for each segment",
  vtt: "WebVTT subtitles need a start and end time for each segment",
  verbose_json: "verbose_json carries the duration and timestamped segments and words",
  diarized_json: "diarized_json carries timestamped segments labelled by speaker",
};

/** The longest `prompt` accepted (characters): it is a hint, not a document. */
const MAX_PROMPT_CHARS = 4096;

export function validateTranscription(body: unknown): NormalizedTranscription {
  if (!isObject(body)) throw new ApiError({ status: 400, code: "invalid_type", message: `The request must be an object with \`file\` and \`model\`, got ${describe(body)}.` });
  const model = body.model;
  if (typeof model !== "string" || model === "") {
    throw invalidParam("model", "`model` is required: a local chat model that takes audio, e.g. gemma-4-E2B-it-q4f16_1-MLC (see input_modalities in models.list()).", "missing_required_parameter");
  }
  const responseFormat = validateResponseFormat(body);
  if (!isAbsent(body.timestamp_granularities) && !(Array.isArray(body.timestamp_granularities) && body.timestamp_granularities.length === 0)) {
    throw invalidParam("timestamp_granularities", "`timestamp_granularities` is not available: the local model transcribes by listening and writing, and gives no word or segment timestamps.", "unsupported_parameter");
  }
  if (!isAbsent(body.include) && !(Array.isArray(body.include) && body.include.length === 0)) {
    throw invalidParam("include", "`include` is not available for local transcription (no log probabilities are returned here); leave it out.", "unsupported_parameter");
  }
  const language = optionalString(body, "language");
  if (language !== undefined && !/^[a-z]{2,3}$/i.test(language)) {
    throw invalidParam("language", `\`language\` must be an ISO-639-1 code such as "en" or "fr", got ${JSON.stringify(language)}.`);
  }
  return {
    model,
    audio: validateFile(body.file),
    language: language?.toLowerCase(),
    prompt: optionalString(body, "prompt", MAX_PROMPT_CHARS),
    responseFormat,
    temperature: optionalNumber(body, "temperature", 0, 1) ?? 0,
    stream: optionalBoolean(body, "stream") ?? false,
  };
}

function validateResponseFormat(body: Body): "json" | "text" {
  const format = body.response_format;
  if (isAbsent(format) || format === "json") return "json";
  if (format === "text") return "text";
  if (typeof format === "string" && format in NEEDS_TIMESTAMPS) {
    throw invalidParam(
      "response_format",
      `\`response_format\` "${format}" is not available: ${NEEDS_TIMESTAMPS[format]}, and the local model transcribes by listening and writing the text, with no timestamps. Use "json" or "text".`,
      "unsupported_response_format",
    );
  }
  throw invalidParam("response_format", `\`response_format\` must be "json" or "text", got ${JSON.stringify(format)}.`);
}

function validateFile(file: unknown): NormalizedTranscription["audio"] {
  if (!isObject(file) || !(file.data instanceof Uint8Array)) {
    throw invalidParam("file", "`file` is required: the recording (a File or Blob, as the OpenAI SDK sends it).", "missing_required_parameter");
  }
  const data = file.data;
  if (data.byteLength === 0) throw invalidParam("file", "`file` is empty.", "invalid_audio");
  const name = typeof file.name === "string" ? file.name : "";
  const type = typeof file.type === "string" ? file.type : "";
  const sniffed = sniffContainer(data);
  if (sniffed === "flac" || sniffed === "mp4") {
    throw invalidParam("file", `\`file\` is ${sniffed === "flac" ? "FLAC" : "MP4/M4A"} audio, which is not decoded here. Send WAV, MP3, WebM or Ogg (Opus, as MediaRecorder records it).`, "unsupported_audio_format");
  }
  const format = sniffed ?? audioFormatOf(type) ?? audioFormatOf(extensionOf(name));
  if (!format) {
    const what = [name && `name ${JSON.stringify(name)}`, type && `type ${JSON.stringify(type)}`].filter(Boolean).join(", ");
    throw invalidParam("file", `\`file\` is not audio this library reads${what ? ` (${what})` : ""}: send WAV, MP3, WebM or Ogg (Opus, as MediaRecorder records it).`, "unsupported_audio_format");
  }
  return { data, format };
}

const extensionOf = (name: string) => (name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : "");

const ascii = (bytes: Uint8Array, at: number, text: string) => text.split("").every((c, i) => bytes[at + i] === c.charCodeAt(0));

/** The container named by the file's magic bytes, or undefined when they name none we know. */
export function sniffContainer(bytes: Uint8Array): AudioFormat | "flac" | "mp4" | undefined {
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WAVE")) return "wav";
  if (ascii(bytes, 0, "OggS")) return "ogg";
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return "webm";
  if (ascii(bytes, 0, "ID3") || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && (bytes[1] & 0x06) !== 0)) return "mp3";
  if (ascii(bytes, 0, "fLaC")) return "flac";
  if (ascii(bytes, 4, "ftyp")) return "mp4";
  return undefined;
}
