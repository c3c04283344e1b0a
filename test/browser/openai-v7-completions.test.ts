/**
 * The unchanged OpenAI SDK v7 in the page, `completions.create` (raw prompt)
 * on `client.fetch`, with the host in the default worker: the streamed chunks
 * come over the request's MessagePort, and abort goes back over it.
 */
import { describe, expect, it } from "vitest";
import { setup } from "./support/openai-v7-client.js";

const MODEL = "Qwen3-0.6B";

describe("openai v7 completions in the page, host in the worker", () => {
  it("create() → a text_completion; stream: true → its text in chunks, usage last", async () => {
    const { openai } = setup([" from the worker.", " streamed back."]);
    const completion = await openai.completions.create({ model: MODEL, prompt: "Raw text", echo: true });
    expect(completion).toMatchObject({ object: "text_completion", choices: [{ index: 0, text: "Raw text from the worker.", finish_reason: "stop" }] });
    const stream = await openai.completions.create({ model: MODEL, prompt: "Raw", stream: true, logprobs: 1, stream_options: { include_usage: true } });
    let text = "";
    const tokens: string[] = [];
    let usage: { completion_tokens: number } | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      tokens.push(...(chunk.choices[0]?.logprobs?.tokens ?? []));
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(" streamed back.");
    expect(tokens.join("")).toBe(" streamed back.");
    expect(usage?.completion_tokens).toBe(3);
  });

  it("a refusal keeps its fields across the worker", async () => {
    const { openai } = setup([]);
    const error = await openai.completions.create({ model: MODEL, prompt: "P", best_of: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, param: "best_of", code: "unsupported_parameter" });
  });
});
