/** Response and chunk shapes, usage accounting and KV reuse, through createClient + scripted engine. */
import { describe, expect, it } from "vitest";
import type { ChatCompletionChunk } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const base = { model: "Qwen/Qwen3-0.6B", messages: [user("hi")] };

describe("non-streaming completion", () => {
  it("has the contract's shape and echoes the model as sent", async () => {
    // One generation at a time: no x_webgpu.batch (a batching engine adds it: continuous-batching.test.ts).
    const { client } = scriptedClient(["Hello there."], { batch: false });
    const before = Math.floor(Date.now() / 1000);
    const completion = await client.chat.completions.create(base);
    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "Qwen/Qwen3-0.6B",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello there." }, finish_reason: "stop", logprobs: null }],
      usage: { completion_tokens: 3, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(completion.id).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/);
    expect(completion.created).toBeGreaterThanOrEqual(before);
    expect(completion.usage.total_tokens).toBe(completion.usage.prompt_tokens + completion.usage.completion_tokens);
    expect(completion.x_webgpu).toEqual({
      request_id: expect.stringMatching(/^req_/),
      queue_ms: expect.any(Number),
      ttft_ms: expect.any(Number),
      prefill_tokens_per_s: expect.any(Number),
      decode_tokens_per_s: expect.any(Number),
      prefill_tokens: completion.usage.prompt_tokens,
      // Two decode steps after the prefill's first token, and the one that produces the end of text; nothing to draft from "hi".
      decode_passes: 3,
      draft_tokens: 0,
      accepted_draft_tokens: 0,
    });
  });

  it("ids are unique per request", async () => {
    const { client } = scriptedClient(() => "x");
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await client.chat.completions.create(base)).id);
    expect(ids.size).toBe(20);
  });

  it("max_tokens cuts the output with finish_reason length", async () => {
    const { client } = scriptedClient(["one two three four five"]);
    const completion = await client.chat.completions.create({ ...base, max_tokens: 2 });
    expect(completion.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "one two" } });
    expect(completion.usage.completion_tokens).toBe(2);
  });

  it("stop cuts the output before the match", async () => {
    const { client } = scriptedClient(["alpha beta STOP gamma"]);
    const completion = await client.chat.completions.create({ ...base, stop: ["STOP"] });
    expect(completion.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "alpha beta " } });
  });
});

describe("streaming", () => {
  it("role first, deltas, a finish chunk, then the usage chunk when asked", async () => {
    const { client } = scriptedClient(["Hi you."]);
    const stream = await client.chat.completions.create({ ...base, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "Qwen/Qwen3-0.6B")).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.slice(1, -2).every((c) => c.choices[0].delta.role === undefined)).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Hi you.");
    const finish = chunks[chunks.length - 2];
    expect(finish.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    const usage = chunks[chunks.length - 1];
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ completion_tokens: 3 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it("without include_usage there is no usage chunk and no usage key", async () => {
    const { client } = scriptedClient(["a b"]);
    const stream = await client.chat.completions.create({ ...base, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)?.choices[0].finish_reason).toBe("stop");
    expect(chunks.every((c) => !("usage" in c))).toBe(true);
  });

  it("an empty reply still opens with the role and finishes", async () => {
    const { client } = scriptedClient([""]);
    const stream = await client.chat.completions.create({ ...base, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([{ role: "assistant", content: "" }, {}]);
  });

  it("streams logprobs with the tokens", async () => {
    const { client } = scriptedClient(["a b"]);
    const stream = await client.chat.completions.create({ ...base, stream: true, logprobs: true, top_logprobs: 2 });
    const entries = [];
    for await (const chunk of stream) entries.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    expect(entries.map((e) => e.token)).toEqual(["a", " b"]);
    expect(entries[0].top_logprobs).toHaveLength(2);
  });
});

describe("multi-turn KV reuse", () => {
  it("sending back the reply keeps the engine's cache: cached_tokens covers the first turn", async () => {
    const { client, engine } = scriptedClient(["First answer.", "Second answer."]);
    const first = await client.chat.completions.create({ ...base, messages: [user("one")] });
    const second = await client.chat.completions.create({
      ...base,
      messages: [user("one"), { role: "assistant", content: first.choices[0].message.content }, user("two")],
    });
    // web-llm's cache holds prompt + completion − 1 tokens: the last sampled token is never fed back.
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(first.usage.prompt_tokens + first.usage.completion_tokens - 1);
    expect(second.usage.prompt_tokens).toBeGreaterThan(second.usage.prompt_tokens_details.cached_tokens);
    expect(engine.requests[1].messages[1]).toEqual({ role: "assistant", content: "First answer." });
  });

  it("a different history reuses only what precedes the first difference (the scripted template's `<start> <user>`)", async () => {
    const { client } = scriptedClient(["First answer.", "Second answer."]);
    await client.chat.completions.create({ ...base, messages: [user("one")] });
    const second = await client.chat.completions.create({ ...base, messages: [user("other"), { role: "assistant", content: "First answer." }, user("two")] });
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(2);
    expect(second.x_webgpu.prefill_tokens).toBe(second.usage.prompt_tokens - 2);
  });
});
