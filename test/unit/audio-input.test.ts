/**
 * Speech and pictures in, through createClient and the scripted engine: which
 * model takes what (input_modalities), the 400s that name the part and the
 * model before anything loads, and what reaches the engine (WAV as sent with
 * its measured length, pcm_f32 as given, images as data URLs). Decoding mp3
 * and Opus needs WebCodecs: that runs in real Chromium
 * (test/browser/audio-decode.test.ts); here Node has no AudioDecoder.
 */
import { describe, expect, it } from "vitest";
import { createClient, type EngineAudioPart, type EngineRequest } from "../../src/index.js";
import { createScriptedEngine, scriptedVoiceModel } from "../../src/testing.js";
import { makeWav, toBase64, wavBase64 } from "./support/wav.js";

const GEMMA4 = "gemma-4-E2B-it-q4f32_1-MLC";
const TEXT_ONLY = "Qwen3-0.6B-q4f32_1-MLC";
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

function engineClient(reply = "ok") {
  const engine = createScriptedEngine({ replies: () => reply });
  return { engine, client: createClient({ engine, worker: false }) };
}

/** A client whose only model is the scripted voice record (16 kHz, 0.1 s to 30 s). */
function voiceClient(reply = "I heard you.") {
  return createClient({ worker: false, models: [scriptedVoiceModel({ replies: [reply] })] });
}

const audioParts = (request: EngineRequest) =>
  request.messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content.filter((p): p is EngineAudioPart => p.type === "input_audio")));

describe("which model takes what", () => {
  it("models.list and retrieve show input_modalities: Gemma 4 takes images and audio, Phi-3.5-vision images, Qwen3 text", async () => {
    const { client } = engineClient();
    const list = await client.models.list();
    const byId = new Map(list.data.map((m) => [m.id, m]));
    expect(byId.get(GEMMA4)).toMatchObject({ input_modalities: ["text", "image", "audio"], capabilities: { vision: true, audio: true } });
    expect(byId.get("gemma-4-E2B-it-q4f16_1-MLC")?.input_modalities).toEqual(["text", "image", "audio"]);
    expect(byId.get("Phi-3.5-vision-instruct-q4f32_1-MLC")).toMatchObject({ input_modalities: ["text", "image"], capabilities: { vision: true, audio: false } });
    expect(byId.get(TEXT_ONLY)).toMatchObject({ input_modalities: ["text"], capabilities: { vision: false, audio: false } });
    expect((await client.models.retrieve("gemma-4-E2B-it")).input_modalities).toEqual(["text", "image", "audio"]);
  });

  it("an audio part on a text-only model is 400 naming messages[i].content[j] and the model, before the engine sees anything", async () => {
    const { engine, client } = engineClient();
    const body = { model: TEXT_ONLY, messages: [{ role: "system" as const, content: "be brief" }, { role: "user" as const, content: [{ type: "text" as const, text: "what is said?" }, { type: "input_audio" as const, input_audio: { data: wavBase64(), format: "wav" as const } }] }] };
    const error = await client.chat.completions.create(body).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_input", param: "messages[1].content[1]" });
    expect((error as Error).message).toContain(TEXT_ONLY);
    expect((error as Error).message).toMatch(/audio part.*takes text only/);
    expect(engine.requests).toHaveLength(0);
    expect(engine.loads).toHaveLength(0);
  });

  it("an image on a text-only model is 400 naming the part", async () => {
    const { engine, client } = engineClient();
    const error = await client.chat.completions.create({ model: TEXT_ONLY, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: PIXEL } }, { type: "text", text: "what?" }] }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_input", param: "messages[0].content[0]" });
    expect((error as Error).message).toMatch(/image part.*Qwen3-0\.6B-q4f32_1-MLC takes text only/);
    expect(engine.loads).toHaveLength(0);
  });

  it("audio on the image-only Phi-3.5-vision is refused; its images pass", async () => {
    const { client } = engineClient();
    const vision = "Phi-3.5-vision-instruct-q4f32_1-MLC";
    await expect(client.chat.completions.create({ model: vision, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: wavBase64(), format: "wav" } }] }] })).rejects.toMatchObject({ status: 400, param: "messages[0].content[0]", message: expect.stringContaining("takes text and image only") });
    await expect(client.chat.completions.create({ model: vision, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: PIXEL } }] }] })).resolves.toBeTruthy();
  });
});

describe("what reaches the engine", () => {
  it("Gemma 4 takes an image and a WAV: the WAV goes as sent (base64) with its length and rate measured from the header", async () => {
    const { engine, client } = engineClient("A tone and a pixel.");
    const wav = wavBase64({ sampleRate: 44_100, seconds: 0.5, channels: 2 });
    const completion = await client.chat.completions.create({
      model: GEMMA4,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: PIXEL } }, { type: "input_audio", input_audio: { data: wav, format: "wav" } }, { type: "text", text: "what is this?" }] }],
    });
    expect(completion.choices[0].message.content).toBe("A tone and a pixel.");
    const parts = engine.requests[0].messages.at(-1)!.content;
    expect(Array.isArray(parts) && parts.map((p) => p.type)).toEqual(["image_url", "input_audio", "text"]);
    const [audio] = audioParts(engine.requests[0]);
    expect(audio.input_audio).toEqual({ data: wav, format: "wav" });
    expect(audio.audio).toEqual({ source: "wav", samples: 22_050, sampleRate: 44_100, channels: 2 });
    expect((parts as Array<{ type: string; image_url?: { url: string } }>)[0].image_url?.url).toBe(PIXEL);
  });

  it("a WAV data URL and WAV bytes (JS callers) arrive as base64 WAV", async () => {
    const { engine, client } = engineClient();
    const bytes = makeWav({ seconds: 0.25 });
    await client.chat.completions.create({ model: GEMMA4, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: `data:audio/wav;base64,${toBase64(bytes)}`, format: "wav" } }] }] });
    await client.chat.completions.create({ model: GEMMA4, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: bytes, format: "wav" } }] }] });
    for (const request of engine.requests) {
      const [audio] = audioParts(request);
      expect(audio.input_audio).toEqual({ data: toBase64(bytes), format: "wav" });
      expect(audio.audio).toMatchObject({ samples: 4_000, sampleRate: 16_000 });
    }
  });

  it("pcm_f32 from a JS caller reaches the engine as the same samples and rate", async () => {
    const { engine, client } = engineClient();
    const samples = new Float32Array(24_000).map((_, i) => Math.sin(i / 10));
    await client.chat.completions.create({ model: GEMMA4, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: samples, format: "pcm_f32", sample_rate: 48_000 } }] }] });
    const [audio] = audioParts(engine.requests[0]);
    expect(audio.input_audio).toMatchObject({ format: "pcm_f32", sample_rate: 48_000 });
    expect(audio.input_audio.data).toStrictEqual(samples);
    expect(audio.audio).toEqual({ source: "pcm_f32", samples: 24_000, sampleRate: 48_000, channels: 1 });
  });

  it("the scripted voice record takes audio and images, with no engine given", async () => {
    const client = voiceClient("You said hello.");
    expect((await client.models.retrieve("scripted-voice-MLC")).input_modalities).toEqual(["text", "image", "audio"]);
    const completion = await client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: wavBase64({ seconds: 1 }), format: "wav" } }] }] });
    expect(completion.choices[0].message.content).toBe("You said hello.");
  });
});

describe("audio the model cannot take: 400 with the limits", () => {
  it("too short and too long, counted at the processor's rate (a 48 kHz file is resampled to 16 kHz first)", async () => {
    const client = voiceClient();
    const send = (data: string) => client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "input_audio", input_audio: { data, format: "wav" } }] }] });
    const short = await send(wavBase64({ sampleRate: 48_000, seconds: 0.05 })).catch((e: unknown) => e);
    expect(short).toMatchObject({ status: 400, code: "audio_too_short", param: "messages[0].content[1]" });
    expect((short as Error).message).toContain("0.05 s (800 samples at 16000 Hz)");
    expect((short as Error).message).toContain("0.1 s to 30 s (1600..480000 samples at 16000 Hz)");
    const long = await send(wavBase64({ sampleRate: 8_000, seconds: 31 })).catch((e: unknown) => e);
    expect(long).toMatchObject({ status: 400, code: "audio_too_long", param: "messages[0].content[1]" });
    expect((long as Error).message).toContain("scripted-voice-MLC takes 0.1 s to 30 s");
    await expect(send(wavBase64({ sampleRate: 48_000, seconds: 30 }))).resolves.toBeTruthy();
  });

  it("pcm_f32 too long for the processor is refused the same way", async () => {
    const client = voiceClient();
    const data = new Float32Array(16_000 * 31);
    await expect(client.chat.completions.create({ model: "scripted-voice-MLC", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data, format: "pcm_f32", sample_rate: 16_000 } }] }] })).rejects.toMatchObject({ status: 400, code: "audio_too_long" });
  });

  it.each([
    ["not base64", { data: "@@@not base64@@@", format: "wav" }, "messages[0].content[0].input_audio.data", /not valid base64/],
    ["a URL", { data: "https://example.com/a.wav", format: "wav" }, "messages[0].content[0].input_audio.data", /never fetched/],
    ["an unknown format", { data: "AAAA", format: "flac" }, "messages[0].content[0].input_audio.format", /"wav", "mp3", "webm" or "ogg"/],
    ["pcm_f32 without a Float32Array", { data: [0, 0.1], format: "pcm_f32", sample_rate: 16_000 }, "messages[0].content[0].input_audio.data", /Float32Array/],
    ["pcm_f32 without a sample rate", { data: new Float32Array(10), format: "pcm_f32" }, "messages[0].content[0].input_audio.sample_rate", /sample_rate/],
    ["a WAV that is not one", { data: toBase64(new TextEncoder().encode("hello, not a riff file")), format: "wav" }, "messages[0].content[0]", /not a WAV file/],
    ["a truncated WAV", { data: toBase64(makeWav({ seconds: 0.5 }).subarray(0, 400)), format: "wav" }, "messages[0].content[0]", /truncated/],
  ])("%s is 400 naming the field", async (_, input_audio, param, message) => {
    const { engine, client } = engineClient();
    const error = await client.chat.completions.create({ model: GEMMA4, messages: [{ role: "user", content: [{ type: "input_audio", input_audio } as never] }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, param });
    expect((error as Error).message).toMatch(message);
    expect(engine.requests).toHaveLength(0);
  });

  it("mp3 where there is no WebCodecs AudioDecoder (Node) is 400 saying what to send instead", async () => {
    const { engine, client } = engineClient();
    const error = await client.chat.completions.create({ model: GEMMA4, messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "SUQzBAAAAAAAI1RTU0UAAAAPAAADTGF2ZjU4Ljc2LjEwMAAAAAAAAAAAAAAA", format: "mp3" } }] }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "audio_not_decodable", param: "messages[0].content[0]" });
    expect((error as Error).message).toMatch(/AudioDecoder/);
    expect(engine.requests).toHaveLength(0);
  });
});

describe("Responses input_audio", () => {
  it("reaches the engine from a Responses input message", async () => {
    const { engine, client } = engineClient("heard");
    const wav = wavBase64({ seconds: 0.5 });
    const response = await client.responses.create({ model: GEMMA4, input: [{ role: "user", content: [{ type: "input_text", text: "transcribe" }, { type: "input_audio", input_audio: { data: wav, format: "wav" } } as never] }] });
    expect(response.output_text).toBe("heard");
    const [audio] = audioParts(engine.requests[0]);
    expect(audio.audio).toMatchObject({ source: "wav", samples: 8_000, sampleRate: 16_000 });
  });

  it("on a text model is 400 naming input[i].content[j]", async () => {
    const { client } = engineClient();
    const error = await client.responses.create({ model: TEXT_ONLY, input: [{ role: "user", content: [{ type: "input_text", text: "x" }, { type: "input_audio", input_audio: { data: wavBase64(), format: "wav" } } as never] }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_input", param: "input[0].content[1]" });
  });

  it("Gemma 4 takes input_image in Responses", async () => {
    const { engine, client } = engineClient("a pixel");
    await client.responses.create({ model: GEMMA4, input: [{ role: "user", content: [{ type: "input_text", text: "what?" }, { type: "input_image", image_url: PIXEL, detail: "auto" }] }] });
    const parts = engine.requests[0].messages.at(-1)!.content;
    expect(Array.isArray(parts) && parts.some((p) => p.type === "image_url")).toBe(true);
  });
});
