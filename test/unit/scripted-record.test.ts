import { describe, expect, it } from "vitest";
import { createClient, ApiError, type ModelRecord } from "../../src/index.js";

/** A catalog entry that selects the scripted engine: plain JSON, as `?catalog=` in the demo loads it. */
const scriptedRecord = (replies: string[]): ModelRecord => ({
  model: "https://models.invalid/Qwen3-Scripted-MLC",
  model_id: "Qwen3-Scripted-q4f32_1-MLC",
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0,
  engine: { kind: "scripted", replies },
});

// The first request imports web-llm's catalog (a large module): seconds on a busy machine.
describe("a catalog record served by the scripted engine", { timeout: 30_000 }, () => {
  it("answers with no engine given, no GPU and no download", async () => {
    // No `engine` option: every other model would need web-llm and a GPU, which Node lacks.
    const client = createClient({ worker: false, models: [scriptedRecord(["First answer.", "Second answer."])] });
    const progress: number[] = [];
    await client.models.load("Qwen3-Scripted", { onProgress: (p) => progress.push(p.fraction) });
    expect(progress.at(-1)).toBe(1);

    const stream = await client.chat.completions.create({ model: "Qwen3-Scripted", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("First answer.");
  });

  it("replays its replies in order and starts over after the last", async () => {
    const client = createClient({ worker: false, models: [scriptedRecord(["One.", "Two."])] });
    const answers: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const completion = await client.chat.completions.create({ model: "Qwen3-Scripted-q4f32_1-MLC", messages: [{ role: "user", content: `turn ${i}` }] });
      answers.push(completion.choices[0].message.content);
    }
    expect(answers).toEqual(["One.", "Two.", "One."]);
  });

  it("is listed with the other models, and the others still need the real engine", async () => {
    const client = createClient({ worker: false, models: [scriptedRecord(["Hi."])] });
    const { data } = await client.models.list();
    expect(data.map((m) => m.id)).toContain("Qwen3-Scripted-q4f32_1-MLC");
    const error = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
  });

  it("says what to fix when the record has no replies", async () => {
    const client = createClient({ worker: false, models: [scriptedRecord([])] });
    const error = await client.chat.completions.create({ model: "Qwen3-Scripted", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, code: "invalid_model_record" });
    expect((error as ApiError).message).toMatch(/engine\.replies/);
  });
});
