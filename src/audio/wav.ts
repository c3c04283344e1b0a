/**
 * The header of a RIFF/WAVE file: enough to count its frames without
 * decoding them. WAV goes to web-llm as it is (its `decodeWav` reads PCM
 * integer 8/16/24/32-bit and IEEE float 32/64-bit, plain or
 * WAVE_FORMAT_EXTENSIBLE); the host reads the header to check the model's
 * limits first and refuses what web-llm would refuse, with a clear message.
 */
import { AudioInputError } from "./errors.js";

export interface WavInfo {
  /** 1 = PCM integer, 3 = IEEE float. */
  codec: 1 | 3;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  frames: number;
}

const EXTENSIBLE = 0xfffe;

export function readWavInfo(bytes: Uint8Array): WavInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fourCC = (at: number) => String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
  if (bytes.byteLength < 12 || fourCC(0) !== "RIFF" || fourCC(8) !== "WAVE") throw new AudioInputError("The audio is not a WAV file (no RIFF/WAVE header).");
  let fmt: { codec: number; channels: number; sampleRate: number; blockAlign: number; bits: number } | null = null;
  let dataSize: number | null = null;
  for (let offset = 12; offset + 8 <= view.byteLength; ) {
    const id = fourCC(offset);
    const size = view.getUint32(offset + 4, true);
    const payload = offset + 8;
    if (payload + size > view.byteLength) throw new AudioInputError(`The WAV file is truncated (its ${id.trim()} chunk runs past the end).`);
    if (id === "fmt ") {
      if (size < 16) throw new AudioInputError("The WAV fmt chunk is truncated.");
      let codec = view.getUint16(payload, true);
      const bits = view.getUint16(payload + 14, true);
      if (codec === EXTENSIBLE && size >= 40) codec = view.getUint16(payload + 24, true);
      fmt = { codec, channels: view.getUint16(payload + 2, true), sampleRate: view.getUint32(payload + 4, true), blockAlign: view.getUint16(payload + 12, true), bits };
    } else if (id === "data") {
      dataSize = size;
    }
    offset = payload + size + (size % 2);
  }
  if (!fmt || dataSize === null) throw new AudioInputError("The WAV file has no fmt or no data chunk.");
  const intDepth = fmt.codec === 1 && [8, 16, 24, 32].includes(fmt.bits);
  const floatDepth = fmt.codec === 3 && [32, 64].includes(fmt.bits);
  if (!intDepth && !floatDepth) throw new AudioInputError(`This WAV encoding (codec ${fmt.codec}, ${fmt.bits}-bit) is not supported: send PCM integer (8/16/24/32-bit) or float (32/64-bit) WAV, or another format (mp3, webm, ogg).`);
  if (fmt.channels < 1 || fmt.sampleRate < 1 || fmt.blockAlign !== fmt.channels * (fmt.bits / 8) || dataSize % fmt.blockAlign !== 0) {
    throw new AudioInputError("The WAV header is inconsistent (channels, sample rate or block alignment).");
  }
  return { codec: fmt.codec as 1 | 3, channels: fmt.channels, sampleRate: fmt.sampleRate, bitsPerSample: fmt.bits, frames: dataSize / fmt.blockAlign };
}
