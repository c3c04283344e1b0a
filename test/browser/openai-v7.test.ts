/**
 * The unchanged OpenAI SDK v7 in the page, on `client.fetch` of a client whose
 * host runs in the default worker (scripted engine, no download, no GPU work).
 */
import { afterEach, describe, expect, it } from "vitest";
import OpenAI from "openai-v7";
import { createClient, interceptFetch, type Client } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const BASE = "http://localhost.webgpu/v1";
const user = (content: string) => ({ role: "user" as const, content });
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

let clients: Client[] = [];
afterEach(() => {
  for (const client of clients) client.terminate();
  clients = [];
});

function setup(replies: string[], options: { tokenDelayMs?: number; maxQueue?: number; maxRetries?: number; batch?: false } = {}) {
  const client = createClient({ engine: createScriptedEngine({ replies, tokenDelayMs: options.tokenDelayMs, ...(options.batch === false ? { batch: false } : {}) }), maxQueue: options.maxQueue });
  clients.push(client);
  const attempts: string[] = [];
  const openai = new OpenAI({
    baseURL: BASE,
    apiKey: "local",
    dangerouslyAllowBrowser: true,
    maxRetries: options.maxRetries,
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      attempts.push(String(url));
      return client.fetch(url, init);
    },
  });
  return { client, openai, attempts };
}

describe("openai v7 in the page, host in the worker", () => {
  it("create() and create({ stream: true })", async () => {
    const { openai } = setup(["Hello from the worker.", "One two three."]);
    const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] });
    expect(completion.choices[0].message).toMatchObject({ role: "assistant", content: "Hello from the worker." });
    expect(completion._request_id).toMatch(/^req_/);
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("count")], stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("One two three.");
    expect(usage?.completion_tokens).toBe(4);
  });

  it(".stream() helper final message, and models.list()", async () => {
    const { openai } = setup(["Final message here."]);
    const final = await openai.chat.completions.stream({ model: "Qwen3-0.6B", messages: [user("hi")] }).finalChatCompletion();
    expect(final.choices[0].message).toMatchObject({ role: "assistant", content: "Final message here." });
    expect(final.choices[0].finish_reason).toBe("stop");
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toContain("Qwen3-0.6B-q4f32_1-MLC");
  });

  it("runTools() round trip", async () => {
    const { openai, attempts } = setup(['<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>', "The sum is 5."]);
    const runner = openai.chat.completions.runTools({
      model: "Qwen2.5-0.5B-Instruct",
      messages: [user("What is 2 + 3?")],
      tools: [
        {
          type: "function",
          function: {
            name: "add",
            description: "Adds two numbers.",
            parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
            parse: (input: string) => JSON.parse(input) as { a: number; b: number },
            function: ({ a, b }: { a: number; b: number }) => String(a + b),
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe("The sum is 5.");
    expect(attempts).toHaveLength(2);
  });

  it("abort with a signal and with break; the next request runs normally", async () => {
    const { client, openai } = setup([words(400), words(400), "still fine"], { tokenDelayMs: 2 });
    const controller = new AbortController();
    const pending = openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")] }, { signal: controller.signal });
    // abort once it is generating (the worker takes a moment to start)
    await expect.poll(() => client.queueState(), { timeout: 20_000 }).toEqual({ waiting: 0, running: true });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    const stream = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")], stream: true });
    let n = 0;
    for await (const _chunk of stream) if (++n === 3) break;
    expect(n).toBe(3);
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("again")] });
    expect(next.choices[0].message.content).toBe("still fine");
  });

  it("errors map to the SDK's classes with the right retries", async () => {
    const { openai, attempts } = setup([]);
    const bad = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")], temperature: 9 }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad).toMatchObject({ status: 400, param: "temperature" });
    const missing = await openai.chat.completions.create({ model: "no-such-model", messages: [user("hi")] }).catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const exhausted = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] }).catch((e) => e);
    expect(exhausted).toBeInstanceOf(OpenAI.InternalServerError);
    expect(exhausted.code).toBe("scripted_engine_exhausted");
    expect(attempts).toHaveLength(3); // none of the three retried
  });

  it("429 from a full queue → RateLimitError after the SDK's retries", async () => {
    // One generation at a time, no queue: a second request while one runs is a 429.
    const { client, openai, attempts } = setup([words(600), words(600), words(600)], { tokenDelayMs: 5, maxQueue: 0, maxRetries: 1, batch: false });
    const controller = new AbortController();
    const blocker = client.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("long")] }, { signal: controller.signal }).catch(() => undefined);
    await expect.poll(() => client.queueState(), { timeout: 20_000 }).toEqual({ waiting: 0, running: true });
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("x")] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe("queue_full");
    expect(attempts).toHaveLength(2);
    controller.abort();
    await blocker;
  });

  it("interceptFetch: an SDK without a fetch option is served locally; the page's other requests reach the network", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: ["Intercepted."] }) });
    clients.push(client);
    const original = globalThis.fetch;
    const restore = interceptFetch(client, { baseURL: BASE });
    try {
      const openai = new OpenAI({ baseURL: BASE, apiKey: "local", dangerouslyAllowBrowser: true });
      const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] });
      expect(completion.choices[0].message.content).toBe("Intercepted.");
      const page = await fetch(location.href);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
    } finally {
      restore();
    }
    expect(globalThis.fetch).toBe(original);
  });
});
