import { AudioInputError } from "./errors.js";

/** A container split into what WebCodecs' AudioDecoder takes: its config and the codec packets in order. */
export interface CodecStream {
  config: { codec: string; sampleRate: number; numberOfChannels: number; description?: Uint8Array };
  /** `timestamp` in microseconds. */
  packets: Array<{ data: Uint8Array; timestamp: number }>;
}

/** Samples (at 48 kHz) in one Opus packet, from its TOC byte (RFC 6716 §3.1). */
export function opusPacketSamples(packet: Uint8Array): number {
  if (packet.length === 0) return 0;
  const config = packet[0] >> 3;
  const frameMs = config < 12 ? [10, 20, 40, 60][config % 4] : config < 16 ? [10, 20][config % 2] : [2.5, 5, 10, 20][config % 4];
  const code = packet[0] & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : packet.length > 1 ? packet[1] & 0x3f : 0;
  return frameMs * 48 * frames;
}

/**
 * How much compressed audio may be unpacked: a container's packet and frame
 * headers say how long the audio is before anything is decoded, and a small
 * file can claim hours (2-byte Opus packets of 120 ms each: 2.5 MB of Ogg is
 * 28 h, 19 GB of PCM). The split stops, and the request is refused, as soon
 * as the headers add up to more than the model takes or the packets to more
 * than any recording it takes would have.
 */
export interface AudioBudget {
  /** The longest audio accepted, in seconds (the model's limit, plus codec padding). */
  maxSeconds: number;
  /** What the limit is, for the message: e.g. "the model takes at most 30 s". */
  limit: string;
}

/** More packets than this is refused whatever they last (20 minutes of 20 ms Opus packets; mp3 frames last 24 ms or more). */
export const MAX_AUDIO_PACKETS = 60_000;

/** The budget where the model's own limit is not known yet (its manifest not downloaded): 10 minutes. */
export const UNKNOWN_LIMIT_SECONDS = 600;

/** Counts packets and their declared duration as a container is split; throws once over `budget`. */
export class DurationMeter {
  private seconds = 0;
  private packets = 0;

  constructor(
    private readonly budget: AudioBudget,
    private readonly what: string,
  ) {}

  /** One packet of `samples` samples at `sampleRate` Hz, as its header declares. */
  add(samples: number, sampleRate: number): void {
    if (++this.packets > MAX_AUDIO_PACKETS) {
      throw new AudioInputError(`The audio has more than ${MAX_AUDIO_PACKETS} ${this.what} packets; no recording this library takes has that many. Re-encode it, or split it.`, "audio_too_many_packets");
    }
    this.seconds += samples / sampleRate;
    if (this.seconds > this.budget.maxSeconds) {
      throw new AudioInputError(`The audio is too long: its ${this.what} headers add up to more than ${+this.budget.maxSeconds.toFixed(2)} s (counted before decoding); ${this.budget.limit}. Split the recording, or trim it.`, "audio_too_long");
    }
  }
}
