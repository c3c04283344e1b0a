/** One generation at a time, FIFO, bounded queue, cancellation of queued and running requests, timeouts. */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const base = { model: "Qwen3-0.6B", messages: [user("hi")] };
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("queue", () => {
  it("runs requests one at a time in arrival order", async () => {
    const { client, engine } = scriptedClient((request) => `reply to ${request.messages[0].content}`, { tokenDelayMs: 2 });
    const results = await Promise.all(["a", "b", "c", "d"].map((q) => client.chat.completions.create({ ...base, messages: [user(q)] })));
    expect(results.map((r) => r.choices[0].message.content)).toEqual(["reply to a", "reply to b", "reply to c", "reply to d"]);
    expect(engine.requests.map((r) => r.messages[0].content)).toEqual(["a", "b", "c", "d"]);
  });

  it("refuses requests beyond maxQueue with 429 and retry-after", async () => {
    const { client } = scriptedClient(() => words(20), { tokenDelayMs: 2, maxQueue: 2 });
    const settled = await Promise.allSettled(Array.from({ length: 6 }, () => client.chat.completions.create(base)));
    const rejected = settled.filter((s) => s.status === "rejected").map((s) => (s as PromiseRejectedResult).reason as ApiError);
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(3); // one running + two waiting
    expect(rejected).toHaveLength(3);
    for (const error of rejected) {
      expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "queue_full" });
      expect(error.retryAfterMs).toBeGreaterThan(0);
    }
  });

  it("a queued request aborted before its turn never reaches the engine", async () => {
    const { client, engine } = scriptedClient((r) => `${r.messages[0].content} ${words(10)}`, { tokenDelayMs: 2 });
    const controller = new AbortController();
    const first = client.chat.completions.create({ ...base, messages: [user("first")] });
    const queued = client.chat.completions.create({ ...base, messages: [user("queued")] }, { signal: controller.signal });
    const third = client.chat.completions.create({ ...base, messages: [user("third")] });
    controller.abort();
    await expect(queued).rejects.toMatchObject({ name: "AbortError" });
    await Promise.all([first, third]);
    expect(engine.requests.map((r) => r.messages[0].content)).toEqual(["first", "third"]);
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
  });

  it("aborting a running non-streaming request rejects it and frees the engine", async () => {
    const { client } = scriptedClient(() => words(200), { tokenDelayMs: 2 });
    const controller = new AbortController();
    const running = client.chat.completions.create(base, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(running).rejects.toMatchObject({ name: "AbortError" });
    const next = await client.chat.completions.create({ ...base, max_tokens: 3 });
    expect(next.choices[0].message.content).toBe("w0 w1 w2");
  });

  it("stream.controller.abort() and break both stop generation and release the engine", async () => {
    const { client, engine } = scriptedClient(() => words(500), { tokenDelayMs: 1 });
    const stream = await client.chat.completions.create({ ...base, stream: true });
    let seen = 0;
    for await (const _chunk of stream) {
      if (++seen === 5) break;
    }
    const other = await client.chat.completions.create({ ...base, stream: true });
    let n = 0;
    const iterate = (async () => {
      for await (const _chunk of other) if (++n === 3) other.controller.abort();
    })();
    await iterate;
    expect(n).toBeLessThan(50);
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    const after = await client.chat.completions.create({ ...base, max_tokens: 2 });
    expect(after.choices[0].message.content).toBe("w0 w1");
    expect(engine.requests).toHaveLength(3);
  });

  it("a signal aborting a stream ends its iteration", async () => {
    const { client } = scriptedClient(() => words(500), { tokenDelayMs: 1 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...base, stream: true }, { signal: controller.signal });
    let n = 0;
    for await (const _chunk of stream) if (++n === 3) controller.abort();
    expect(n).toBeLessThan(50);
  });

  it("a request that outlives timeoutMs fails with 504", async () => {
    const { client } = scriptedClient(() => words(500), { tokenDelayMs: 5, timeoutMs: 50 });
    await expect(client.chat.completions.create(base)).rejects.toMatchObject({ status: 504, type: "timeout_error" });
    const stream = await client.chat.completions.create({ ...base, stream: true });
    const error = await (async () => {
      try {
        for await (const _chunk of stream);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toMatchObject({ status: 504 });
  });

  it("errors before the stream starts reject create(); errors mid-stream throw from the iterator", async () => {
    const { client } = scriptedClient([{ text: "a b c d", error: new ApiError({ status: 500, message: "engine exploded" }), errorAfterTokens: 2 }]);
    await expect(client.chat.completions.create({ ...base, model: "nope", stream: true })).rejects.toMatchObject({ status: 404 });
    const stream = await client.chat.completions.create({ ...base, stream: true });
    let text = "";
    const error = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      } catch (e) {
        return e;
      }
    })();
    expect(text).toBe("a b");
    expect(error).toMatchObject({ status: 500, message: "engine exploded" });
  });
});
