/**
 * Compressed audio → mono PCM with WebCodecs `AudioDecoder` (browsers, in
 * workers too; Node has none). Containers are split into codec packets here
 * (mp3.ts, ogg.ts, webm.ts) because WebCodecs decodes packets, not files.
 */
import { AudioInputError } from "./errors.js";
import type { AudioFormat } from "../protocol/types.js";

export interface DecodedAudio {
  /** Mono: the channels averaged, as web-llm mixes WAV. */
  samples: Float32Array;
  sampleRate: number;
  /** Channels of the source. */
  channels: number;
}

export async function decodeCompressed(bytes: Uint8Array, format: Exclude<AudioFormat, "wav">): Promise<DecodedAudio> {
  void bytes;
  throw new AudioInputError(`Decoding ${format} audio is not available yet.`, "audio_not_decodable");
}
