/**
 * The library's other faces on a GGUF model, on the real llama.cpp
 * (@wllama/wllama 3.8.1) through createClient's dedicated worker in headless
 * Chromium, on the tiny generated GGUF: Responses with a function-tool round
 * trip, the Prompt API's prompt(), and the unchanged openai SDK on
 * `client.fetch`. Each reply is checked against llama.cpp run directly in
 * this page on the same file (support/tiny-gguf.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { createClient, type Client, type ResponseObject } from "../../src/index.js";
import { createPromptApi } from "../../src/prompt-api/index.js";
import { hermesCall, qwenToolBlock } from "../../src/families/styles/hermes.js";
import { startDirect, tinyRecord, type Direct } from "./support/tiny-gguf.js";

const model = "tiny-gguf-faces";
/** A small window, so a Prompt API reply (which runs until the window is full) stays short. */
const promptModel = "tiny-gguf-prompt-api";
const messages = [{ role: "user" as const, content: "hello world" }];

let client: Client;
let direct: Direct;

beforeAll(async () => {
  client = createClient({ models: [tinyRecord(model), tinyRecord(promptModel, { overrides: { context_window_size: 160 } })] });
  direct = await startDirect();
});
afterAll(async () => {
  client?.terminate();
  await direct?.instance.exit();
});

describe("Responses on a GGUF model", () => {
  const schema = { type: "object", properties: { mode: { enum: ["fast", "slow"] }, on: { type: "boolean" } }, required: ["mode", "on"], additionalProperties: false };
  const tools = [{ type: "function" as const, name: "set_mode", description: "Sets the mode.", parameters: schema, strict: false }];

  it("a function-tool round trip: the forced call, then its output by previous_response_id; the second reply is llama.cpp's for that conversation", async () => {
    const first = await client.responses.create({ model, input: "hello world", tools, tool_choice: { type: "function", name: "set_mode" }, parallel_tool_calls: false, max_output_tokens: 200, temperature: 0 });
    expect(first.status).toBe("completed");
    const call = first.output.find((item) => item.type === "function_call") as Extract<ResponseObject["output"][number], { type: "function_call" }> | undefined;
    expect(call?.name).toBe("set_mode");
    const args = JSON.parse(call!.arguments);
    expect(["fast", "slow"]).toContain(args.mode);
    expect(typeof args.on).toBe("boolean");

    const next = await client.responses.create({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call!.call_id, output: "sunny" }], tools, max_output_tokens: 12, temperature: 0 });
    expect(next.status).toMatch(/completed|incomplete/);
    // The record has no family: the prompted format (tool block in the system turn, results as a user turn), rendered by the GGUF's template.
    const chatTool = { type: "function" as const, function: { name: "set_mode", description: "Sets the mode.", parameters: schema } };
    const shaped = [
      { role: "system", content: qwenToolBlock([chatTool]) },
      { role: "user", content: "hello world" },
      { role: "assistant", content: hermesCall({ id: call!.call_id, type: "function", function: { name: call!.name, arguments: call!.arguments } }) },
      { role: "user", content: "<tool_response>\nsunny\n</tool_response>" },
    ];
    const want = await direct.chat(shaped, { max_tokens: 12 });
    expect(next.output_text).toBe(want.content);
    expect(next.usage).toMatchObject({ input_tokens: want.prompt, output_tokens: want.completion });
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });
});

describe("Responses logprobs on a GGUF model", () => {
  it("include message.output_text.logprobs: the output text's tokens with llama.cpp's logprobs and top_logprobs", async () => {
    const r = await client.responses.create({ model, input: "hello world", max_output_tokens: 8, temperature: 0, include: ["message.output_text.logprobs"], top_logprobs: 2 });
    const message = r.output.find((item) => item.type === "message") as Extract<ResponseObject["output"][number], { type: "message" }>;
    const part = message.content.find((p) => p.type === "output_text") as { text: string; logprobs?: Array<{ token: string; logprob: number; top_logprobs: Array<{ token: string; logprob: number }> }> };
    const want = await direct.chat(messages, { max_tokens: 8, logprobs: true, top_logprobs: 2 });
    expect(part.text).toBe(want.content);
    expect(part.logprobs?.map((t) => t.token)).toEqual(want.logprobs?.map((t) => t.token));
    part.logprobs?.forEach((t, i) => {
      expect(t.logprob).toBeCloseTo(want.logprobs![i].logprob, 5);
      expect(t.top_logprobs.map((a) => a.token)).toEqual(want.logprobs![i].top_logprobs.map((a) => a.token));
    });
  });
});

describe("the Prompt API on a GGUF model", () => {
  it("prompt() answers with llama.cpp's greedy reply, cut where the session's window is full", async () => {
    const LanguageModel = createPromptApi({ client, model: promptModel });
    const session = await LanguageModel.create({ samplingMode: "most-predictable" });
    try {
      const reply = await session.prompt("hello world");
      const want = await direct.chat(messages, { max_tokens: 200 });
      expect(reply.length).toBeGreaterThan(0);
      if (want.finish === "stop") expect(reply).toBe(want.content);
      else expect(want.content.startsWith(reply)).toBe(true);
      expect(session.contextUsage).toBeGreaterThan(0);
      expect(session.contextUsage).toBeLessThanOrEqual(session.contextWindow);
      expect(await LanguageModel.availability()).toBe("available");
    } finally {
      session.destroy();
    }
  });
});

describe("the unchanged openai SDK on client.fetch, on a GGUF model", () => {
  it("chat.completions.create, unary and streamed: llama.cpp's reply and exact usage", async () => {
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", dangerouslyAllowBrowser: true, maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => client.fetch(url, init) });
    const want = await direct.chat(messages, { max_tokens: 16 });
    const r = await openai.chat.completions.create({ model, messages, max_tokens: 16, temperature: 0 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
    const stream = await openai.chat.completions.create({ model, messages, max_tokens: 16, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(want.content);
    expect(usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
    const ids: string[] = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toContain(model);
  });
});
