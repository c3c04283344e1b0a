/**
 * The GGUF's own chat template rendered by us (`@huggingface/jinja`,
 * src/engine/wllama/gguf-template.ts) for a record naming no ChatML family,
 * sent to llama.cpp as a raw completion: the wllama engine (@wllama/wllama
 * 3.8.1, the real llama.cpp) through createClient's dedicated worker in
 * headless Chromium, on the tiny generated GGUF with each of the writer's
 * templates.
 *
 * The oracle is llama.cpp itself, in this page on the same file: its own
 * rendering of the same messages (createChatCompletion) gives the prompt
 * tokens and the reply ours must equal, streamed and not; and its count of
 * the text the template renders (promptTokensOf) where that text is known.
 * A template our Jinja cannot render (a `min` filter) falls back to llama.cpp's
 * rendering and still answers as llama.cpp does; one llama.cpp's cannot (`//`,
 * which aborts its chat completion) now answers. models.status(id).chat_template
 * says which renders each loaded model's prompt (and, for the fallback, why).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk, type Client } from "../../src/index.js";
import { server, startDirect, tinyRecord, type Direct } from "./support/tiny-gguf.js";

/** A conversation with a system turn and an earlier exchange (ASCII words of the tiny vocabulary). */
const messages = [
  { role: "system" as const, content: "you are water" },
  { role: "user" as const, content: "hello world" },
  { role: "assistant" as const, content: "the water is long" },
  { role: "user" as const, content: "what time is it" },
];
const chatml = (m: { role: string; content: string }) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;

/** Template files of the GGUF server, one record each (no family: the GGUF's own template renders). */
const files = {
  chatml: "tiny.gguf",
  r1: "tiny-r1.gguf",
  switch: "tiny-switch.gguf",
  boseos: "tiny-boseos.gguf",
  min: "tiny-min.gguf",
  floordiv: "tiny-floordiv.gguf",
} as const;
type Name = keyof typeof files;
const modelOf = (name: Name) => `tiny-gguf-jinja-${name}`;

let client: Client;
const direct = {} as Record<Name, Direct>;

beforeAll(async () => {
  client = createClient({
    models: [
      ...(Object.keys(files) as Name[]).map((name) => tinyRecord(modelOf(name), { model: `${server}/m/${modelOf(name)}/${files[name]}` })),
      // A family whose thinking can be switched, on the GGUF's own template (not a ChatML family).
      tinyRecord("tiny-gguf-jinja-switch-qwen35", { model: `${server}/m/tiny-gguf-jinja-switch-qwen35/tiny-switch.gguf`, family: "qwen3.5" }),
      // A ChatML family: our ChatML prompt, not the GGUF's template (models.status says which).
      tinyRecord("tiny-gguf-jinja-chatml-qwen3", { model: `${server}/m/tiny-gguf-jinja-chatml-qwen3/tiny.gguf`, family: "qwen3" }),
    ],
  });
  for (const name of Object.keys(files) as Name[]) direct[name] = await startDirect(files[name]);
});
afterAll(async () => {
  client?.terminate();
  for (const d of Object.values(direct)) await d.instance.exit();
});

describe("a GGUF's own chat template rendered by @huggingface/jinja", () => {
  it.each(["chatml", "switch", "boseos"] as const)("%s template: reply and usage equal llama.cpp's rendering of the same messages, not streamed", async (name) => {
    const want = await direct[name].chat(messages, { max_tokens: 10 });
    expect(want.content.length).toBeGreaterThan(0);
    const r = await client.chat.completions.create({ model: modelOf(name), messages, max_tokens: 10, temperature: 0 });
    expect(r.usage.prompt_tokens).toBe(want.prompt);
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage.completion_tokens).toBe(want.completion);
    expect(r.choices[0].finish_reason).toBe(want.finish);
  });

  it.each(["chatml", "switch", "boseos"] as const)("%s template, streamed: the deltas make llama.cpp's reply, usage in the last chunk", async (name) => {
    const want = await direct[name].chat(messages, { max_tokens: 10 });
    const stream = await client.chat.completions.create({ model: modelOf(name), messages, max_tokens: 10, temperature: 0, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(want.content);
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });

  it("the prompt is the template's text: ChatML turns, the generation prompt (llama.cpp's count of that text)", async () => {
    const text = `${messages.map(chatml).join("")}<|im_start|>assistant\n`;
    const r = await client.chat.completions.create({ model: modelOf("chatml"), messages, max_tokens: 4, temperature: 0 });
    expect(r.usage.prompt_tokens).toBe(await direct.chatml.promptTokensOf(text));
  });

  it("bos_token and eos_token are the GGUF's own (<s>, <|im_end|>): the prompt counts them as llama.cpp does", async () => {
    // BOS_EOS_TEMPLATE: `<s>` first, `<|im_end|>` (the tiny vocabulary's EOS) closing the assistant's text before its turn's end.
    const text = `<s>${messages.map((m) => `<|im_start|>${m.role}\n${m.content}${m.role === "assistant" ? "<|im_end|>" : ""}<|im_end|>\n`).join("")}<|im_start|>assistant\n`;
    const tokens = await direct.boseos.promptTokensOf(text);
    // Without them (an undefined variable renders empty) the prompt would be 2 tokens shorter.
    expect(tokens).toBe((await direct.boseos.promptTokensOf(`${messages.map(chatml).join("")}<|im_start|>assistant\n`)) + 2);
    const r = await client.chat.completions.create({ model: modelOf("boseos"), messages, max_tokens: 4, temperature: 0 });
    expect(r.usage.prompt_tokens).toBe(tokens);
  });

  it("R1-style template: the prompt opens the think block as llama.cpp's does; the reply is its raw completion", async () => {
    const opened = `${messages.slice(0, 2).map(chatml).join("")}<|im_start|>assistant\nthe water is long<|im_end|>\n${chatml(messages[3])}<|im_start|>assistant\n<think>\n`;
    const own = await direct.r1.chat(messages, { max_tokens: 10, reasoning_format: "none" });
    const want = await direct.r1.raw(opened, { max_tokens: 10 });
    expect(want.prompt).toBe(own.prompt);
    const unary = await client.chat.completions.create({ model: modelOf("r1"), messages, max_tokens: 10, temperature: 0 });
    const streamed = await collect(await client.chat.completions.create({ model: modelOf("r1"), messages, max_tokens: 10, temperature: 0, stream: true, stream_options: { include_usage: true } }));
    for (const r of [{ content: unary.choices[0].message.content ?? "", usage: unary.usage }, streamed]) {
      expect(r.usage?.prompt_tokens).toBe(want.prompt);
      expect(r.usage?.completion_tokens).toBe(want.completion);
      expect(r.content).toBe(want.content);
    }
  });

  it("a switchable family (Qwen3.5) on its own template: enable_thinking as the request has it, counted as llama.cpp counts its rendering", async () => {
    const model = "tiny-gguf-jinja-switch-qwen35";
    const off = await client.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0, reasoning_effort: "none" });
    expect(off.usage.prompt_tokens).toBe((await direct.switch.chat(messages, { max_tokens: 4, chat_template_kwargs: { enable_thinking: false } })).prompt);
    const on = await client.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0 });
    expect(on.usage.prompt_tokens).toBe((await direct.switch.chat(messages, { max_tokens: 4, chat_template_kwargs: { enable_thinking: true } })).prompt);
    expect(on.usage.prompt_tokens).toBeLessThan(off.usage.prompt_tokens);
  });

  it("continuing a final assistant message leaves it open: llama.cpp's completion of the open prompt", async () => {
    const conversation = [...messages, { role: "assistant" as const, content: "the" }];
    const want = await direct.chatml.raw(`${messages.map(chatml).join("")}<|im_start|>assistant\nthe`, { max_tokens: 8 });
    const r = await client.chat.completions.create({ model: modelOf("chatml"), messages: conversation, max_tokens: 8, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });

  it("a template our Jinja cannot render (a min filter) falls back to llama.cpp's rendering and still answers as llama.cpp does", async () => {
    const want = await direct.min.chat(messages, { max_tokens: 10 });
    expect(want.content.length).toBeGreaterThan(0);
    const r = await client.chat.completions.create({ model: modelOf("min"), messages, max_tokens: 10, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
    const stream = await collect(await client.chat.completions.create({ model: modelOf("min"), messages, max_tokens: 10, temperature: 0, stream: true, stream_options: { include_usage: true } }));
    expect(stream.content).toBe(want.content);
  });

  it("a template llama.cpp's Jinja cannot render (floor division aborts it) answers: the prompt is ours", async () => {
    // The template renders as ChatML; llama.cpp's raw completion of that text is the oracle.
    const want = await direct.floordiv.raw(`${messages.map(chatml).join("")}<|im_start|>assistant\n`, { max_tokens: 10 });
    const r = await client.chat.completions.create({ model: modelOf("floordiv"), messages, max_tokens: 10, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });
});

describe("models.status says who renders a GGUF's chat template", () => {
  it("llama.cpp, with our Jinja's reason, for a template ours cannot render (min filter); jinja for ones ours renders", async () => {
    await client.chat.completions.create({ model: modelOf("min"), messages, max_tokens: 2, temperature: 0 });
    const min = await client.models.status(modelOf("min"));
    expect(min.chat_template?.renderer).toBe("llama.cpp");
    expect(min.chat_template?.reason).toBe("@huggingface/jinja cannot render the GGUF's chat template: Unknown ArrayValue filter: min");
    for (const name of ["chatml", "floordiv"] as const) {
      await client.chat.completions.create({ model: modelOf(name), messages, max_tokens: 2, temperature: 0 });
      expect((await client.models.status(modelOf(name))).chat_template).toEqual({ renderer: "jinja" });
    }
  });

  it("a record naming a ChatML family: the family's prompt", async () => {
    const model = "tiny-gguf-jinja-chatml-qwen3";
    await client.chat.completions.create({ model, messages, max_tokens: 2, temperature: 0 });
    expect((await client.models.status(model)).chat_template).toEqual({ renderer: "family:qwen3" });
  });
});

/** A streamed reply's text and usage. */
async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<{ content: string; usage: ChatCompletionChunk["usage"] }> {
  let content = "";
  let usage: ChatCompletionChunk["usage"] = undefined;
  for await (const chunk of stream) {
    content += chunk.choices[0]?.delta.content ?? "";
    usage = chunk.usage ?? usage;
  }
  return { content, usage };
}
