/**
 * Continuous batching through the public API (issue 38, first slice): a
 * scripted engine with `batch` decodes concurrent generations in shared
 * steps, and the host lets up to its row cap run at once. Each reply is what
 * it is alone; `x_webgpu.batch` says how many rows shared its passes.
 */
import { describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngine } from "../../src/testing.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../src/protocol/types.js";
import { user } from "./support/client.js";

const model = "Qwen3-0.6B";
/** Each question gets its own reply: `<q>0 <q>1 …`, `n` words. */
const replyTo = (n: number) => (request: { messages: Array<{ content: unknown }> }) => {
  const q = String(request.messages.at(-1)!.content);
  return Array.from({ length: n }, (_, i) => `${q}${i}`).join(" ");
};

function batchingClient(options: { maxRows?: number; replyWords?: number; tokenDelayMs?: number; maxQueue?: number } = {}): { client: Client; engine: ScriptedEngine } {
  const engine = createScriptedEngine({ replies: replyTo(options.replyWords ?? 200), tokenDelayMs: options.tokenDelayMs ?? 1, batch: { maxRows: options.maxRows ?? 8 } });
  const client = createClient({ engine, worker: false, speculative: false, maxQueue: options.maxQueue });
  return { client, engine };
}

interface Streamed {
  text: string;
  /** Per content token: when it arrived (ms since the start of the test's clock). */
  times: number[];
  finish: string | null;
  last: ChatCompletionChunk | null;
}

async function stream(client: Client, q: string, extra: Record<string, unknown> = {}, onChunk?: (seen: number) => void, signal?: AbortSignal): Promise<Streamed> {
  const s = await client.chat.completions.create({ model, messages: [user(q)], stream: true, stream_options: { include_usage: true }, max_tokens: 64, ...extra }, signal ? { signal } : undefined);
  const out: Streamed = { text: "", times: [], finish: null, last: null };
  try {
    for await (const chunk of s) {
      out.last = chunk;
      const delta = chunk.choices[0]?.delta.content;
      if (delta) {
        out.text += delta;
        out.times.push(performance.now());
        onChunk?.(out.times.length);
      }
      out.finish = chunk.choices[0]?.finish_reason ?? out.finish;
    }
  } catch (error) {
    if ((error as Error).name !== "AbortError") throw error;
  }
  return out;
}

/** The same request on a fresh batching client, alone. */
async function alone(q: string, extra: Record<string, unknown> = {}): Promise<Streamed> {
  const { client } = batchingClient();
  return stream(client, q, extra);
}

describe("continuous batching (scripted engine with `batch`)", () => {
  it("four concurrent streamed 64-token replies share passes: ≤ 1.25 × 64 + 8 in all, each as it is alone", async () => {
    const { client, engine } = batchingClient();
    await client.models.load(model);
    const replies = await Promise.all(["a", "b", "c", "d"].map((q) => stream(client, q)));
    const counts = engine.batchCounters()!;
    expect(counts.forward_passes).toBeLessThanOrEqual(1.25 * 64 + 8);
    expect(counts.max_rows).toBe(4);
    for (const [i, q] of ["a", "b", "c", "d"].entries()) {
      const reference = await alone(q);
      expect(replies[i].text).toBe(reference.text);
      expect(replies[i].finish).toBe("length");
      expect(replies[i].last!.usage!.completion_tokens).toBe(64);
      expect(replies[i].last!.x_webgpu!.batch!.max_rows).toBeGreaterThanOrEqual(2);
    }
  });

  it("one at a time (a row cap of 1) the same four take ≥ 256 passes", async () => {
    const { client, engine } = batchingClient({ maxRows: 1 });
    const replies = await Promise.all(["a", "b", "c", "d"].map((q) => stream(client, q)));
    expect(engine.batchCounters()!.forward_passes).toBeGreaterThanOrEqual(256);
    for (const reply of replies) expect(reply.last!.x_webgpu!.batch).toMatchObject({ max_rows: 1, mean_rows: 1 });
  });

  it("a request alone costs what it costs today: one pass per token, max_rows 1", async () => {
    const { client, engine } = batchingClient({ replyWords: 30 });
    const cut = (await client.chat.completions.create({ model, messages: [user("a")], max_tokens: 20 })) as ChatCompletion;
    expect(cut.usage.completion_tokens).toBe(20);
    expect(cut.x_webgpu.batch).toEqual({ max_rows: 1, mean_rows: 1, passes: 20 });
    expect(engine.batchCounters()).toMatchObject({ forward_passes: 20, generated_tokens: 20, max_rows: 1 });
    // A reply that ends by itself: its end-of-text token takes one more pass, as today's decode_passes count it.
    const whole = (await client.chat.completions.create({ model, messages: [user("b")] })) as ChatCompletion;
    expect(whole.x_webgpu.decode_passes).toBe(whole.usage.completion_tokens);
    expect(whole.x_webgpu.batch).toEqual({ max_rows: 1, mean_rows: 1, passes: whole.usage.completion_tokens + 1 });
  });

  it("a request arriving after another streamed 20 tokens gets its first token before the other ends", async () => {
    const { client } = batchingClient();
    await client.models.load(model);
    let late: Promise<Streamed> | null = null;
    const early = stream(client, "early", {}, (seen) => {
      if (seen === 20) late = stream(client, "late");
    });
    const first = await early;
    const second = await late!;
    expect(second.times[0]).toBeLessThan(first.times.at(-1)!);
    expect(second.text).toBe((await alone("late")).text);
    expect(first.text).toBe((await alone("early")).text);
    expect(second.last!.x_webgpu!.batch!.max_rows).toBe(2);
  });

  it("an abort of one of four ends it within a few tokens; the other three are unchanged", async () => {
    const { client, engine } = batchingClient();
    await client.models.load(model);
    const controller = new AbortController();
    let abortedAt = -1;
    const replies = await Promise.all(
      ["a", "b", "c", "d"].map((q) =>
        stream(
          client,
          q,
          {},
          q === "b"
            ? (seen) => {
                if (seen === 10) {
                  abortedAt = seen;
                  controller.abort();
                }
              }
            : undefined,
          q === "b" ? controller.signal : undefined,
        ),
      ),
    );
    expect(abortedAt).toBe(10);
    expect(replies[1].times.length).toBeLessThanOrEqual(abortedAt + 2);
    for (const i of [0, 2, 3]) expect(replies[i].text).toBe((await alone(["a", "b", "c", "d"][i])).text);
    // The aborted row left the steps: the rest ran three rows wide.
    expect(engine.batchCounters()!.forward_passes).toBeLessThanOrEqual(1.25 * 64 + 8);
    expect(replies[0].last!.x_webgpu!.batch!.mean_rows).toBeLessThan(4);
  });

  it("the row cap holds: beyond it generations wait for a free row, and each is still as it is alone", async () => {
    const { client, engine } = batchingClient({ maxRows: 2, replyWords: 12 });
    const qs = ["a", "b", "c", "d", "e"];
    const results = (await Promise.all(qs.map((q) => client.chat.completions.create({ model, messages: [user(q)] })))) as ChatCompletion[];
    expect(engine.batchCounters()!.max_rows).toBe(2);
    for (const [i, q] of qs.entries()) expect(results[i].choices[0].message.content).toBe(replyTo(12)({ messages: [{ content: q }] }));
    expect(results.every((r) => r.x_webgpu.batch!.max_rows <= 2)).toBe(true);
  });

  it("stop strings and max_tokens hold per row", async () => {
    const { client } = batchingClient({ replyWords: 40 });
    await client.models.load(model);
    const [stopped, capped, plain] = (await Promise.all([
      client.chat.completions.create({ model, messages: [user("s")], stop: ["s5"] }),
      client.chat.completions.create({ model, messages: [user("m")], max_tokens: 7 }),
      client.chat.completions.create({ model, messages: [user("p")] }),
    ])) as ChatCompletion[];
    expect(stopped.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: "s0 s1 s2 s3 s4 " } });
    expect(capped.choices[0].finish_reason).toBe("length");
    expect(capped.usage.completion_tokens).toBe(7);
    expect(plain.choices[0].message.content).toBe(replyTo(40)({ messages: [{ content: "p" }] }));
    expect(plain.x_webgpu.batch!.max_rows).toBe(3);
  });

  it("batching is the scripted engine's default: without `batch` it schedules concurrent requests as rows, 8 at most, as a batching engine would", async () => {
    const engine = createScriptedEngine({ replies: replyTo(40), tokenDelayMs: 1 });
    const client = createClient({ engine, worker: false, speculative: false });
    expect(engine.batchRows).toBe(8);
    await client.models.load(model);
    const replies = await Promise.all(["a", "b", "c", "d"].map((q) => stream(client, q)));
    const counts = engine.batchCounters()!;
    expect(counts.forward_passes).toBeLessThanOrEqual(1.25 * 40 + 8);
    expect(counts.max_rows).toBe(4);
    for (const [i, q] of ["a", "b", "c", "d"].entries()) {
      expect(replies[i].text).toBe(replyTo(40)({ messages: [{ content: q }] }));
      expect(replies[i].last!.x_webgpu!.batch!.max_rows).toBeGreaterThanOrEqual(2);
    }
    expect((await client.stats()).batching).toMatchObject({ available: true, row_cap: 8, reason: null });
  });

  it("an engine with `batch: false` reports no x_webgpu.batch and runs one generation at a time", async () => {
    const engine = createScriptedEngine({ replies: replyTo(10), tokenDelayMs: 1, batch: false });
    const client = createClient({ engine, worker: false, speculative: false });
    const results = (await Promise.all(["a", "b"].map((q) => client.chat.completions.create({ model, messages: [user(q)] })))) as ChatCompletion[];
    expect(results[0].x_webgpu.batch).toBeUndefined();
    expect(engine.batchCounters()).toBeNull();
    expect(engine.batchRows).toBeUndefined();
  });
});

describe("n choices on a batching engine", () => {
  it("n: 4 decode together: ≤ 1.25 × one choice's tokens + 4 passes, each choice what it is alone", async () => {
    const { client } = batchingClient();
    const single = (await client.chat.completions.create({ model, messages: [user("q")], max_tokens: 64 })) as ChatCompletion;
    const before = (await client.stats()).forward_passes;
    const four = (await client.chat.completions.create({ model, messages: [user("q")], max_tokens: 64, n: 4 })) as ChatCompletion;
    const passes = (await client.stats()).forward_passes - before;
    expect(four.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    for (const choice of four.choices) expect(choice.message.content).toBe(single.choices[0].message.content);
    expect(four.usage.completion_tokens).toBe(4 * single.usage.completion_tokens);
    // As the hosted API counts: the one prompt once, whatever n is.
    expect(four.usage.prompt_tokens).toBe(single.usage.prompt_tokens);
    expect(four.usage.total_tokens).toBe(four.usage.prompt_tokens + four.usage.completion_tokens);
    expect(passes).toBeLessThanOrEqual(1.25 * 64 + 4);
    expect((four as unknown as { x_webgpu: { batch: { max_rows: number } } }).x_webgpu.batch.max_rows).toBe(4);
  });

  it("/completions: every prompt's choices decode together, in index order", async () => {
    // A raw prompt has no messages: the reply repeats the prompt's text.
    const engine = createScriptedEngine({ replies: (request) => Array.from({ length: 40 }, (_, i) => `${request.rawPrompt}${i}`).join(" "), tokenDelayMs: 1, batch: { maxRows: 8 } });
    const client = createClient({ engine, worker: false, speculative: false });
    const before = (await client.stats()).forward_passes;
    const out = await client.completions.create({ model, prompt: ["a", "b"], n: 2, max_tokens: 40 });
    const passes = (await client.stats()).forward_passes - before;
    expect(out.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(out.choices[0].text).toBe(out.choices[1].text);
    expect(out.choices[2].text).toBe(out.choices[3].text);
    expect(out.choices[0].text).not.toBe(out.choices[2].text);
    expect(passes).toBeLessThanOrEqual(1.25 * 40 + 4);
  });
});
