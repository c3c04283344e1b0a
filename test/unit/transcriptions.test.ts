/**
 * client.audio.transcriptions through createClient + the scripted engine: the
 * audio model is asked to transcribe on the chat pipeline (same queue), and
 * its reply comes back in OpenAI's transcription shapes.
 */
import { describe, expect, it } from "vitest";
import type { ApiError } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";
import { wavBytes } from "../support/wav.js";

const GEMMA = "gemma-4-E2B-it-q4f16_1-MLC";
const wav = wavBytes({ sampleRate: 16_000, seconds: 0.5 });
const file = () => new File([wav as BlobPart], "hello.wav", { type: "audio/wav" });

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("expected a rejection");
}

describe("audio.transcriptions.create", () => {
  it("asks the audio model to transcribe, greedy and without thinking, and answers {text, usage}", async () => {
    const { client, engine } = scriptedClient(["  Bonjour tout le monde.\n"]);
    const transcription = await client.audio.transcriptions.create({ file: file(), model: GEMMA, language: "fr", prompt: "Salut" });
    expect(transcription).toEqual({
      text: "Bonjour tout le monde.",
      usage: { type: "tokens", input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(transcription.usage.input_tokens).toBeGreaterThan(0);
    expect(transcription.usage.total_tokens).toBe(transcription.usage.input_tokens + transcription.usage.output_tokens);
    const [request] = engine.requests;
    expect(request.model).toBe(GEMMA);
    expect(request.sampling.temperature).toBe(0);
    expect(request.thinking.enabled).toBe(false);
    const parts = request.messages.at(-1)!.content as Array<{ type: string; text?: string }>;
    expect(parts[0]).toMatchObject({ type: "input_audio", audio: { samples: 8000, sampleRate: 16_000, channels: 1 } });
    expect(parts[1].text).toMatch(/Transcribe this speech in French/);
    expect(parts[1].text).toMatch(/Salut/);
  });

  it("response_format text gives the transcript itself; temperature is passed on", async () => {
    const { client, engine } = scriptedClient(["Hello there."]);
    const text = await client.audio.transcriptions.create({ file: file(), model: GEMMA, response_format: "text", temperature: 0.3 });
    expect(text).toBe("Hello there.");
    expect(engine.requests[0].sampling.temperature).toBe(0.3);
  });

  it("streams transcript.text.delta events, then transcript.text.done with the text and usage", async () => {
    const { client } = scriptedClient(["One two three four."]);
    const stream = await client.audio.transcriptions.create({ file: file(), model: GEMMA, stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    const deltas = events.filter((e) => e.type === "transcript.text.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => (e as { delta: string }).delta).join("")).toBe("One two three four.");
    expect(events.at(-1)).toEqual({ type: "transcript.text.done", text: "One two three four.", usage: { type: "tokens", input_tokens: expect.any(Number), output_tokens: 5, total_tokens: expect.any(Number) } });
    expect(events.filter((e) => e.type === "transcript.text.done")).toHaveLength(1);
  });

  it("takes bytes too (ArrayBuffer, Uint8Array) and leaves the caller's buffer usable", async () => {
    const { client } = scriptedClient(() => "ok");
    const bytes = wav.slice();
    expect(await client.audio.transcriptions.create({ file: bytes, model: GEMMA })).toMatchObject({ text: "ok" });
    expect(await client.audio.transcriptions.create({ file: bytes.buffer, model: GEMMA })).toMatchObject({ text: "ok" });
    expect(bytes.byteLength).toBe(wav.byteLength);
  });

  it("a model without audio input → 400 naming the model, before anything loads", async () => {
    const { client, engine } = scriptedClient(["never"]);
    const error = await rejection(client.audio.transcriptions.create({ file: file(), model: "Qwen3-0.6B" }));
    expect(error).toMatchObject({ status: 400, param: "model", code: "unsupported_input" });
    expect(error.message).toMatch(/Qwen3-0\.6B does not take audio/);
    expect(engine.requests).toHaveLength(0);
    expect(engine.loadedModel).toBeNull();
  });

  it("a hosted model id → 404 that says which local model transcribes", async () => {
    const { client } = scriptedClient(["never"]);
    const error = await rejection(client.audio.transcriptions.create({ file: file(), model: "whisper-1" }));
    expect(error).toMatchObject({ status: 404, param: "model" });
    expect(error.message).toMatch(/whisper-1 is a hosted OpenAI model.*gemma-4-E2B/);
  });

  it("timestamp formats → 400 before anything loads", async () => {
    const { client, engine } = scriptedClient(["never"]);
    for (const format of ["srt", "vtt", "verbose_json"]) {
      const error = await rejection(client.audio.transcriptions.create({ file: file(), model: GEMMA, response_format: format as "json" }));
      expect(error).toMatchObject({ status: 400, param: "response_format" });
      expect(error.message).toMatch(/timestamps/);
    }
    expect(engine.requests).toHaveLength(0);
  });

  it("an audio problem names `file`, not the chat message it travels in", async () => {
    const { client } = scriptedClient(["never"]);
    const broken = wav.slice(0, 40); // a WAV header cut before its data chunk
    const error = await rejection(client.audio.transcriptions.create({ file: broken, model: GEMMA }));
    expect(error).toMatchObject({ status: 400, param: "file" });
    expect(error.message).not.toMatch(/messages\[0\]/);
  });

  it("waits in the one queue behind a chat completion", async () => {
    const { client, engine } = scriptedClient(["a b c d e f", "heard"], { tokenDelayMs: 10 });
    const chat = client.chat.completions.create({ model: GEMMA, messages: [user("hi")] });
    await new Promise((r) => setTimeout(r, 5));
    const transcription = client.audio.transcriptions.create({ file: file(), model: GEMMA });
    await new Promise((r) => setTimeout(r, 5));
    expect(await client.queueState()).toEqual({ waiting: 1, running: true });
    await chat;
    expect(await transcription).toMatchObject({ text: "heard" });
    expect(engine.requests.map((r) => typeof r.messages.at(-1)!.content)).toEqual(["string", "object"]);
  });
});
