/**
 * MPEG audio (mp3) split into frames for WebCodecs: an ID3v2 tag is skipped,
 * frames are found by their headers, and a leading Xing/Info frame (an
 * encoder's metadata, silent) is left out.
 */
import { AudioInputError } from "./errors.js";
import { binaryString } from "../protocol/base64.js";
import { DurationMeter, type AudioBudget, type CodecStream } from "./packets.js";

const BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES = [44_100, 48_000, 32_000];

interface FrameHeader {
  length: number;
  sampleRate: number;
  channels: number;
  samples: number;
  /** Bytes of side information after the header (where a Xing/Info tag starts). */
  sideInfo: number;
}

function header(bytes: Uint8Array, at: number): FrameHeader | null {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1] & 0xe0) !== 0xe0) return null;
  const version = (bytes[at + 1] >> 3) & 3; // 3 = MPEG1, 2 = MPEG2, 0 = MPEG2.5
  const layer = (bytes[at + 1] >> 1) & 3; // 1 = Layer III
  const bitrateIndex = bytes[at + 2] >> 4;
  const rateIndex = (bytes[at + 2] >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const mpeg1 = version === 3;
  const sampleRate = RATES[rateIndex] / (mpeg1 ? 1 : version === 2 ? 2 : 4);
  const bitrate = (mpeg1 ? BITRATES_V1_L3 : BITRATES_V2_L3)[bitrateIndex] * 1000;
  const padding = (bytes[at + 2] >> 1) & 1;
  const channels = bytes[at + 3] >> 6 === 3 ? 1 : 2;
  const length = Math.floor(((mpeg1 ? 144 : 72) * bitrate) / sampleRate) + padding;
  const sideInfo = mpeg1 ? (channels === 1 ? 17 : 32) : channels === 1 ? 9 : 17;
  return { length, sampleRate, channels, samples: mpeg1 ? 1152 : 576, sideInfo };
}

function id3Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return 0;
  const size = ((bytes[6] & 0x7f) << 21) | ((bytes[7] & 0x7f) << 14) | ((bytes[8] & 0x7f) << 7) | (bytes[9] & 0x7f);
  return 10 + size + (bytes[5] & 0x10 ? 10 : 0);
}

/** The frames of `bytes`; stops with a 400-worthy error once their durations pass `budget` (packets.ts). */
export function mp3Stream(bytes: Uint8Array, budget: AudioBudget): CodecStream {
  const meter = new DurationMeter(budget, "mp3 frame");
  let at = id3Length(bytes);
  const packets: CodecStream["packets"] = [];
  let first: FrameHeader | null = null;
  let time = 0;
  while (at + 4 <= bytes.length) {
    const frame = header(bytes, at);
    // Junk between frames (or a trailing tag): resynchronise on the next header that is followed by another.
    if (!frame || at + frame.length > bytes.length) {
      at++;
      continue;
    }
    first ??= frame;
    const tagAt = at + 4 + frame.sideInfo;
    const tag = binaryString(bytes.subarray(tagAt, tagAt + 4));
    if (!(packets.length === 0 && (tag === "Xing" || tag === "Info"))) {
      meter.add(frame.samples, frame.sampleRate);
      packets.push({ data: bytes.subarray(at, at + frame.length), timestamp: Math.round((time * 1e6) / frame.sampleRate) });
      time += frame.samples;
    }
    at += frame.length;
  }
  if (!first || packets.length === 0) throw new AudioInputError("The audio is not an mp3 file (no MPEG Layer III frames found).");
  return { config: { codec: "mp3", sampleRate: first.sampleRate, numberOfChannels: first.channels }, packets };
}
