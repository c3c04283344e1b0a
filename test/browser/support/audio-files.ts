/** Test audio made in the browser: a WebM Opus recording (MediaRecorder) and an Ogg Opus file (WebCodecs AudioEncoder + a minimal Ogg writer). */

/**
 * `ms` of a sine at `hz` recorded by MediaRecorder, as Chrome writes it
 * (audio/webm;codecs=opus). The track is fed by a MediaStreamTrackGenerator
 * in real time: headless Chromium here has no audio device, so an
 * AudioContext never starts.
 */
export async function recordWebmTone(hz: number, ms: number): Promise<Uint8Array> {
  const Generator = (globalThis as unknown as { MediaStreamTrackGenerator: new (init: { kind: "audio" }) => MediaStreamTrack & { writable: WritableStream<AudioData> } }).MediaStreamTrackGenerator;
  const track = new Generator({ kind: "audio" });
  const writer = track.writable.getWriter();
  const recorder = new MediaRecorder(new MediaStream([track]), { mimeType: "audio/webm;codecs=opus" });
  const chunks: Blob[] = [];
  recorder.ondataavailable = (event) => chunks.push(event.data);
  const stopped = new Promise((resolve) => (recorder.onstop = resolve));
  recorder.start();
  const rate = 48_000;
  const step = 480; // 10 ms
  for (let at = 0; at < (rate * ms) / 1000; at += step) {
    const data = new Float32Array(step).map((_, i) => 0.5 * Math.sin((2 * Math.PI * hz * (at + i)) / rate));
    await writer.write(new AudioData({ format: "f32-planar", sampleRate: rate, numberOfFrames: step, numberOfChannels: 1, timestamp: Math.round((at * 1e6) / rate), data }));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  recorder.stop();
  await stopped;
  await writer.close();
  return new Uint8Array(await new Blob(chunks).arrayBuffer());
}

/** `seconds` of a sine at `hz` encoded to Opus by WebCodecs' AudioEncoder and written as an Ogg Opus file (RFC 7845). */
export async function oggOpusTone(hz: number, seconds: number, channels: number): Promise<Uint8Array> {
  const rate = 48_000;
  const frames = Math.round(rate * seconds);
  const planar = new Float32Array(frames * channels);
  for (let c = 0; c < channels; c++) for (let i = 0; i < frames; i++) planar[c * frames + i] = 0.5 * Math.sin((2 * Math.PI * hz * i) / rate);
  const packets: Uint8Array[] = [];
  let failure: Error | null = null;
  const encoder = new AudioEncoder({ output: (chunk) => {
    const data = new Uint8Array(chunk.byteLength);
    chunk.copyTo(data);
    packets.push(data);
  }, error: (e) => (failure = e) });
  encoder.configure({ codec: "opus", sampleRate: rate, numberOfChannels: channels, bitrate: 64_000 });
  encoder.encode(new AudioData({ format: "f32-planar", sampleRate: rate, numberOfFrames: frames, numberOfChannels: channels, timestamp: 0, data: planar }));
  await encoder.flush();
  encoder.close();
  if (failure) throw failure;
  const head = new Uint8Array(19);
  head.set(new TextEncoder().encode("OpusHead"));
  const view = new DataView(head.buffer);
  head[8] = 1;
  head[9] = channels;
  view.setUint16(10, 312, true); // pre-skip
  view.setUint32(12, rate, true);
  const tags = new Uint8Array([...new TextEncoder().encode("OpusTags"), 4, 0, 0, 0, ...new TextEncoder().encode("test"), 0, 0, 0, 0]);
  const pages = [oggPage([head], 0, 0, 2), oggPage([tags], 0, 1, 0)];
  let granule = 0;
  packets.forEach((p, i) => {
    granule += 960;
    pages.push(oggPage([p], granule, i + 2, i === packets.length - 1 ? 4 : 0));
  });
  return new Uint8Array(await new Blob(pages).arrayBuffer());
}

const CRC = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

function oggPage(packets: Uint8Array[], granule: number, sequence: number, flags: number): Uint8Array<ArrayBuffer> {
  const lacing: number[] = [];
  for (const p of packets) {
    for (let n = p.length; ; n -= 255) {
      lacing.push(Math.min(n, 255));
      if (n < 255) break;
    }
  }
  const body = packets.reduce((n, p) => n + p.length, 0);
  const page = new Uint8Array(27 + lacing.length + body);
  const view = new DataView(page.buffer);
  page.set([0x4f, 0x67, 0x67, 0x53, 0, flags]);
  view.setUint32(6, granule % 2 ** 32, true);
  view.setUint32(10, Math.floor(granule / 2 ** 32), true);
  view.setUint32(14, 0x1234, true);
  view.setUint32(18, sequence, true);
  page[26] = lacing.length;
  page.set(lacing, 27);
  let at = 27 + lacing.length;
  for (const p of packets) {
    page.set(p, at);
    at += p.length;
  }
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ CRC[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  view.setUint32(22, crc, true);
  return page;
}
