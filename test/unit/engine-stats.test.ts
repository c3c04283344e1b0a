/**
 * `client.stats()` (issue 38, item 5): engine-wide forward passes, tokens and
 * rows per pass since the client started, and whether the loaded model
 * batches. A batching engine reports its shared passes; an engine that decodes
 * one sequence at a time is counted from each generation's own figures, with
 * the same counts a batching engine gives a request that runs alone.
 */
import { describe, expect, it } from "vitest";
import { createClient, type Client, type EngineStats } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { createWebLlmEngine, type WebLlmModule } from "../../src/engine/webllm/webllm-engine.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../src/protocol/types.js";
import type { Completion } from "../../src/protocol/completions-types.js";
import { user } from "./support/client.js";

const model = "Qwen3-0.6B";
/** Each question gets its own reply: `<q>0 <q>1 …`, `n` words. */
const replyTo = (n: number) => (request: { messages: Array<{ content: unknown }>; rawPrompt?: string }) => {
  const q = request.rawPrompt ?? String(request.messages.at(-1)!.content);
  return Array.from({ length: n }, (_, i) => `${q}${i}`).join(" ");
};

/** A client over the scripted engine: one generation at a time unless `batch` (the engine's default is to batch, 8 rows). */
function statsClient(options: { batch?: boolean; speculative?: boolean; words?: number } = {}): Client {
  const engine = createScriptedEngine({ replies: replyTo(options.words ?? 30), tokenDelayMs: 1, batch: options.batch ? { maxRows: 8 } : false });
  return createClient({ engine, worker: false, speculative: options.speculative ?? false });
}

const chat = (client: Client, q: string, extra: Record<string, unknown> = {}) => client.chat.completions.create({ model, messages: [user(q)], ...extra }) as Promise<ChatCompletion>;

/** The counts a few replies add up to, from their own `usage` and `x_webgpu` (a reply that ended by itself sampled its end-of-text token too). */
function summed(replies: ChatCompletion[]) {
  return {
    generated_tokens: replies.reduce((n, r) => n + r.usage.completion_tokens + (r.choices[0].finish_reason === "stop" ? 1 : 0), 0),
    prefill_tokens: replies.reduce((n, r) => n + r.x_webgpu.prefill_tokens, 0),
  };
}

async function streamed(client: Client, q: string): Promise<{ text: string; last: ChatCompletionChunk | null }> {
  const s = await client.chat.completions.create({ model, messages: [user(q)], stream: true, stream_options: { include_usage: true }, max_tokens: 64 });
  const out = { text: "", last: null as ChatCompletionChunk | null };
  for await (const chunk of s) {
    out.last = chunk;
    out.text += chunk.choices[0]?.delta.content ?? "";
  }
  return out;
}

describe("client.stats()", () => {
  it("a fresh client reports zeros, and why its engine decodes one sequence at a time", async () => {
    expect(await statsClient().stats()).toEqual({
      forward_passes: 0,
      generated_tokens: 0,
      prefill_tokens: 0,
      mean_rows: 0,
      max_rows: 0,
      batching: { available: false, model: null, row_cap: 1, reason: "scripted engine without the batch option" },
    } satisfies EngineStats);
    expect((await statsClient({ batch: true }).stats()).batching).toEqual({ available: true, model: null, row_cap: 8, reason: null });
    const webllm = createClient({ engine: createWebLlmEngine({ webllm: {} as WebLlmModule }), worker: false });
    expect((await webllm.stats()).batching.reason).toBe("the web-llm engine decodes one sequence at a time here: batching is off (createClient({ batching }))");
    const batching = createClient({ engine: createWebLlmEngine({ webllm: {} as WebLlmModule, batching: { maxRows: 4 } }), worker: false });
    expect((await batching.stats()).batching.reason).toBe("the web-llm engine decodes one sequence at a time here: no chat model is loaded");
    // The default engine (web-llm) starts with the first request: until then there is none to describe.
    const fresh = await createClient({ worker: false }).stats();
    expect(fresh).toMatchObject({ forward_passes: 0, batching: { available: false, model: null } });
    expect(fresh.batching.reason).toMatch(/no engine has started/);
  });

  it("one at a time, speculation off: a request alone takes one pass per token (a reply that ends itself: one more for its end)", async () => {
    const client = statsClient();
    const cut = await chat(client, "a", { max_tokens: 20 });
    expect(cut.usage.completion_tokens).toBe(20);
    expect(await client.stats()).toMatchObject({ forward_passes: 20, generated_tokens: 20, prefill_tokens: cut.x_webgpu.prefill_tokens, mean_rows: 1, max_rows: 1 });
    const whole = await chat(client, "b");
    expect(whole.choices[0].finish_reason).toBe("stop");
    const stats = await client.stats();
    expect(stats.forward_passes).toBe(20 + whole.usage.completion_tokens + 1);
    expect(stats).toMatchObject({ ...summed([cut, whole]), mean_rows: 1, max_rows: 1 });
    expect(stats.batching).toMatchObject({ available: false, row_cap: 1 });
    expect(stats.batching.model).toMatch(/^Qwen3-0\.6B-/);
  });

  it("counts the same for requests run alone whether the engine batches or not", async () => {
    const counts: EngineStats[] = [];
    for (const batch of [false, true]) {
      const client = statsClient({ batch });
      await chat(client, "a", { max_tokens: 12 });
      await chat(client, "b");
      // The same conversation again: its prompt comes from the prompt cache, only the rest is prefilled.
      const first = await chat(client, "c", { max_tokens: 5 });
      await chat(client, "c", { messages: [user("c"), { role: "assistant", content: first.choices[0].message.content }, user("more")], max_tokens: 5 });
      await client.completions.create({ model, prompt: "raw", max_tokens: 7 });
      counts.push(await client.stats());
    }
    const [oneAtATime, batched] = counts;
    // Completion tokens, and the end-of-text token of the one reply that ended by itself.
    expect(oneAtATime.generated_tokens).toBe(12 + 30 + 5 + 5 + 7 + 1);
    expect({ ...oneAtATime, batching: null }).toEqual({ ...batched, batching: null });
    expect(batched.batching.available).toBe(true);
  });

  it("with speculation on, a pass verifies a draft: passes are the prefill plus x_webgpu.decode_passes", async () => {
    const client = statsClient({ speculative: true });
    const text = replyTo(30)({ messages: [{ content: "p" }] });
    const reply = await chat(client, "p", { prediction: { type: "content", content: text } });
    expect(reply.x_webgpu.decode_passes).toBeLessThan(reply.usage.completion_tokens / 2);
    expect(await client.stats()).toMatchObject({ forward_passes: 1 + reply.x_webgpu.decode_passes, generated_tokens: reply.usage.completion_tokens + 1 });
  });

  it("with the batch option and speculation on, a prediction request shares its verify passes with plain streams, and generated_tokens counts its accepted drafts", async () => {
    const text = replyTo(60)({ messages: [{ content: "p" }] });
    const run = async (batch: boolean) => {
      const client = statsClient({ batch, speculative: true, words: 60 });
      await client.models.load(model);
      const replies = await Promise.all([
        chat(client, "p", { prediction: { type: "content", content: text }, max_tokens: 100 }),
        chat(client, "q", { max_tokens: 40 }),
        chat(client, "r", { max_tokens: 40 }),
      ]);
      return { replies, stats: await client.stats() };
    };
    const batched = await run(true);
    const [predicted] = batched.replies;
    expect(predicted.choices[0].message.content).toBe(text);
    expect(predicted.usage.completion_tokens_details?.accepted_prediction_tokens).toBeGreaterThan(50);
    // its verify passes were steps shared with the plain streams
    expect(predicted.x_webgpu.decode_passes).toBeLessThan(predicted.usage.completion_tokens / 3);
    expect(predicted.x_webgpu.batch!.max_rows).toBe(3);
    // tokens generated, not passes: each reply's tokens (and the end-of-text the prediction's reply sampled)
    expect(batched.stats.generated_tokens).toBe(summed(batched.replies).generated_tokens);
    const accepted = batched.replies.reduce((n, r) => n + r.x_webgpu.accepted_draft_tokens, 0);
    expect(accepted).toBeGreaterThan(40);
    expect(batched.stats.forward_passes).toBeLessThan(batched.stats.generated_tokens - accepted + 3);
    // the same counts of tokens as the three run one at a time (whose tally adds up each generation's sampled tokens)
    const oneAtATime = await run(false);
    expect(oneAtATime.replies.map((r) => r.choices[0].message.content)).toEqual(batched.replies.map((r) => r.choices[0].message.content));
    expect(batched.stats.generated_tokens).toBe(oneAtATime.stats.generated_tokens);
    expect(batched.stats.forward_passes).toBeLessThan(oneAtATime.stats.forward_passes);
  });

  it("a stop string that cuts a verify pass's accepted drafts: the same usage, x_webgpu and stats with the batch option or one at a time", async () => {
    const text = replyTo(30)({ messages: [{ content: "s" }] });
    const run = async (batch: boolean) => {
      const client = statsClient({ batch, speculative: true });
      // The prediction drafts the whole reply; the stop string ends it after s3, inside a verify pass's accepted drafts.
      const reply = await chat(client, "s", { prediction: { type: "content", content: text }, stop: [" s4"] });
      return { reply, stats: await client.stats() };
    };
    const oneAtATime = await run(false);
    const batched = await run(true);
    expect(oneAtATime.reply.choices[0].message.content).toBe("s0 s1 s2 s3");
    expect(oneAtATime.reply.x_webgpu.accepted_draft_tokens, "the stop cut accepted drafts").toBeGreaterThan(0);
    expect(oneAtATime.reply.x_webgpu.decode_passes).toBeLessThan(oneAtATime.reply.usage.completion_tokens - 1);
    // tokens generated up to and including the one that completed the stop; no end-of-text was sampled
    expect(batched.stats.generated_tokens).toBe(batched.reply.usage.completion_tokens);
    expect(oneAtATime.stats.generated_tokens).toBe(oneAtATime.reply.usage.completion_tokens);
    expect(oneAtATime.reply.usage).toEqual(batched.reply.usage);
    const counts = (r: ChatCompletion) => ({ decode_passes: r.x_webgpu.decode_passes, draft_tokens: r.x_webgpu.draft_tokens, accepted_draft_tokens: r.x_webgpu.accepted_draft_tokens });
    expect(counts(oneAtATime.reply)).toEqual(counts(batched.reply));
    expect({ ...oneAtATime.stats, batching: null }).toEqual({ ...batched.stats, batching: null });
  });

  it("an aborted generation's passes count", async () => {
    const client = statsClient({ words: 200 });
    const controller = new AbortController();
    const s = await client.chat.completions.create({ model, messages: [user("x")], stream: true }, { signal: controller.signal });
    let seen = 0;
    try {
      for await (const chunk of s) {
        if (chunk.choices[0]?.delta.content && ++seen === 10) controller.abort();
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") throw error;
    }
    const stats = await until(() => client.stats(), (s) => s.generated_tokens > 0);
    expect(stats.generated_tokens).toBeGreaterThanOrEqual(10);
    expect(stats.generated_tokens).toBeLessThan(200);
    expect(stats.forward_passes).toBe(stats.generated_tokens);
  });

  it("with the batch option, four concurrent 64-token streams take ≤ 1.25 × 64 + 8 passes, ≥ 2 rows each on average", async () => {
    const client = statsClient({ batch: true, words: 200 });
    await client.models.load(model);
    const replies = await Promise.all(["a", "b", "c", "d"].map((q) => streamed(client, q)));
    const stats = await client.stats();
    expect(stats.generated_tokens).toBe(4 * 64);
    expect(stats.forward_passes).toBeLessThanOrEqual(1.25 * 64 + 8);
    expect(stats.mean_rows).toBeGreaterThanOrEqual(2);
    expect(stats.max_rows).toBe(4);
    expect(stats.prefill_tokens).toBe(replies.reduce((n, r) => n + r.last!.x_webgpu!.prefill_tokens, 0));
    expect(stats.batching).toMatchObject({ available: true, row_cap: 8, reason: null });
    expect(stats.batching.model).toMatch(/^Qwen3-0\.6B/);
  });

  it("one at a time the same four streams take ≥ 256 passes, one row each", async () => {
    const client = statsClient({ words: 200 });
    await Promise.all(["a", "b", "c", "d"].map((q) => streamed(client, q)));
    expect(await client.stats()).toMatchObject({ forward_passes: 256, generated_tokens: 256, mean_rows: 1, max_rows: 1 });
  });
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
