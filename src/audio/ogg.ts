/**
 * Ogg Opus (what Firefox's MediaRecorder and many tools write) split into
 * Opus packets: pages are read, lacing joins segments into packets, the
 * first packet (OpusHead) becomes the decoder's description and the second
 * (OpusTags) is skipped.
 */
import { AudioInputError } from "./errors.js";
import { binaryString } from "../protocol/base64.js";
import { DurationMeter, opusPacketSamples, type AudioBudget, type CodecStream } from "./packets.js";

/** The Opus packets of `bytes`; stops with a 400-worthy error once their TOC durations pass `budget` (packets.ts). */
export function oggOpusStream(bytes: Uint8Array, budget: AudioBudget): CodecStream {
  const meter = new DurationMeter(budget, "Opus packet");
  const packets: Uint8Array[] = [];
  let pending: Uint8Array[] = [];
  let serial: number | null = null;
  let at = 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (at + 27 <= bytes.length) {
    if (bytes[at] !== 0x4f || bytes[at + 1] !== 0x67 || bytes[at + 2] !== 0x67 || bytes[at + 3] !== 0x53) {
      if (at === 0) throw new AudioInputError("The audio is not an Ogg file (no OggS page).");
      throw new AudioInputError("The Ogg file is damaged (a page does not start with OggS).");
    }
    const pageSerial = view.getUint32(at + 14, true);
    const segments = bytes[at + 26];
    const table = bytes.subarray(at + 27, at + 27 + segments);
    let body = at + 27 + segments;
    if (body > bytes.length) throw new AudioInputError("The Ogg file is truncated.");
    serial ??= pageSerial;
    for (const lace of table) {
      if (body + lace > bytes.length) throw new AudioInputError("The Ogg file is truncated.");
      // Only the first logical stream (a recording has one).
      if (pageSerial === serial) pending.push(bytes.subarray(body, body + lace));
      body += lace;
      if (lace < 255 && pageSerial === serial) {
        const packet = concat(pending);
        // Packets 0 and 1 are OpusHead and OpusTags; the rest is audio, measured as it is found.
        if (packets.length >= 2) meter.add(opusPacketSamples(packet), 48_000);
        packets.push(packet);
        pending = [];
      }
    }
    at = body;
  }
  const head = packets[0];
  if (!head || binaryString(head.subarray(0, 8)) !== "OpusHead") {
    throw new AudioInputError("This Ogg file does not hold Opus audio (only Opus is decoded here; Vorbis is not). Send WAV, mp3, or Opus in Ogg/WebM.");
  }
  let time = 0;
  const audio = packets.slice(2).map((data) => {
    const packet = { data, timestamp: Math.round((time * 1e6) / 48_000) };
    time += opusPacketSamples(data);
    return packet;
  });
  if (audio.length === 0) throw new AudioInputError("The Ogg Opus file holds no audio packets.");
  return { config: { codec: "opus", sampleRate: 48_000, numberOfChannels: head[9] || 1, description: head }, packets: audio };
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
