/**
 * The unchanged OpenAI SDK v7 in the page, `audio.transcriptions.create` on
 * `client.fetch`, with the host (and the audio) in the default worker:
 * the multipart form crosses into the client, the bytes move to the worker.
 */
import { describe, expect, it } from "vitest";
import OpenAI, { toFile } from "openai-v7";
import { setup } from "./support/openai-v7-client.js";
import { wavBytes } from "../support/wav.js";

const GEMMA = "gemma-4-E2B-it-q4f16_1-MLC";
const wav = wavBytes({ seconds: 0.5 });


describe("openai v7 audio.transcriptions in the page, host in the worker", () => {
  it("create() → {text, usage}; response_format text → a string", async () => {
    const { openai } = setup(["Heard in the worker.", "As text."]);
    const transcription = await openai.audio.transcriptions.create({ file: await toFile(wav, "speech.wav", { type: "audio/wav" }), model: GEMMA, language: "en" });
    expect(transcription.text).toBe("Heard in the worker.");
    expect(transcription.usage).toMatchObject({ type: "tokens", output_tokens: expect.any(Number) });
    const usage = transcription.usage as OpenAI.Audio.Transcription.Tokens;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    const text = await openai.audio.transcriptions.create({ file: new File([wav as BlobPart], "speech.wav"), model: GEMMA, response_format: "text" });
    expect(text).toBe("As text.");
  });

  it("stream: true → transcript.text.delta events, then transcript.text.done", async () => {
    const { openai } = setup(["Streamed from the worker."]);
    const stream = await openai.audio.transcriptions.create({ file: new File([wav as BlobPart], "speech.wav"), model: GEMMA, stream: true });
    let text = "";
    let done: OpenAI.Audio.TranscriptionTextDoneEvent | undefined;
    for await (const event of stream) {
      if (event.type === "transcript.text.delta") text += event.delta;
      if (event.type === "transcript.text.done") done = event;
    }
    expect(text).toBe("Streamed from the worker.");
    expect(done).toMatchObject({ text: "Streamed from the worker.", usage: { type: "tokens" } });
  });

  it("vtt → 400 saying why, with the error fields intact across the worker", async () => {
    const { openai } = setup(["never"]);
    const error = await openai.audio.transcriptions.create({ file: new File([wav as BlobPart], "speech.wav"), model: GEMMA, response_format: "vtt" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe("response_format");
    expect(error.message).toMatch(/timestamps/);
  });
});
