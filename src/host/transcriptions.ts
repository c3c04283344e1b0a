/**
 * `audio.transcriptions` on the chat pipeline: there is no speech-to-text
 * engine here, so the chat model that takes audio is asked to transcribe —
 * one user message with the recording as an `input_audio` part and an
 * instruction, greedy unless the request sets a temperature, thinking off.
 * It goes through the host's chat path (validation, input kinds, audio
 * decoding, the one queue, load), and its answer is reshaped into OpenAI's
 * transcription objects and stream events.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ChatCompletion, ChatCompletionChunk, Usage } from "../protocol/types.js";
import type { Transcription, TranscriptionStreamEvent, TranscriptionUsage } from "../protocol/transcription-types.js";
import { validateTranscription, type NormalizedTranscription } from "../protocol/validate-transcription.js";
import type { ChunkSink } from "./pipeline-core.js";

/** The host's chat face, which transcription runs on. */
export interface ChatFace {
  complete(body: unknown, signal: AbortSignal | undefined): Promise<ChatCompletion>;
  stream(body: unknown, sink: ChunkSink, signal: AbortSignal | undefined): Promise<void>;
}

/** Where the recording sits in the chat request built below: errors about it name `file` instead. */
const AUDIO_PART = /messages\[0\]\.content\[0\](?:\.input_audio(?:\.[a-z_]+)?)?/g;

export async function createTranscription(chat: ChatFace, body: unknown, signal?: AbortSignal): Promise<Transcription> {
  const request = validateTranscription(body);
  try {
    const completion = await chat.complete(chatRequest(request, false), signal);
    return { text: (completion.choices[0]?.message.content ?? "").trim(), usage: usageOf(completion.usage) };
  } catch (error) {
    throw asTranscriptionError(error, request.model);
  }
}

/** Resolves once generation has started (errors before that reject); events then go to `sink`. */
export async function streamTranscription(chat: ChatFace, body: unknown, sink: ChunkSink<TranscriptionStreamEvent>, signal?: AbortSignal): Promise<void> {
  const request = validateTranscription(body);
  try {
    await chat.stream(chatRequest(request, true), new TranscriptSink(sink, request.model), signal);
  } catch (error) {
    throw asTranscriptionError(error, request.model);
  }
}

/** The chat request that asks the model for the transcript. */
export function chatRequest(request: NormalizedTranscription, stream: boolean): Record<string, unknown> {
  return {
    model: request.model,
    messages: [
      {
        role: "user",
        content: [
          { type: "input_audio", input_audio: { data: request.audio.data, format: request.audio.format } },
          { type: "text", text: instruction(request) },
        ],
      },
    ],
    temperature: request.temperature,
    // A transcript is what was said: reasoning would only delay it (and Gemma 4 thinks by default).
    reasoning_effort: "none",
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

/** The instruction after the recording: the language when known, the app's prompt as context, and "the transcript only". */
export function instruction(request: Pick<NormalizedTranscription, "language" | "prompt">): string {
  const language = request.language ? ` in ${languageName(request.language)}` : "";
  const lines = [`Transcribe this speech${language} exactly as spoken, word for word. Reply with the transcript only: no introduction, no translation, no notes.`];
  if (request.prompt) lines.push(`The recording follows this text; match its spelling of names and terms:\n${request.prompt}`);
  return lines.join("\n");
}

/** "fr" → "French"; a code Intl does not know stays as sent. */
function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(["en"], { type: "language" }).of(code);
    return name && name.toLowerCase() !== code ? name : code;
  } catch {
    return code;
  }
}

function usageOf(usage: Usage | null | undefined): TranscriptionUsage {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return { type: "tokens", input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/**
 * The chat path's errors in transcription terms: the recording is `file`
 * (not `messages[0].content[0]`), and a model without audio input is a
 * mistake about `model`.
 */
function asTranscriptionError(error: unknown, model: string): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.code === "unsupported_input") {
    return new ApiError({
      status: 400,
      code: "unsupported_input",
      param: "model",
      message: `${model} does not take audio input, so it cannot transcribe. Use a model whose input_modalities (models.list()) include "audio", e.g. gemma-4-E2B-it-q4f16_1-MLC.`,
    });
  }
  if (error.status === 404 && error.param === "model" && /whisper|transcribe/i.test(model)) {
    return new ApiError({
      status: 404,
      code: error.code,
      param: "model",
      message: `${error.message} ${model} is a hosted OpenAI model; here a local chat model that takes audio transcribes, e.g. gemma-4-E2B-it-q4f16_1-MLC.`,
    });
  }
  if (error.param?.startsWith("messages[0].content[0]")) {
    return new ApiError({ status: error.status, code: error.code, type: error.type, param: "file", message: error.message.replace(AUDIO_PART, "file") });
  }
  return error;
}

/** Chat chunks in, transcript events out: content deltas become `transcript.text.delta`, the end one `transcript.text.done`. */
class TranscriptSink implements ChunkSink<ChatCompletionChunk> {
  private readonly text = new TrimmedText();
  private usage: TranscriptionUsage = usageOf(null);

  constructor(
    private readonly out: ChunkSink<TranscriptionStreamEvent>,
    private readonly model: string,
  ) {}

  write(chunks: ChatCompletionChunk[]): void {
    const events: TranscriptionStreamEvent[] = [];
    for (const chunk of chunks) {
      if (chunk.usage) this.usage = usageOf(chunk.usage);
      const content = chunk.choices[0]?.delta.content;
      const delta = content ? this.text.push(content) : "";
      if (delta) events.push({ type: "transcript.text.delta", delta });
    }
    if (events.length > 0) this.out.write(events);
  }

  end(): void {
    this.out.write([{ type: "transcript.text.done", text: this.text.value, usage: this.usage }]);
    this.out.end();
  }

  fail(error: ApiError): void {
    this.out.fail(ApiError.from(asTranscriptionError(error, this.model)));
  }
}

/**
 * Streamed text without the whitespace a model puts around its answer, so
 * that the deltas add up to exactly the `done` text (which is trimmed, as the
 * non-streamed `text` is): leading whitespace is dropped, trailing whitespace
 * is held until more text follows it.
 */
export class TrimmedText {
  value = "";
  private held = "";

  push(delta: string): string {
    let text = this.held + delta;
    if (this.value === "") text = text.trimStart();
    const body = text.trimEnd();
    this.held = text.slice(body.length);
    this.value += body;
    return body;
  }
}
