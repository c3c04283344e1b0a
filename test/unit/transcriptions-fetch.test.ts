/**
 * POST /audio/transcriptions on client.fetch: the unchanged OpenAI SDK (v6,
 * Node) and the AI SDK's experimental_transcribe() (ai 6 exports no plain
 * `transcribe`) with @ai-sdk/openai, streamed and not,
 * and the multipart forms they and plain fetch callers send.
 */
import { describe, expect, it } from "vitest";
import OpenAI, { toFile } from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { experimental_transcribe } from "ai";
import { scriptedClient } from "./support/client.js";
import { wavBytes } from "../support/wav.js";

const GEMMA = "gemma-4-E2B-it-q4f16_1-MLC";
const BASE = "http://localhost.webgpu/v1";
const wav = wavBytes({ seconds: 0.25 });

function openaiOver(replies: string[]) {
  const { client, engine } = scriptedClient(replies);
  const openai = new OpenAI({ apiKey: "local", baseURL: BASE, fetch: client.fetch, maxRetries: 0 });
  return { client, engine, openai };
}

describe("openai v6 on client.fetch", () => {
  it("create() → {text, usage}", async () => {
    const { openai, engine } = openaiOver(["It works."]);
    const transcription = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav"), model: GEMMA, language: "en", temperature: 0.2 });
    expect(transcription.text).toBe("It works.");
    expect(transcription.usage).toMatchObject({ type: "tokens", output_tokens: 3 });
    expect(engine.requests[0].sampling.temperature).toBe(0.2);
    expect(JSON.stringify(engine.requests[0].messages)).toMatch(/in English/);
  });

  it("response_format text → the transcript as a string", async () => {
    const { openai } = openaiOver(["Plain words."]);
    const text = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav"), model: GEMMA, response_format: "text" });
    expect(text).toBe("Plain words.");
  });

  it("stream: true → transcript.text.delta events, then transcript.text.done", async () => {
    const { openai } = openaiOver(["Streamed speech here."]);
    const stream = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav"), model: GEMMA, stream: true });
    let text = "";
    let done: OpenAI.Audio.TranscriptionTextDoneEvent | undefined;
    for await (const event of stream) {
      if (event.type === "transcript.text.delta") text += event.delta;
      if (event.type === "transcript.text.done") done = event;
    }
    expect(text).toBe("Streamed speech here.");
    expect(done).toMatchObject({ text: "Streamed speech here.", usage: { type: "tokens", output_tokens: 4 } });
  });

  it("srt → BadRequestError saying why; a text-only model → 400 naming it", async () => {
    const { openai } = openaiOver(["never"]);
    const srt = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav"), model: GEMMA, response_format: "srt" }).catch((e) => e);
    expect(srt).toBeInstanceOf(OpenAI.BadRequestError);
    expect(srt.param).toBe("response_format");
    expect(srt.message).toMatch(/timestamps/);
    const textOnly = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav"), model: "Qwen3-0.6B" }).catch((e) => e);
    expect(textOnly).toBeInstanceOf(OpenAI.BadRequestError);
    expect(textOnly.param).toBe("model");
    expect(textOnly.message).toMatch(/Qwen3-0\.6B does not take audio/);
  });
});

describe("the AI SDK's experimental_transcribe() with @ai-sdk/openai on client.fetch", () => {
  it("returns the text, from bytes and from base64", async () => {
    const { client, engine } = scriptedClient(["From the AI SDK.", "Again."]);
    const provider = createOpenAI({ apiKey: "local", baseURL: BASE, fetch: client.fetch });
    const result = await experimental_transcribe({ model: provider.transcription(GEMMA), audio: wav, maxRetries: 0 });
    expect(result.text).toBe("From the AI SDK.");
    const again = await experimental_transcribe({ model: provider.transcription(GEMMA), audio: Buffer.from(wav).toString("base64"), maxRetries: 0 });
    expect(again.text).toBe("Again.");
    expect(engine.requests).toHaveLength(2);
  });
});

describe("the multipart route", () => {
  const form = (fields: Record<string, string | Blob>) => {
    const data = new FormData();
    for (const [key, value] of Object.entries(fields)) data.append(key, value);
    return data;
  };

  it("reads a serialized multipart body (a Request) with the stream and temperature fields as text", async () => {
    const { client, engine } = scriptedClient(["Serialized."]);
    const request = new Request(`${BASE}/audio/transcriptions`, {
      method: "POST",
      body: form({ file: new File([wav as BlobPart], "a.wav"), model: GEMMA, temperature: "0.5", stream: "false" }),
    });
    const response = await client.fetch(request);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ text: "Serialized." });
    expect(engine.requests[0].sampling.temperature).toBe(0.5);
  });

  it("streams SSE data frames without [DONE]", async () => {
    const { client } = scriptedClient(["A b."]);
    const response = await client.fetch(`${BASE}/audio/transcriptions`, { method: "POST", body: form({ file: new File([wav as BlobPart], "a.wav"), model: GEMMA, stream: "true" }) });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const frames = (await response.text()).trim().split("\n\n");
    expect(frames.every((f) => f.startsWith("data: {"))).toBe(true);
    expect(JSON.parse(frames.at(-1)!.slice(6))).toMatchObject({ type: "transcript.text.done", text: "A b." });
  });

  it("JSON, a text field for file, or a bad temperature → 400 naming what to send", async () => {
    const { client } = scriptedClient(["never"]);
    const post = (init: RequestInit) => client.fetch(`${BASE}/audio/transcriptions`, { method: "POST", ...init }).then(async (r) => ({ status: r.status, error: (await r.json()).error }));
    const asJson = await post({ headers: { "content-type": "application/json" }, body: JSON.stringify({ model: GEMMA }) });
    expect(asJson.status).toBe(400);
    expect(asJson.error.message).toMatch(/multipart\/form-data/);
    expect(await post({ body: form({ file: "not a file", model: GEMMA }) })).toMatchObject({ status: 400, error: { param: "file" } });
    expect(await post({ body: form({ file: new File([wav as BlobPart], "a.wav"), model: GEMMA, temperature: "warm" }) })).toMatchObject({ status: 400, error: { param: "temperature" } });
    expect(await post({ body: form({ file: new File([wav as BlobPart], "a.wav"), model: GEMMA, "timestamp_granularities[]": "word" }) })).toMatchObject({ status: 400, error: { param: "timestamp_granularities" } });
  });
});
