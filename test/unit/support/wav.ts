/** Test audio: a 16-bit (or 32-bit float) PCM WAV of a sine tone, as bytes or base64. */
export function makeWav({ sampleRate = 16_000, seconds = 1, channels = 1, float = false, frequency = 440 }: { sampleRate?: number; seconds?: number; channels?: number; float?: boolean; frequency?: number } = {}): Uint8Array {
  const frames = Math.round(sampleRate * seconds);
  const bytesPerSample = float ? 4 : 2;
  const dataSize = frames * channels * bytesPerSample;
  const buffer = new ArrayBuffer(44 + dataSize);
  const view = new DataView(buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + dataSize, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, float ? 3 : 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * bytesPerSample, true);
  view.setUint16(32, channels * bytesPerSample, true);
  view.setUint16(34, bytesPerSample * 8, true);
  text(36, "data");
  view.setUint32(40, dataSize, true);
  for (let f = 0; f < frames; f++) {
    const v = 0.5 * Math.sin((2 * Math.PI * frequency * f) / sampleRate);
    for (let c = 0; c < channels; c++) {
      const at = 44 + (f * channels + c) * bytesPerSample;
      if (float) view.setFloat32(at, v, true);
      else view.setInt16(at, Math.round(v * 32767), true);
    }
  }
  return new Uint8Array(buffer);
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const wavBase64 = (options?: Parameters<typeof makeWav>[0]) => toBase64(makeWav(options));
