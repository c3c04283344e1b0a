/**
 * A WAV file made in the test (no fixture on disk): 16-bit PCM, a sine tone,
 * the given rate, length and channels. Used by the transcription tests in
 * Node, in Chromium and by the demo test.
 */
export function wavBytes({ sampleRate = 16_000, seconds = 0.5, channels = 1, frequency = 440 }: { sampleRate?: number; seconds?: number; channels?: number; frequency?: number } = {}): Uint8Array {
  const frames = Math.round(sampleRate * seconds);
  const dataBytes = frames * channels * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + dataBytes, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, dataBytes, true);
  for (let frame = 0; frame < frames; frame++) {
    const sample = Math.round(Math.sin((2 * Math.PI * frequency * frame) / sampleRate) * 0.5 * 32767);
    for (let channel = 0; channel < channels; channel++) view.setInt16(44 + (frame * channels + channel) * 2, sample, true);
  }
  return bytes;
}
