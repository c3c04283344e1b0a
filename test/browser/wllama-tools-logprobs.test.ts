/**
 * Tool results, logprobs and logit_bias on a GGUF model: the wllama engine
 * (@wllama/wllama 3.8.1, the real llama.cpp) through createClient's dedicated
 * worker in headless Chromium, on the tiny generated GGUF. The oracle is
 * llama.cpp itself, run directly in this page on the same file
 * (support/tiny-gguf.ts): the prompt a conversation with tool results must
 * give, counted by llama.cpp; its own logprobs for the same request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk, type Client, type TokenLogprob } from "../../src/index.js";
import { hermesCall, hermesToolBlock } from "../../src/families/styles/hermes.js";
import { llamaCall, llamaToolBlock } from "../../src/families/styles/llama.js";
import { startDirect, tinyRecord, TINY_VOCAB_SIZE, wordTokenId, type Direct } from "./support/tiny-gguf.js";

const model = "tiny-gguf-tools";
const hermesModel = "tiny-gguf-hermes";
const llamaModel = "tiny-gguf-llama31";
const messages = [{ role: "user" as const, content: "hello world" }];
const turn = "<|im_start|>user\nhello world<|im_end|>\n";

let client: Client;
let direct: Direct;

beforeAll(async () => {
  // family "hermes": our ChatML prompt (results in a `tool` turn); "llama-3.1": the GGUF's own template renders the shaped turns.
  client = createClient({ models: [tinyRecord(model), tinyRecord(hermesModel, { family: "hermes" }), tinyRecord(llamaModel, { family: "llama-3.1" })] });
  direct = await startDirect();
});
afterAll(async () => {
  client?.terminate();
  await direct?.instance.exit();
});

describe("a tool-call loop on a GGUF model", () => {
  /** A schema whose language is finite, so a greedy random model cannot run past max_tokens inside it. */
  const schema = { type: "object", properties: { mode: { enum: ["fast", "slow"] }, on: { type: "boolean" } }, required: ["mode", "on"], additionalProperties: false };
  const setMode = { type: "function" as const, function: { name: "set_mode", description: "Sets the mode.", parameters: schema } };

  it("Hermes family: the model's call, then its result as a `tool` turn, is the prompt web-llm's Hermes conversation gives, counted exactly", async () => {
    const first = await client.chat.completions.create({ model: hermesModel, messages, tools: [setMode], tool_choice: { type: "function", function: { name: "set_mode" } }, parallel_tool_calls: false, max_tokens: 200, temperature: 0 });
    const call = first.choices[0].message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.name).toBe("set_mode");
    if (call?.type !== "function") return;
    const result = '{"ok": true}';
    const history = [...messages, first.choices[0].message, { role: "tool" as const, tool_call_id: call.id, content: result }];
    const r = await client.chat.completions.create({ model: hermesModel, messages: history, tools: [setMode], max_tokens: 12, temperature: 0 });
    const prompt =
      `<|im_start|>system\n${hermesToolBlock([setMode])}<|im_end|>\n${turn}` +
      `<|im_start|>assistant\n${hermesCall(call)}<|im_end|>\n` +
      `<|im_start|>tool\n<tool_response>\n${result}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
    const want = await direct.raw(prompt, { max_tokens: 12 });
    expect(r.usage.prompt_tokens).toBe(want.prompt);
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage.completion_tokens).toBe(want.completion);
    // The first turn's prefix came from llama.cpp's cache (the conversation grew at its end).
    expect(r.usage.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("a family whose results are a `tool` turn, on the GGUF's own template: llama.cpp renders the shaped turns, reply and usage equal its own", async () => {
    const weather = { type: "function" as const, function: { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
    const call = { id: "call_7", type: "function" as const, function: { name: "get_weather", arguments: '{"city": "Paris"}' } };
    const history = [...messages, { role: "assistant" as const, content: null, tool_calls: [call] }, { role: "tool" as const, tool_call_id: call.id, content: '{"temp": 21}' }];
    const r = await client.chat.completions.create({ model: llamaModel, messages: history, tools: [weather], max_tokens: 12, temperature: 0 });
    // Llama 3.1's shaping (families/styles/llama.ts): its tool system text, the tool block before the first user text, the call as JSON, the result in a tool turn.
    const shaped = [
      { role: "system", content: "Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" },
      { role: "user", content: `${llamaToolBlock([weather])}hello world` },
      { role: "assistant", content: llamaCall(call) },
      { role: "tool", content: '{"temp": 21}' },
    ];
    const want = await direct.chat(shaped, { max_tokens: 12 });
    expect(r.usage.prompt_tokens).toBe(want.prompt);
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage.completion_tokens).toBe(want.completion);
  });
});

/** The reply's tokens are its text, each the most likely (greedy), with `top` alternatives most likely first. */
function expectGreedyLogprobs(entries: TokenLogprob[], text: string, top: number): void {
  expect(entries.map((e) => e.token).join("")).toBe(text);
  for (const e of entries) {
    expect(e.logprob).toBeLessThanOrEqual(0);
    expect(e.bytes).toEqual([...new TextEncoder().encode(e.token)]);
    expect(e.top_logprobs.length).toBe(top);
    if (top === 0) continue;
    expect(e.top_logprobs[0]).toMatchObject({ token: e.token });
    expect(e.top_logprobs[0].logprob).toBeCloseTo(e.logprob, 6);
    const ranked = e.top_logprobs.map((t) => t.logprob);
    expect(ranked).toEqual([...ranked].sort((a, b) => b - a));
  }
}

describe("logprobs on a GGUF model: llama.cpp's own probabilities", () => {
  it("chat, not streamed: each token with its logprob and top_logprobs, as llama.cpp reports them", async () => {
    const r = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3 });
    const want = await direct.chat(messages, { max_tokens: 12, logprobs: true, top_logprobs: 3 });
    const entries = r.choices[0].logprobs?.content ?? [];
    expect(entries.length).toBe(r.usage.completion_tokens);
    expectGreedyLogprobs(entries, r.choices[0].message.content ?? "", 3);
    expect(want.logprobs?.length).toBe(entries.length);
    entries.forEach((e, i) => {
      expect(e.token).toBe(want.logprobs![i].token);
      expect(e.logprob).toBeCloseTo(want.logprobs![i].logprob, 5);
      expect(e.top_logprobs.map((t) => t.token)).toEqual(want.logprobs![i].top_logprobs.map((t) => t.token));
    });
  });

  it("chat, streamed: the chunks' logprobs are the same tokens; top_logprobs 0 gives none of the alternatives", async () => {
    const stream = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, logprobs: true, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const entries = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expectGreedyLogprobs(entries, text, 0);
    const whole = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 2 });
    const wholeEntries = whole.choices[0].logprobs?.content ?? [];
    expect(entries.map((e) => e.token)).toEqual(wholeEntries.map((e) => e.token));
    // The same forward passes; float32 sums may differ in the last bit between runs.
    entries.forEach((e, i) => expect(e.logprob).toBeCloseTo(wholeEntries[i].logprob, 5));
  });

  it("a ChatML-family record (our prompt, sent as a raw completion) and raw /completions report them too", async () => {
    const chatml = createClient({ models: [tinyRecord("tiny-gguf-qwen3-lp", { family: "qwen3" })] });
    try {
      const r = await chatml.chat.completions.create({ model: "tiny-gguf-qwen3-lp", messages, max_tokens: 10, temperature: 0, logprobs: true, top_logprobs: 2 });
      expect(r.choices[0].logprobs?.content?.length).toBe(r.usage.completion_tokens);
      expectGreedyLogprobs(r.choices[0].logprobs?.content ?? [], r.choices[0].message.content ?? "", 2);
    } finally {
      chatml.terminate();
    }
    const raw = await client.completions.create({ model, prompt: "hello world the", max_tokens: 8, temperature: 0, logprobs: 2 });
    const lp = raw.choices[0].logprobs!;
    expect(lp.tokens.join("")).toBe(raw.choices[0].text);
    expect(lp.token_logprobs.length).toBe(raw.usage?.completion_tokens);
    lp.top_logprobs.forEach((alternatives, i) => {
      expect(Object.keys(alternatives).length).toBe(2);
      expect(alternatives[lp.tokens[i]]).toBeCloseTo(lp.token_logprobs[i], 6);
    });
  });
});

describe("logit_bias on a GGUF model", () => {
  it("a +100 bias on one token makes every greedy token that one, as llama.cpp does with the same bias", async () => {
    const water = wordTokenId("water");
    const free = await client.chat.completions.create({ model, messages, max_tokens: 6, temperature: 0 });
    expect(free.choices[0].message.content).not.toMatch(/^( ?water)+$/);
    const r = await client.chat.completions.create({ model, messages, max_tokens: 6, temperature: 0, logit_bias: { [water]: 100 } });
    expect(r.choices[0].message.content).toMatch(/^ ?water( water){5}$/);
    expect(r.usage.completion_tokens).toBe(6);
    expect(r.choices[0].message.content).toBe((await direct.chat(messages, { max_tokens: 6, logit_bias: { [water]: 100 } })).content);
  });

  it("a token id outside the model's vocabulary is a 400 naming logit_bias, not silently dropped", async () => {
    const error = await client.chat.completions.create({ model, messages, max_tokens: 4, logit_bias: { [TINY_VOCAB_SIZE]: 5 } }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, param: "logit_bias" });
    expect(error.message).toContain(`token ${TINY_VOCAB_SIZE}, outside`);
  });
});
