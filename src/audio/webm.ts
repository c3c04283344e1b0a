/**
 * WebM (Matroska) audio, as Chrome's MediaRecorder writes it
 * (`audio/webm;codecs=opus`), split into Opus packets. A flat scan of EBML
 * elements: master elements are entered rather than skipped, which also
 * reads the unknown-size Segment and Clusters a live recording has.
 */
import { AudioInputError } from "./errors.js";
import { DurationMeter, opusPacketSamples, type AudioBudget, type CodecStream } from "./packets.js";

const MASTERS = new Set([0x18538067 /* Segment */, 0x1549a966 /* Info */, 0x1654ae6b /* Tracks */, 0xae /* TrackEntry */, 0xe1 /* Audio */, 0x1f43b675 /* Cluster */, 0xa0 /* BlockGroup */]);
const EBML = 0x1a45dfa3;
const TIMECODE_SCALE = 0x2ad7b1;
const TRACK_NUMBER = 0xd7;
const CODEC_ID = 0x86;
const CODEC_PRIVATE = 0x63a2;
const CHANNELS = 0x9f;
const SAMPLING_FREQUENCY = 0xb5;
const CLUSTER_TIMECODE = 0xe7;
const SIMPLE_BLOCK = 0xa3;
const BLOCK = 0xa1;

interface Track {
  number: number;
  codec: string;
  channels: number;
  sampleRate: number;
  codecPrivate?: Uint8Array;
}

/** An EBML variable-length integer at `at`: its value (marker removed unless `keepMarker`) and length; `unknown` for an all-ones size. */
function vint(bytes: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } {
  const first = bytes[at];
  if (first === undefined || first === 0) throw new AudioInputError("The WebM file is damaged (bad element header).");
  const length = Math.clz32(first) - 23;
  if (at + length > bytes.length) throw new AudioInputError("The WebM file is truncated.");
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === (0xff >> length);
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[at + i];
    if (bytes[at + i] !== 0xff) allOnes = false;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

const uint = (data: Uint8Array) => data.reduce((n, b) => n * 256 + b, 0);

/** The Opus packets of `bytes`; stops with a 400-worthy error once their TOC durations pass `budget` (packets.ts). */
export function webmStream(bytes: Uint8Array, budget: AudioBudget): CodecStream {
  const meter = new DurationMeter(budget, "Opus packet");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4 || view.getUint32(0) !== EBML) throw new AudioInputError("The audio is not a WebM file (no EBML header).");
  let scale = 1_000_000;
  let clusterTime = 0;
  const tracks: Track[] = [];
  let track: Partial<Track> | null = null;
  const blocks: Array<{ track: number; time: number; data: Uint8Array }> = [];
  let at = 0;
  while (at < bytes.length) {
    const id = vint(bytes, at, true);
    const size = vint(bytes, at + id.length, false);
    const payload = at + id.length + size.length;
    if (id.value === 0xae) {
      track = { channels: 1 };
      tracks.push(track as Track);
    }
    if (MASTERS.has(id.value)) {
      at = payload;
      continue;
    }
    if (size.unknown) throw new AudioInputError("The WebM file is damaged (an element of unknown size that cannot have one).");
    const end = Math.min(payload + size.value, bytes.length);
    const data = bytes.subarray(payload, end);
    switch (id.value) {
      case TIMECODE_SCALE:
        scale = uint(data);
        break;
      case TRACK_NUMBER:
        if (track) track.number = uint(data);
        break;
      case CODEC_ID:
        // Byte by byte, not spread into fromCharCode: the element's size is the file's to choose.
        if (track) track.codec = Array.from(data, (b) => String.fromCharCode(b)).join("");
        break;
      case CODEC_PRIVATE:
        if (track) track.codecPrivate = data;
        break;
      case CHANNELS:
        if (track) track.channels = uint(data);
        break;
      case SAMPLING_FREQUENCY:
        if (track) track.sampleRate = data.length === 4 ? new DataView(data.buffer, data.byteOffset, 4).getFloat32(0) : new DataView(data.buffer, data.byteOffset, 8).getFloat64(0);
        break;
      case CLUSTER_TIMECODE:
        clusterTime = uint(data);
        break;
      case SIMPLE_BLOCK:
      case BLOCK: {
        const number = vint(data, 0, false);
        const relative = new DataView(data.buffer, data.byteOffset + number.length, 2).getInt16(0);
        const flags = data[number.length + 2];
        if ((flags & 0x06) !== 0) throw new AudioInputError("This WebM file uses laced blocks, which are not read here; record with MediaRecorder or re-encode.");
        const packet = data.subarray(number.length + 3);
        // Measured by the Opus TOC (what the decoder will produce), not the block's timestamp. Blocks of
        // another track count too when the Opus track is not declared yet (Tracks come first in a recording).
        const opus = tracks.find((t) => t.codec === "A_OPUS");
        if (!opus || opus.number === number.value) meter.add(opusPacketSamples(packet), 48_000);
        blocks.push({ track: number.value, time: clusterTime + relative, data: packet });
        break;
      }
    }
    at = end;
  }
  const audio = tracks.find((t) => t.codec === "A_OPUS");
  if (!audio) {
    const codecs = tracks.map((t) => t.codec).filter(Boolean);
    throw new AudioInputError(`This WebM file holds no Opus audio${codecs.length ? ` (it has ${codecs.join(", ")})` : ""}; only Opus is decoded here.`);
  }
  const packets = blocks.filter((b) => b.track === audio.number).map((b) => ({ data: b.data, timestamp: Math.round((b.time * scale) / 1000) }));
  if (packets.length === 0) throw new AudioInputError("The WebM file holds no audio packets.");
  return {
    config: { codec: "opus", sampleRate: audio.sampleRate || 48_000, numberOfChannels: audio.channels || 1, ...(audio.codecPrivate ? { description: audio.codecPrivate } : {}) },
    packets,
  };
}
