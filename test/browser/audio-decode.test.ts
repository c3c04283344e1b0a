/**
 * Audio decoded in the worker, in real Chromium: WAV goes to the engine as it
 * is (measured), mp3 (a committed lame fixture), Opus in WebM (recorded here
 * by MediaRecorder from an OscillatorNode) and Opus in Ogg (encoded here by
 * WebCodecs' AudioEncoder, paged by a small Ogg writer) arrive as mono
 * pcm_f32 at the decoder's rate, with the tone's frequency intact; limits and
 * undecodable input are 400s; pcm_f32 from the page is transferred to the
 * worker, not copied. The engine is a scripted one in an app worker that
 * answers with what reached it (support/audio-echo-worker.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { makeWav, toBase64 } from "../unit/support/wav.js";
const mp3Url = new URL("../fixtures/audio/tone-440hz-1s-44k-mono.mp3", import.meta.url).href;
import { oggOpusTone, recordWebmTone } from "./support/audio-files.js";
import { oggOpusBomb, silentMp3 } from "../support/audio-bombs.js";

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

function echoClient(): Client {
  const worker = new Worker(new URL("./support/audio-echo-worker.ts", import.meta.url), { type: "module" });
  const client = createClient({ worker });
  clients.push(client);
  return client;
}

interface Heard {
  source: string;
  format: string;
  samples: number;
  sampleRate: number;
  channels: number;
  hz?: number;
  rms?: number;
  isFloat32Array?: boolean;
}

async function hear(client: Client, input_audio: Record<string, unknown>, model = "gemma-4-E2B-it-q4f32_1-MLC"): Promise<Heard[]> {
  const completion = await client.chat.completions.create({ model, messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "input_audio", input_audio } as never] }] });
  return JSON.parse(completion.choices[0].message.content!) as Heard[];
}

const base64Of = async (url: string) => toBase64(new Uint8Array(await (await fetch(url)).arrayBuffer()));

describe("audio decoded in the worker", () => {
  it("WAV reaches the engine as WAV, measured from its header", async () => {
    const client = echoClient();
    const [heard] = await hear(client, { data: toBase64(makeWav({ sampleRate: 22_050, seconds: 0.5, channels: 2 })), format: "wav" });
    expect(heard).toEqual({ source: "wav", format: "wav", samples: 11_025, sampleRate: 22_050, channels: 2 });
  });

  it("mp3 (lame, with its Xing frame) decodes to mono pcm_f32: 1 s at 44.1 kHz, 440 Hz", async () => {
    const client = echoClient();
    const [heard] = await hear(client, { data: await base64Of(mp3Url), format: "mp3" });
    expect(heard).toMatchObject({ source: "mp3", format: "pcm_f32", sampleRate: 44_100, channels: 1, isFloat32Array: true });
    // 1 s plus the encoder's delay and padding (lame: 576 + 529 samples, rounded up to whole frames), never less.
    expect(heard.samples).toBeGreaterThanOrEqual(44_100);
    expect(heard.samples).toBeLessThan(44_100 + 3 * 1152);
    expect(heard.hz).toBeGreaterThan(420);
    expect(heard.hz).toBeLessThan(460);
    expect(heard.rms).toBeGreaterThan(0.25);
  });

  it("Opus in WebM, as MediaRecorder records it, decodes to mono pcm_f32 at 48 kHz with the tone intact", async () => {
    const client = echoClient();
    const webm = await recordWebmTone(880, 1_000);
    const [heard] = await hear(client, { data: toBase64(webm), format: "webm" });
    expect(heard).toMatchObject({ source: "webm", format: "pcm_f32", sampleRate: 48_000, isFloat32Array: true });
    expect(heard.samples / 48_000).toBeGreaterThan(0.6);
    expect(heard.samples / 48_000).toBeLessThan(1.6);
    expect(heard.hz).toBeGreaterThan(800);
    expect(heard.hz).toBeLessThan(960);
  });

  it("Opus in Ogg (WebCodecs AudioEncoder, stereo) decodes to mono pcm_f32 at 48 kHz", async () => {
    const client = echoClient();
    const ogg = await oggOpusTone(660, 0.5, 2);
    const [heard] = await hear(client, { data: toBase64(ogg), format: "ogg" });
    expect(heard).toMatchObject({ source: "ogg", format: "pcm_f32", sampleRate: 48_000, channels: 2 });
    expect(heard.samples).toBeGreaterThanOrEqual(24_000);
    expect(heard.samples).toBeLessThan(24_000 + 3 * 960 + 312);
    expect(heard.hz).toBeGreaterThan(620);
    expect(heard.hz).toBeLessThan(700);
  });

  it("decoded audio is held to the model's limits: 400 with them in the message", async () => {
    const client = echoClient();
    const short = await hear(client, { data: toBase64(await oggOpusTone(440, 0.04, 1)), format: "ogg" }, "scripted-voice-MLC").catch((e: unknown) => e);
    expect(short).toMatchObject({ status: 400, code: "audio_too_short", param: "messages[0].content[1]" });
    expect((short as Error).message).toContain("1600..480000 samples at 16000 Hz");
  });

  it("audio that claims more than the model takes is refused from its headers, before the decoder sees it", async () => {
    const client = echoClient();
    // 2.5 MB of 2-byte, 120 ms Opus packets: 28 hours, 19 GB of PCM had it been decoded.
    const started = performance.now();
    const bomb = await hear(client, { data: toBase64(oggOpusBomb()), format: "ogg" }, "scripted-voice-MLC").catch((e: unknown) => e);
    expect(bomb).toMatchObject({ status: 400, code: "audio_too_long", param: "messages[0].content[1]" });
    expect((bomb as Error).message).toMatch(/counted before decoding.*scripted-voice-MLC takes at most 30 s/);
    // Silent mp3 frames: 12 minutes, over the 30 s of the voice model and over the 10 minutes allowed while Gemma 4's own limit is unknown.
    const mp3 = await hear(client, { data: toBase64(silentMp3()), format: "mp3" }, "scripted-voice-MLC").catch((e: unknown) => e);
    expect(mp3).toMatchObject({ status: 400, code: "audio_too_long", message: expect.stringContaining("mp3 frame headers") });
    const unknownLimit = await hear(client, { data: toBase64(silentMp3()), format: "mp3" }).catch((e: unknown) => e);
    expect(unknownLimit).toMatchObject({ status: 400, code: "audio_too_long", message: expect.stringContaining("up to 10 minutes") });
    // Decoding the first of these would take 19 GB; refusing all three (worker start included) takes seconds, with room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(45_000);
    // The worker is unharmed: the next recording decodes.
    const [heard] = await hear(client, { data: toBase64(await oggOpusTone(440, 0.5, 1)), format: "ogg" });
    expect(heard).toMatchObject({ source: "ogg", format: "pcm_f32" });
  });

  it("bytes that are not what the format says are 400 audio_not_decodable or invalid_audio, naming the part", async () => {
    const client = echoClient();
    const notMp3 = await hear(client, { data: toBase64(new TextEncoder().encode("x".repeat(2_000))), format: "mp3" }).catch((e: unknown) => e);
    expect(notMp3).toMatchObject({ status: 400, param: "messages[0].content[1]", message: expect.stringContaining("not an mp3 file") });
    const wavAsWebm = await hear(client, { data: toBase64(makeWav()), format: "webm" }).catch((e: unknown) => e);
    expect(wavAsWebm).toMatchObject({ status: 400, param: "messages[0].content[1]", message: expect.stringContaining("not a WebM file") });
  });

  it("pcm_f32 from the page is transferred to the worker, not copied: the page's array is handed over", async () => {
    const client = echoClient();
    const samples = new Float32Array(16_000).map((_, i) => Math.sin((2 * Math.PI * 500 * i) / 16_000) * 0.5);
    const [heard] = await hear(client, { data: samples, format: "pcm_f32", sample_rate: 16_000 });
    expect(heard).toMatchObject({ source: "pcm_f32", samples: 16_000, sampleRate: 16_000, hz: 500, isFloat32Array: true });
    expect(samples.buffer.byteLength).toBe(0);
    // Sent again, the emptied array is a 400 that says why.
    await expect(hear(client, { data: samples, format: "pcm_f32", sample_rate: 16_000 })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("transferred") });
  });
});
