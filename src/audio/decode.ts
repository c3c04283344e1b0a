/**
 * Compressed audio → mono PCM with WebCodecs `AudioDecoder` (browsers, in
 * workers too; Node has none). WebCodecs decodes codec packets, not files,
 * so the container is split first (mp3.ts, ogg.ts, webm.ts).
 */
import { AudioInputError } from "./errors.js";
import { mp3Stream } from "./mp3.js";
import { oggOpusStream } from "./ogg.js";
import { webmStream } from "./webm.js";
import type { AudioBudget, CodecStream } from "./packets.js";
import type { AudioFormat } from "../protocol/types.js";

export interface DecodedAudio {
  /** Mono: the channels averaged, as web-llm mixes a multichannel WAV. */
  samples: Float32Array;
  sampleRate: number;
  /** Channels of the source. */
  channels: number;
}

/** The slice of WebCodecs used here (typed locally: not every TypeScript lib has it). */
interface AudioDataLike {
  numberOfFrames: number;
  numberOfChannels: number;
  sampleRate: number;
  copyTo(destination: Float32Array, options: { planeIndex: number; format: "f32-planar" }): void;
  close(): void;
}
interface AudioDecoderLike {
  configure(config: CodecStream["config"]): void;
  decode(chunk: unknown): void;
  flush(): Promise<void>;
  close(): void;
  readonly state: string;
}
interface WebCodecs {
  AudioDecoder: { new (init: { output: (data: AudioDataLike) => void; error: (error: Error) => void }): AudioDecoderLike; isConfigSupported(config: CodecStream["config"]): Promise<{ supported?: boolean }> };
  EncodedAudioChunk: new (init: { type: "key"; timestamp: number; data: Uint8Array }) => unknown;
}

/**
 * Splits, measures, then decodes: the container's headers are read first and
 * audio longer than `budget` is refused before a sample is decoded.
 */
export async function decodeCompressed(bytes: Uint8Array, format: Exclude<AudioFormat, "wav">, budget: AudioBudget): Promise<DecodedAudio> {
  const codecs = globalThis as unknown as Partial<WebCodecs>;
  if (typeof codecs.AudioDecoder !== "function" || typeof codecs.EncodedAudioChunk !== "function") {
    throw new AudioInputError(`Decoding ${format} needs WebCodecs' AudioDecoder, which this runtime lacks (browsers have it, in workers too; Node does not). Send WAV or pcm_f32 samples instead.`, "audio_not_decodable");
  }
  const stream = format === "mp3" ? mp3Stream(bytes, budget) : format === "ogg" ? oggOpusStream(bytes, budget) : webmStream(bytes, budget);
  const support = await codecs.AudioDecoder.isConfigSupported(stream.config).catch(() => ({ supported: false }));
  if (!support.supported) throw new AudioInputError(`This browser cannot decode ${stream.config.codec} audio (AudioDecoder.isConfigSupported said no). Send WAV or pcm_f32 samples instead.`, "audio_not_decodable");
  return runDecoder(codecs as WebCodecs, stream, budget);
}

async function runDecoder(codecs: WebCodecs, stream: CodecStream, budget: AudioBudget): Promise<DecodedAudio> {
  const pieces: Float32Array[] = [];
  let sampleRate = stream.config.sampleRate;
  let failure: Error | null = null;
  let frames = 0;
  const decoder = new codecs.AudioDecoder({
    output: (data) => {
      try {
        sampleRate = data.sampleRate;
        // The headers were measured before decoding; a decoder that yields more than they declared is not trusted further.
        frames += data.numberOfFrames;
        if (frames > budget.maxSeconds * data.sampleRate) {
          failure ??= new AudioInputError(`The audio is too long: it decodes to more than ${+budget.maxSeconds.toFixed(2)} s; ${budget.limit}.`, "audio_too_long");
          return;
        }
        const mono = new Float32Array(data.numberOfFrames);
        const plane = new Float32Array(data.numberOfFrames);
        for (let c = 0; c < data.numberOfChannels; c++) {
          data.copyTo(plane, { planeIndex: c, format: "f32-planar" });
          for (let i = 0; i < plane.length; i++) mono[i] += plane[i] / data.numberOfChannels;
        }
        pieces.push(mono);
      } finally {
        data.close();
      }
    },
    error: (error) => (failure ??= error),
  });
  try {
    decoder.configure(stream.config);
    for (const packet of stream.packets) decoder.decode(new codecs.EncodedAudioChunk({ type: "key", timestamp: packet.timestamp, data: packet.data }));
    await decoder.flush();
  } catch (error) {
    failure ??= error as Error;
  } finally {
    if (decoder.state !== "closed") decoder.close();
  }
  if (failure instanceof AudioInputError) throw failure;
  if (failure) throw new AudioInputError(`The ${stream.config.codec} audio could not be decoded: ${(failure as Error).message}`, "audio_not_decodable");
  const samples = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    samples.set(piece, at);
    at += piece.length;
  }
  if (samples.length === 0) throw new AudioInputError(`The ${stream.config.codec} audio decoded to no samples.`, "audio_not_decodable");
  return { samples, sampleRate, channels: stream.config.numberOfChannels };
}
