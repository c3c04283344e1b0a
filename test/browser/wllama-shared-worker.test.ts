/**
 * GGUF models in the shared worker (`createClient({ worker: "shared" })`),
 * through the real @wllama/wllama 3.8.1 in headless Chromium, on the tiny
 * generated GGUF. A SharedWorker has no Worker constructor in Chromium, so a
 * connected tab (this page's first client) starts llama.cpp's Worker for it
 * (src/engine/wllama/wllama-tab-host.ts, src/client/tab-hosted-workers.ts).
 *
 * The oracle is llama.cpp itself, run directly in this page on the same file
 * (support/tiny-gguf.ts): replies, finish reasons and usage must equal its own.
 * The last test closes the hosting client: a request in flight fails with a
 * 503 that says so, and the next one, from the other client, is hosted there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-ignore -- wllama's package `main` is missing; Vite resolves its ESM build.
import { Wllama } from "@wllama/wllama";
import { createClient, type ChatCompletionChunk, type Client } from "../../src/index.js";
import type { WllamaInstance, WllamaModule } from "../../src/engine/wllama/wllama-api.js";
import { server, startDirect, tinyRecord, wasm, type Direct } from "./support/tiny-gguf.js";

const model = "tiny-gguf-shared";
const record = tinyRecord(model);
const embedModel = "tiny-gguf-shared-embed";
const embedRecord = tinyRecord(embedModel, { model: `${server}/m/${embedModel}/tiny-embed.gguf`, model_type: 1 });
const messages = [{ role: "user" as const, content: "hello world" }];

let client: Client;
let direct: Direct;

beforeAll(async () => {
  client = createClient({ worker: "shared", models: [record, embedRecord] });
  // Connected first: this client's page hosts llama.cpp's Worker (the longest-connected tab does).
  expect((await client.workerInfo()).worker).toBe("shared");
  direct = await startDirect();
});
afterAll(async () => {
  client?.terminate();
  await direct?.instance.exit();
});

/** wllama's own chat call, with the usage fields the cached-prefix test reads. */
type DirectChat = (o: unknown) => Promise<{ choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } } }>;

describe("a GGUF model in the shared worker, on the real llama.cpp", () => {
  it("a non-streamed chat: llama.cpp's reply and exact usage, on one thread", async () => {
    const r = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
    const want = await direct.chat(messages, { max_tokens: 24 });
    expect(want.prompt).toBeGreaterThan(5);
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.choices[0].finish_reason).toBe(want.finish);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion, total_tokens: want.prompt + want.completion });
    // A SharedWorker is not cross-origin isolated: what the loaded wllama reports is one thread.
    expect((await client.models.status(model)).engine).toMatchObject({ threads: "single", n_threads: 1, threads_source: "wllama" });
  });

  it("streamed: the deltas make the same reply, usage in the last chunk", async () => {
    const stream = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const want = await direct.chat(messages, { max_tokens: 24 });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(want.content);
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "").length).toBeGreaterThan(1);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe(want.finish);
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });

  it("a forced tool call parses, its arguments valid for the function's schema", async () => {
    const schema = { type: "object", properties: { mode: { enum: ["fast", "slow"] }, on: { type: "boolean" } }, required: ["mode", "on"], additionalProperties: false };
    const tools = [{ type: "function" as const, function: { name: "set_mode", description: "Sets the mode.", parameters: schema } }];
    const free = await client.chat.completions.create({ model, messages, tools, max_tokens: 60, temperature: 0 });
    expect(free.choices[0].message.tool_calls ?? []).toEqual([]);
    const r = await client.chat.completions.create({ model, messages, tools, tool_choice: { type: "function", function: { name: "set_mode" } }, parallel_tool_calls: false, max_tokens: 200, temperature: 0 });
    expect(r.choices[0].finish_reason).toBe("tool_calls");
    const calls = r.choices[0].message.tool_calls ?? [];
    expect(calls.length).toBe(1);
    expect(calls[0].type === "function" && calls[0].function.name).toBe("set_mode");
    if (calls[0].type !== "function") return;
    const args = JSON.parse(calls[0].function.arguments);
    expect(Object.keys(args)).toEqual(["mode", "on"]);
    expect(["fast", "slow"]).toContain(args.mode);
    expect(typeof args.on).toBe("boolean");
  });

  it("abort stops a running stream; the engine then serves the next request exactly", async () => {
    // This sampled reply runs far past the abort point without the engine's abort (else the test proves nothing).
    expect((await direct.chat(messages, { max_tokens: 300, temperature: 1, seed: 3 })).completion).toBeGreaterThan(100);
    const before = await client.stats();
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ model, messages, max_tokens: 1500, temperature: 1, seed: 3, stream: true }, { signal: controller.signal });
    let deltas = 0;
    const ended = await (async () => {
      try {
        for await (const chunk of stream) {
          if (chunk.choices[0]?.delta.content) deltas++;
          if (deltas === 3) controller.abort();
        }
        return "ended";
      } catch (error) {
        return (error as Error).name;
      }
    })();
    expect(["AbortError", "ended"]).toContain(ended);
    expect(deltas).toBeLessThan(50);
    const stats = await client.stats();
    const r = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
    const want = await direct.chat(messages, { max_tokens: 24 });
    expect(r.choices[0].message.content).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
    // The aborted generation stopped inside llama.cpp, far short of its 1500 tokens.
    expect(stats.generated_tokens - before.generated_tokens).toBeLessThan(100);
  });

  it("a second turn reuses llama.cpp's cached prefix: cached_tokens as llama.cpp counts them", async () => {
    const first = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0 });
    const turn2 = [...messages, { role: "assistant" as const, content: first.choices[0].message.content ?? "" }, { role: "user" as const, content: "the water" }];
    const r = await client.chat.completions.create({ model, messages: turn2, max_tokens: 8, temperature: 0 });
    // The same two turns on wllama directly (its slot holds the first turn as ours does).
    const call = (direct.instance as unknown as { createChatCompletion: DirectChat }).createChatCompletion.bind(direct.instance);
    await call({ messages, max_tokens: 12, temperature: 0 });
    const want = await call({ messages: turn2, max_tokens: 8, temperature: 0 });
    expect(want.usage.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
    expect(r.usage.prompt_tokens).toBe(want.usage.prompt_tokens);
    expect(r.usage.prompt_tokens_details?.cached_tokens).toBe(want.usage.prompt_tokens_details?.cached_tokens);
    expect(r.choices[0].message.content).toBe(want.choices[0].message.content);
  });

  it("a raw completion takes the prompt as is", async () => {
    const r = await client.completions.create({ model, prompt: "hello world the", max_tokens: 8, temperature: 0 });
    const want = await direct.raw("hello world the", { max_tokens: 8 });
    expect(r.choices[0].text).toBe(want.content);
    expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
  });

  it("an embedding GGUF beside the chat GGUF (a second llama.cpp Worker in the tab): llama.cpp's own vectors and token count", async () => {
    const oracle: WllamaInstance = new (Wllama as WllamaModule["Wllama"])({ default: wasm }, { suppressNativeLog: true, logger: { debug: () => {}, log: () => {}, warn: console.warn, error: console.error } });
    try {
      await oracle.loadModel([await (await fetch(`${server}/m/direct/tiny-embed.gguf`)).blob()], { n_ctx: 2048, embeddings: true });
      const inputs = ["hello world", "the water is long"];
      const r = await client.embeddings.create({ model: embedModel, input: inputs });
      const want = [await oracle.createEmbedding({ input: [inputs[0]] }), await oracle.createEmbedding({ input: [inputs[1]] })];
      expect(r.usage.prompt_tokens).toBe(want[0].usage.prompt_tokens + want[1].usage.prompt_tokens);
      r.data.forEach((d, i) => {
        const expected = want[i].data[0].embedding as number[];
        expect((d.embedding as number[]).length).toBe(64);
        (d.embedding as number[]).forEach((x, k) => expect(x).toBeCloseTo(expected[k], 5));
      });
      expect(r.data[0].embedding).not.toEqual(r.data[1].embedding);
      // The chat model stayed loaded beside it, in its own Worker.
      const chat = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
      expect(chat.choices[0].message.content).toBe((await direct.chat(messages, { max_tokens: 8 })).content);
    } finally {
      await oracle.exit();
    }
  });

  it("the hosting client closes mid-stream: the other tab's request fails with a 503 that says so, and its next request is hosted by it", async () => {
    const other = createClient({ worker: "shared", models: [record, embedRecord] });
    try {
      expect((await other.workerInfo()).tabs).toBeGreaterThanOrEqual(2);
      // `client` connected first and hosts llama.cpp's Worker; this sampled reply runs far past where it closes.
      const stream = await other.chat.completions.create({ model, messages, max_tokens: 1500, temperature: 1, seed: 3, stream: true });
      let deltas = 0;
      const error = await (async () => {
        try {
          for await (const chunk of stream) {
            if (chunk.choices[0]?.delta.content) deltas++;
            if (deltas === 3) client.terminate();
          }
          return null;
        } catch (caught) {
          return caught as { status?: number; code?: string; message: string };
        }
      })();
      expect(deltas).toBeGreaterThanOrEqual(3);
      expect(deltas).toBeLessThan(1500);
      expect(error).toMatchObject({ status: 503, code: "gguf_host_tab_closed" });
      expect(error?.message).toMatch(/tab hosting the GGUF engine of tiny-gguf-shared closed/);
      // The next request loads the model again, in the tab that is left, and answers exactly.
      const r = await other.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
      const want = await direct.chat(messages, { max_tokens: 24 });
      expect(r.choices[0].message.content).toBe(want.content);
      expect(r.usage).toMatchObject({ prompt_tokens: want.prompt, completion_tokens: want.completion });
    } finally {
      other.terminate();
    }
  });
});
