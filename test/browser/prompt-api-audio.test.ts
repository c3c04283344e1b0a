/**
 * A session keeps its history and sends it again with every request; with
 * the pipeline in the library's worker, audio samples (an AudioBuffer's,
 * sent as pcm_f32) are transferred to the worker. The session's own copy must
 * survive: the next prompts (and the context counts) still carry the audio.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { scriptedVoiceModel } from "../../src/testing.js";
import { createPromptApi } from "../../src/prompt-api/index.js";

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

describe("audio in a session whose pipeline runs in a worker", () => {
  it("an AudioBuffer prompt, then more prompts: the history's samples are still there", async () => {
    const voice = scriptedVoiceModel({ id: "Voice-Session-MLC", replies: ["A tone.", "Still a tone.", "Yes."] });
    const client = createClient({ models: [voice] });
    clients.push(client);
    expect((await client.workerInfo()).worker).toBe("dedicated");
    const LanguageModel = createPromptApi({ client, model: voice.model_id });
    const session = await LanguageModel.create({ expectedInputs: [{ type: "audio" }] });
    const context = new OfflineAudioContext(1, 8000, 16_000);
    const buffer = context.createBuffer(1, 8000, 16_000);
    buffer.getChannelData(0).fill(0.25);
    expect(await session.prompt([{ role: "user", content: [{ type: "text", value: "What is this?" }, { type: "audio", value: buffer }] }])).toBe("A tone.");
    const withAudio = session.contextUsage;
    expect(await session.prompt("And now?")).toBe("Still a tone.");
    expect(await session.prompt("Sure?")).toBe("Yes.");
    expect(session.contextUsage).toBeGreaterThan(withAudio);
    // The caller's AudioBuffer is untouched too.
    expect(buffer.getChannelData(0)[0]).toBe(0.25);
  });
});
