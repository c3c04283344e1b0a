/**
 * The scripted engine behaves like web-llm 0.2.86 where an app can see it
 * (issue 15, item 7), so tests written against it exercise the paths the real
 * engine takes:
 * - thinking off on Qwen3-style templates: web-llm writes `<think>\n\n</think>\n\n`
 *   into the reply it streams and stores (those tokens count toward max_tokens);
 * - its KV cache holds prompt + completion − 1 tokens (the last sampled token
 *   is never fed back);
 * - with `promptCache: false`, web-llm's own rule: a continuation goes through
 *   web-llm's completion API, which resets the KV cache, so the chat turn
 *   after it reuses nothing; with prompt caching (the default) the longest
 *   common prefix of tokens is reused there too (prompt-cache.test.ts).
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import type { EngineRequest } from "../../src/engine/types.js";

const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const LLAMA = "Llama-3.2-1B-Instruct-q4f16_1-MLC";
const OFF_BLOCK = "<think>\n\n</think>\n\n";
const off = { reasoning_effort: "none" as const };

describe("thinking off: web-llm's empty think block is part of the reply", () => {
  it("the engine streams it before the scripted text (Qwen3); the app sees only the answer", async () => {
    const engine = createScriptedEngine({ replies: ["Hello there."] });
    const client = createClient({ worker: false, engine });
    const completion = await client.chat.completions.create({ model: QWEN3, messages: [{ role: "user", content: "hi" }], ...off });
    expect(completion.choices[0].message.content).toBe("Hello there.");
    expect(completion.choices[0].message.reasoning_content ?? null).toBeNull();
    // The engine seam itself, as an app's own test would drive it.
    const direct = createScriptedEngine({ replies: ["Hello there."] });
    await direct.load({ model: "x", model_id: QWEN3, model_lib: "x" }, {});
    const request: EngineRequest = { model: QWEN3, messages: [{ role: "user", content: "hi" }], sampling: { stop: [], max_tokens: 100 }, thinking: { enabled: false }, continueFinalMessage: false };
    let text = "";
    let usage;
    for await (const event of direct.generate(request, new AbortController().signal)) {
      if (event.type === "text") text += event.text;
      else usage = event.usage;
    }
    expect(text).toBe(OFF_BLOCK + "Hello there.");
    expect(usage?.completionTokens).toBeGreaterThan(3);
  });

  it("its tokens count toward max_tokens, as in web-llm", async () => {
    const engine = createScriptedEngine({ replies: ["one two three four"] });
    const client = createClient({ worker: false, engine });
    const completion = await client.chat.completions.create({ model: QWEN3, messages: [{ role: "user", content: "count" }], max_tokens: 9, ...off });
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.choices[0].message.content).toBe("one two");
    // 7 tokens of the block, then "\n\none" and " two" (the scripted tokenizer joins leading whitespace to a word).
    expect(completion.usage.completion_tokens).toBe(9);
  });

  it("a reply that already starts with the block is not given a second one", async () => {
    const engine = createScriptedEngine({ replies: [OFF_BLOCK + "Hi."] });
    const client = createClient({ worker: false, engine });
    const completion = await client.chat.completions.create({ model: QWEN3, messages: [{ role: "user", content: "hi" }], ...off });
    expect(completion.choices[0].message.content).toBe("Hi.");
    expect(completion.usage.completion_tokens).toBe(9);
  });

  it("families that do not use web-llm's switch get nothing added", async () => {
    const engine = createScriptedEngine({ replies: ["Plain."] });
    const client = createClient({ worker: false, engine });
    const completion = await client.chat.completions.create({ model: LLAMA, messages: [{ role: "user", content: "hi" }], ...off });
    expect(completion.usage.completion_tokens).toBe(2);
  });

  it("KV reuse still happens with thinking off: turn 2 reuses prompt + completion − 1 tokens", async () => {
    const engine = createScriptedEngine({ replies: ["First answer.", "Second."] });
    const client = createClient({ worker: false, engine });
    const messages = [{ role: "user" as const, content: "one" }];
    const first = await client.chat.completions.create({ model: QWEN3, messages, ...off });
    const second = await client.chat.completions.create({ model: QWEN3, messages: [...messages, first.choices[0].message, { role: "user", content: "two" }] as never, ...off });
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(first.usage.prompt_tokens + first.usage.completion_tokens - 1);
    // The history turn carries web-llm's stored text, block included.
    expect(engine.requests[1].messages.find((m) => m.role === "assistant")?.content).toBe(OFF_BLOCK + "First answer.");
  });
});

describe("KV cache like web-llm's", () => {
  it("holds prompt + completion − 1 tokens after a turn", async () => {
    const engine = createScriptedEngine({ replies: ["First answer.", "Second."] });
    const client = createClient({ worker: false, engine });
    const messages = [{ role: "user" as const, content: "one" }];
    const first = await client.chat.completions.create({ model: LLAMA, messages });
    const second = await client.chat.completions.create({ model: LLAMA, messages: [...messages, first.choices[0].message, { role: "user", content: "two" }] as never });
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(first.usage.prompt_tokens + first.usage.completion_tokens - 1);
  });

  it("caching off: a chat turn after a continuation reuses nothing (web-llm continues through its completion API, which resets the cache)", async () => {
    const engine = createScriptedEngine({ replies: [" and more.", "Next."], promptCache: false });
    const client = createClient({ worker: false, engine });
    const messages = [
      { role: "user" as const, content: "Say something" },
      { role: "assistant" as const, content: "Something" },
    ];
    const continued = await client.chat.completions.create({ model: LLAMA, messages });
    const whole = "Something" + (continued.choices[0].message.content ?? "");
    const next = await client.chat.completions.create({ model: LLAMA, messages: [messages[0], { role: "assistant", content: whole }, { role: "user", content: "again" }] });
    expect(next.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it("caching off, at the engine seam: the conversation a continuation produced is not in the cache for the next chat turn", async () => {
    const engine = createScriptedEngine({ replies: [" and more.", "Next."], promptCache: false });
    await engine.load({ model: "x", model_id: LLAMA, model_lib: "x" }, {});
    const base = { model: LLAMA, sampling: { stop: [], max_tokens: 100 }, thinking: { enabled: false } };
    const run = async (request: EngineRequest) => {
      let cached = -1;
      for await (const event of engine.generate(request, new AbortController().signal)) if (event.type === "done") cached = event.usage.cachedTokens;
      return cached;
    };
    const u = { role: "user" as const, content: "Say something" };
    await run({ ...base, messages: [u, { role: "assistant", content: "Something" }], continueFinalMessage: true });
    const cached = await run({ ...base, messages: [u, { role: "assistant", content: "Something" }, { role: "assistant", content: " and more." }, { role: "user", content: "again" }], continueFinalMessage: false });
    expect(cached).toBe(0);
  });
});
