/**
 * Reasoning on a GGUF whose own chat template renders the prompt (a record
 * naming no ChatML family): the wllama engine (@wllama/wllama 3.8.1, the real
 * llama.cpp) through createClient's dedicated worker in headless Chromium, on
 * the tiny generated GGUF with a DeepSeek-R1-style template
 * (R1_STYLE_TEMPLATE: the generation prompt opens `<think>\n`). llama-server
 * would move what the model writes inside the think block out of the reply's
 * text (its default `reasoning_format`); the engine asks for the raw text, so
 * our reasoning parser (the family's, as on web-llm) reads it.
 *
 * The oracle is llama.cpp itself, in this page on the same file: the raw
 * completion of the prompt the template renders. A random model never writes
 * `</think>`, so all it writes is reasoning.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk, type Client } from "../../src/index.js";
import { server, startDirect, tinyRecord, type Direct } from "./support/tiny-gguf.js";

const r1Model = "tiny-gguf-r1";
const switchModel = "tiny-gguf-switch";
const plainModel = "tiny-gguf-r1-nofamily";
const messages = [{ role: "user" as const, content: "hello world" }];
/** What R1_STYLE_TEMPLATE renders for `messages` with the generation prompt. */
const opened = "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n<think>\n";

let client: Client;
let direct: Direct;

beforeAll(async () => {
  const file = (id: string) => `${server}/m/${id}/tiny-r1.gguf`;
  client = createClient({
    models: [
      tinyRecord(r1Model, { model: file(r1Model), family: "deepseek-r1" }),
      tinyRecord(plainModel, { model: file(plainModel) }),
      // Qwen3.5's GGUFs render their own template (not our ChatML), which has the switch.
      tinyRecord(switchModel, { model: `${server}/m/${switchModel}/tiny-switch.gguf`, family: "qwen3.5" }),
    ],
  });
  direct = await startDirect("tiny-r1.gguf");
});
afterAll(async () => {
  client?.terminate();
  await direct?.instance.exit();
});

describe("reasoning on a GGUF's own reasoning template", () => {
  it("not streamed: what the model writes in the opened think block is the reply's reasoning_content, as llama.cpp generates it", async () => {
    const want = await direct.raw(opened, { max_tokens: 12 });
    // The model wrote something (else the test proves nothing), and no `</think>`: all of it is reasoning.
    expect(want.content.trim().length).toBeGreaterThan(0);
    expect(want.content).not.toContain("</think>");
    const r = await client.chat.completions.create({ model: r1Model, messages, max_tokens: 12, temperature: 0 });
    expect(r.usage.prompt_tokens).toBe(want.prompt);
    expect(r.usage.completion_tokens).toBe(want.completion);
    expect(r.choices[0].message.reasoning_content?.trim()).toBe(want.content.trim());
    expect(r.choices[0].message.content ?? "").toBe("");
  });

  it("streamed: the reasoning_content deltas make the same reasoning", async () => {
    const want = await direct.raw(opened, { max_tokens: 12 });
    const stream = await client.chat.completions.create({ model: r1Model, messages, max_tokens: 12, temperature: 0, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? "").join("");
    expect(reasoning.trim()).toBe(want.content.trim());
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("");
  });

  it("a record naming no family gets the raw text, think block included, as its content (nothing dropped)", async () => {
    const want = await direct.raw(opened, { max_tokens: 12 });
    const r = await client.chat.completions.create({ model: plainModel, messages, max_tokens: 12, temperature: 0 });
    expect(r.choices[0].message.content).toContain(want.content.trim());
    expect(r.usage.completion_tokens).toBe(want.completion);
  });
});

describe("thinking off on a GGUF template with Qwen3's enable_thinking switch", () => {
  const plain = "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n";
  const closed = `${plain}<think>\n\n</think>\n\n`;

  it('reasoning_effort "none" renders the template with enable_thinking false (the empty think block), as llama.cpp counts it', async () => {
    const [withSwitch, without] = [await direct.promptTokensOf(closed), await direct.promptTokensOf(plain)];
    expect(withSwitch).toBeGreaterThan(without);
    const off = await client.chat.completions.create({ model: switchModel, messages, max_tokens: 4, temperature: 0, reasoning_effort: "none" });
    expect(off.usage.prompt_tokens).toBe(withSwitch);
    const want = await direct.raw(closed, { max_tokens: 4 });
    expect(off.usage.completion_tokens).toBe(want.completion);
  });

  it("thinking on (the family's default) renders enable_thinking true: no block (llama.cpp's own default is false, the block)", async () => {
    const on = await client.chat.completions.create({ model: switchModel, messages, max_tokens: 4, temperature: 0 });
    expect(await direct.promptTokensOf(plain)).toBeLessThan(await direct.promptTokensOf(closed));
    expect(on.usage.prompt_tokens).toBe(await direct.promptTokensOf(plain));
  });
});
