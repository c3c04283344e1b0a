/**
 * The unchanged OpenAI SDK (v6, Node) on `client.fetch`: what apps written
 * against a hosted endpoint do, with the local scripted model underneath.
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { RunnableToolFunctionWithParse } from "openai/lib/RunnableFunction";
import { ApiError, createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient, user } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** An SDK on `client.fetch`, counting the HTTP attempts it makes (retries included). */
function sdkOn(client: Client, options: { maxRetries?: number } = {}) {
  const attempts: string[] = [];
  const openai = new OpenAI({
    baseURL: BASE,
    apiKey: "local",
    maxRetries: options.maxRetries,
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      attempts.push(`${init?.method} ${String(url)}`);
      return client.fetch(url, init);
    },
  });
  return { openai, attempts };
}

function setup(replies: ScriptedEngineOptions["replies"], options: Parameters<typeof scriptedClient>[1] = {}) {
  const { client, engine } = scriptedClient(replies, options);
  return { client, engine, ...sdkOn(client) };
}

describe("openai v6: completions", () => {
  it("create() returns the completion, with the request id", async () => {
    const { openai } = setup(["Hello from the GPU."]);
    const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] });
    expect(completion.choices[0].message).toMatchObject({ role: "assistant", content: "Hello from the GPU." });
    expect(completion.choices[0].finish_reason).toBe("stop");
    expect(completion.usage?.completion_tokens).toBe(5);
    expect(completion._request_id).toMatch(/^req_/);
  });

  it("create({ stream: true }) yields every chunk, usage last", async () => {
    const { openai } = setup(["One two three."]);
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("count")], stream: true, stream_options: { include_usage: true } });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("One two three.");
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBe(4);
  });

  it(".stream() helper gives the final message and content events", async () => {
    const { openai, attempts } = setup(["Streaming helper works."]);
    const runner = openai.chat.completions.stream({ model: "Qwen3-0.6B", messages: [user("hi")] });
    const deltas: string[] = [];
    runner.on("content", (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message).toMatchObject({ role: "assistant", content: "Streaming helper works." });
    expect(final.choices[0].finish_reason).toBe("stop");
    expect(deltas.join("")).toBe("Streaming helper works.");
    expect(attempts).toEqual([`POST ${BASE}/chat/completions`]);
  });

  it("chat.completions.parse() with a json_schema: the schema constrains decoding, message.parsed is the object", async () => {
    const { openai, engine } = setup(['{"city": "Paris", "population": 2100000}']);
    const schema = { type: "object", properties: { city: { type: "string" }, population: { type: "number" } }, required: ["city", "population"], additionalProperties: false };
    const completion = await openai.chat.completions.parse({
      model: "Qwen2.5-0.5B-Instruct",
      messages: [user("Largest city of France?")],
      response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: "Paris", population: 2100000 });
    expect(engine.requests[0].responseFormat).toEqual({ type: "json_object", schema: JSON.stringify(schema) });
  });

  it("models.list() and models.retrieve()", async () => {
    const { openai } = setup([]);
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toContain("Qwen3-0.6B-q4f32_1-MLC");
    const model = await openai.models.retrieve("Qwen/Qwen3-0.6B");
    expect(model).toMatchObject({ id: "Qwen/Qwen3-0.6B", object: "model" });
  });
});

describe("openai v6: tools", () => {
  const replyFor = (request: { messages: { role: string; content: unknown }[] }) =>
    request.messages.some((m) => m.role === "tool" || String(m.content).includes("<tool_response>"))
      ? "The sum is 5."
      : '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';

  const addTool: RunnableToolFunctionWithParse<{ a: number; b: number }> = {
    type: "function",
    function: {
      name: "add",
      description: "Adds two numbers.",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      parse: (input: string) => JSON.parse(input) as { a: number; b: number },
      function: ({ a, b }: { a: number; b: number }) => String(a + b),
    },
  };

  for (const stream of [false, true]) {
    it(`runTools() round trip (${stream ? "streaming" : "non-streaming"})`, async () => {
      const { openai, engine, attempts } = setup(replyFor);
      const runner = openai.chat.completions.runTools({ model: "Qwen2.5-0.5B-Instruct", messages: [user("What is 2 + 3?")], tools: [addTool], stream } as never);
      const content = await (runner as { finalContent(): Promise<string | null> }).finalContent();
      expect(content).toBe("The sum is 5.");
      expect(attempts).toHaveLength(2);
      const second = engine.requests[1].messages.map((m) => JSON.stringify(m.content)).join("\n");
      expect(second).toContain("5");
      expect(second).toContain("add");
    });
  }
});

describe("openai v6: stream helpers keep only the last reasoning fragment (issue 19, item 5)", () => {
  const RAW = '<think>\nThe user wants two plus three, so I call add.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';
  const reply = (request: { messages: { role: string; content: unknown }[] }) => (request.messages.some((m) => m.role === "tool" || String(m.content).includes("<tool_response>")) ? "The sum is 5." : RAW);
  const add = {
    type: "function" as const,
    function: {
      name: "add",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      parse: (input: string) => JSON.parse(input) as { a: number; b: number },
      function: ({ a, b }: { a: number; b: number }) => String(a + b),
    },
  };
  const assistantText = (engine: { requests: { messages: { role: string; content: unknown }[] }[] }, turn: number) =>
    engine.requests[turn].messages.filter((m) => m.role === "assistant").map((m) => String(m.content));

  it(".stream(): the message sent back with its one-fragment reasoning restores the raw reply and reuses the KV cache", async () => {
    const { openai, engine } = setup(reply);
    const messages = [user("What is 2 + 3?")];
    const runner = openai.chat.completions.stream({ model: "Qwen3-0.6B", messages, tools: [{ type: "function", function: { name: "add", parameters: add.function.parameters } }], stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0].message as typeof final.choices[0]["message"] & { reasoning_content?: string };
    // The artifact: Object.assign kept the last delta's reasoning_content only.
    expect(message.reasoning_content).toBeTruthy();
    expect("The user wants two plus three, so I call add.".endsWith(message.reasoning_content!.trim())).toBe(true);
    expect(message.reasoning_content!.trim()).not.toBe("The user wants two plus three, so I call add.");
    const second = await openai.chat.completions.create({
      model: "Qwen3-0.6B",
      tools: [{ type: "function", function: { name: "add", parameters: add.function.parameters } }],
      messages: [...messages, message, { role: "tool", tool_call_id: message.tool_calls![0].id, content: "5" }] as never,
    });
    expect(assistantText(engine, 1)).toEqual([RAW]);
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBe(final.usage!.prompt_tokens + final.usage!.completion_tokens - 1);
  });

  it("runTools() streaming: the helper's second request gets the raw reply", async () => {
    const { openai, engine } = setup(reply);
    const runner = openai.chat.completions.runTools({ model: "Qwen3-0.6B", messages: [user("What is 2 + 3?")], tools: [add], stream: true } as never);
    expect(await (runner as { finalContent(): Promise<string | null> }).finalContent()).toBe("The sum is 5.");
    expect(assistantText(engine, 1)).toEqual([RAW]);
  });

  it("a reasoning that is neither the whole nor the last fragment is an edit: not restored", async () => {
    const { openai, engine } = setup(reply);
    const messages = [user("What is 2 + 3?")];
    const final = await openai.chat.completions.stream({ model: "Qwen3-0.6B", messages, tools: [{ type: "function", function: { name: "add", parameters: add.function.parameters } }] }).finalChatCompletion();
    const message = { ...final.choices[0].message, reasoning_content: "I will guess." };
    await openai.chat.completions.create({
      model: "Qwen3-0.6B",
      tools: [{ type: "function", function: { name: "add", parameters: add.function.parameters } }],
      messages: [...messages, message, { role: "tool", tool_call_id: message.tool_calls![0].id, content: "5" }] as never,
    });
    expect(assistantText(engine, 1)[0]).not.toContain("so I call add");
  });
});

describe("openai v6: abort", () => {
  it("a user signal aborts a non-streaming request with APIUserAbortError, and the next request runs", async () => {
    const { openai, attempts } = setup((r) => (r.sampling.max_tokens === 2 ? "ok then" : words(300)), { tokenDelayMs: 2 });
    const controller = new AbortController();
    const pending = openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")] }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(attempts).toHaveLength(1);
    const next = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("short")], max_tokens: 2 });
    expect(next.choices[0].message.content).toBe("ok then");
  });

  it("a user signal aborts a stream: iteration ends, generation stops", async () => {
    const { client, openai, engine } = setup(() => words(500), { tokenDelayMs: 1 });
    const controller = new AbortController();
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")], stream: true }, { signal: controller.signal });
    let n = 0;
    const outcome = await (async () => {
      for await (const _chunk of stream) if (++n === 3) controller.abort();
      return "ended";
    })().catch((error) => error);
    // the body errors with AbortError like a native fetch body; the SDK ends the loop quietly
    expect(outcome).toBe("ended");
    expect(n).toBeLessThan(20);
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    expect(engine.requests).toHaveLength(1);
  });

  it("break out of a stream stops generation; the next request runs normally", async () => {
    const { client, openai } = setup((r) => (r.sampling.max_tokens === 3 ? "fresh reply here" : words(500)), { tokenDelayMs: 1 });
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")], stream: true });
    let n = 0;
    for await (const _chunk of stream) if (++n === 4) break;
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("again")], max_tokens: 3 });
    expect(next.choices[0].message.content).toBe("fresh reply here");
  });
});

describe("openai v6: errors and retries", () => {
  it("400 → BadRequestError with param, not retried", async () => {
    const { openai, attempts } = setup([]);
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")], temperature: 9 }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: "temperature", type: "invalid_request_error" });
    expect(error.requestID).toMatch(/^req_/);
    expect(attempts).toHaveLength(1);
  });

  it("404 unknown model → NotFoundError, not retried", async () => {
    const { openai, attempts } = setup([]);
    const error = await openai.chat.completions.create({ model: "no-such-model", messages: [user("hi")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe("model_not_found");
    expect(attempts).toHaveLength(1);
  });

  it("429 queue full → retried after retry-after-ms, then served", async () => {
    // One generation at a time, no queue: a second request while one runs is a 429.
    const { client, engine } = scriptedClient((r) => (r.messages[0].content === "long" ? words(20) : "served after retry"), { tokenDelayMs: 10, maxQueue: 0, batch: false });
    const { openai, attempts } = sdkOn(client);
    const blocker = client.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")] });
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: true });
    const started = performance.now();
    const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("short")] });
    const waited = performance.now() - started;
    await blocker;
    expect(completion.choices[0].message.content).toBe("served after retry");
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    // the first 429 asked for retry-after-ms ≥ 100 (the host's estimate); the SDK waited for it
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(engine.requests).toHaveLength(2);
  });

  it("429 with retries exhausted → RateLimitError", async () => {
    // One generation at a time, no queue: a second request while one runs is a 429.
    const { client } = scriptedClient(() => words(400), { tokenDelayMs: 5, maxQueue: 0, batch: false });
    const { openai, attempts } = sdkOn(client, { maxRetries: 0 });
    const stop = new AbortController();
    const blocker = client.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")] }, { signal: stop.signal });
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: true });
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("x")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe("queue_full");
    expect(attempts).toHaveLength(1);
    stop.abort();
    await blocker.catch(() => undefined);
  });

  it("503 no WebGPU → InternalServerError, not retried (x-should-retry: false)", async () => {
    const engine = Object.assign(createScriptedEngine({ replies: ["never"] }), { requiresGpu: true });
    const client = createClient({ engine, worker: false });
    const { openai, attempts } = sdkOn(client);
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 503, code: "webgpu_unavailable" });
    expect(attempts).toHaveLength(1);
  });

  it("503 device lost → retried, and the retry is served", async () => {
    const lost = new ApiError({ status: 503, code: "device_lost", message: "The GPU device was lost." });
    const { openai, attempts } = setup([{ text: "x", error: lost, errorAfterTokens: 0 }, "Recovered."]);
    const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] });
    expect(completion.choices[0].message.content).toBe("Recovered.");
    expect(attempts).toHaveLength(2);
  });

  it("500 internal error → InternalServerError, not retried", async () => {
    const { openai, attempts } = setup([]);
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 500, code: "scripted_engine_exhausted" });
    expect(attempts).toHaveLength(1);
  });

  it("504 timeout → retried (hosted APIs retry timeouts too)", async () => {
    const { client } = scriptedClient(() => words(200), { tokenDelayMs: 5, timeoutMs: 40 });
    const { openai, attempts } = sdkOn(client, { maxRetries: 1 });
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 504, type: "timeout_error" });
    expect(attempts).toHaveLength(2);
  });

  it("an error after the stream started → APIError from the iterator", async () => {
    const lost = new ApiError({ status: 503, code: "device_lost", message: "GPU lost" });
    const { openai } = setup([{ text: "a b c d", error: lost, errorAfterTokens: 2 }]);
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")], stream: true });
    let text = "";
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e) => e);
    expect(text).toBe("a b");
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ message: "GPU lost", code: "device_lost" });
  });
});
