/**
 * Continuing a final assistant message on a GGUF model: the wllama engine
 * (@wllama/wllama 3.8.1, the real llama.cpp) through createClient's dedicated
 * worker in headless Chromium, on the tiny generated GGUF. The oracle is
 * llama.cpp in this page on the same file: its raw completion of the open
 * prompt (the conversation with the assistant's turn left open).
 *
 * A ChatML-family record: we render the open prompt and llama.cpp completes
 * it. Any other record: llama-server continues the final message itself
 * (`prefill_assistant`) after the GGUF's template; its reply echoes the
 * message, which the engine drops (prefill-echo.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk, type Client } from "../../src/index.js";
import { server, startDirect, tinyRecord, type Direct } from "./support/tiny-gguf.js";

const hermesModel = "tiny-gguf-continue-hermes";
const plainModel = "tiny-gguf-continue";
const r1Model = "tiny-gguf-continue-r1";
const messages = [{ role: "user" as const, content: "hello world" }, { role: "assistant" as const, content: "the water" }];
/** The conversation with the assistant's turn open, in ChatML (the tiny GGUF's own template renders the same turns). */
const open = "<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\nthe water";

let client: Client;
let direct: Direct;
let directR1: Direct;

beforeAll(async () => {
  client = createClient({
    models: [
      tinyRecord(hermesModel, { family: "hermes" }),
      tinyRecord(plainModel),
      tinyRecord(r1Model, { model: `${server}/m/${r1Model}/tiny-r1.gguf` }),
    ],
  });
  direct = await startDirect();
  directR1 = await startDirect("tiny-r1.gguf");
});
afterAll(async () => {
  client?.terminate();
  await direct?.instance.exit();
  await directR1?.instance.exit();
});

describe("continuing a final assistant message on a GGUF model", () => {
  it.each([
    ["a ChatML-family record (our open prompt, as a raw completion)", hermesModel],
    ["a record on the GGUF's own template (llama-server continues it)", plainModel],
  ])("%s: the reply is llama.cpp's completion of the open prompt, with its exact usage", async (_, model) => {
    const want = await direct.raw(open, { max_tokens: 8 });
    expect(want.content.length).toBeGreaterThan(0);
    const r = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage.prompt_tokens).toBe(want.prompt);
    expect(r.usage.completion_tokens).toBe(want.completion);
    expect(r.choices[0].finish_reason).toBe(want.finish);
  });

  it("streamed, with logprobs, on the GGUF's template: the deltas are the continuation alone, one logprob per generated token", async () => {
    const want = await direct.raw(open, { max_tokens: 8 });
    const stream = await client.chat.completions.create({ model: plainModel, messages, max_tokens: 8, temperature: 0, stream: true, logprobs: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe(want.content);
    const entries = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expect(entries.length).toBe(want.completion);
    expect(entries.map((e) => e.token).join("")).toBe(text);
  });

  it("a reasoning template (R1 style): llama-server closes the think block before the message; the reply is what follows it", async () => {
    // llama.cpp's own chat reply echoes `<think></think>the water` before its continuation.
    const own = await directR1.chat(messages, { max_tokens: 8, reasoning_format: "none" });
    expect(own.content.startsWith("<think></think>the water")).toBe(true);
    const want = await directR1.raw("<|im_start|>user\nhello world<|im_end|>\n<|im_start|>assistant\n<think></think>the water", { max_tokens: 8 });
    const r = await client.chat.completions.create({ model: r1Model, messages, max_tokens: 8, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.choices[0].message.content).toBe(own.content.slice("<think></think>the water".length));
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });
});
