/**
 * The worker dies mid-stream — terminated by the app, or crashed by an
 * uncaught exception inside it — and the caller gets a 503 instead of a hang;
 * the next request starts a fresh worker and succeeds. And an abort storm
 * through the worker leaves nothing behind.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError, createClient, type Client } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const long = Array.from({ length: 300 }, (_, i) => `tok${i}`).join(" ");
const model = "Qwen3-0.6B";
const ask = (content: string) => ({ model, messages: [{ role: "user" as const, content }] });

// Each fresh worker loads the catalog (web-llm's bundle) again: seconds apiece on a loaded machine.
const SLOW = 150_000;

/** Every Worker the library starts, so a test can crash the real one. */
let created: Worker[] = [];
const OriginalWorker = globalThis.Worker;
beforeEach(() => {
  created = [];
  globalThis.Worker = class extends OriginalWorker {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      created.push(this);
    }
  };
});
afterEach(() => {
  globalThis.Worker = OriginalWorker;
});

/**
 * The worker crashed: what the page sees of an uncaught exception inside it,
 * the Worker's `error` event, dispatched as the browser dispatches it. (This
 * used to post a call with an unknown transfer handler, which comlink decoded
 * outside its try/catch and so threw in the worker; the port guard now
 * refuses that call with a 400, so no message from the page can crash the
 * worker any more, and the event is raised here instead.)
 */
function crash(worker: Worker): void {
  worker.dispatchEvent(new ErrorEvent("error", { message: "Uncaught TypeError: a test's crash", cancelable: true }));
}

async function readUntilError(client: Client, after: number, fault: () => void): Promise<{ text: string; error: unknown; chunks: number }> {
  const stream = await client.chat.completions.create({ ...ask("go"), stream: true });
  let text = "";
  let chunks = 0;
  try {
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (++chunks === after) fault();
    }
    return { text, error: null, chunks };
  } catch (error) {
    return { text, error, chunks };
  }
}

describe("the worker dies mid-stream", () => {
  it("client.terminate(): the stream throws 503 worker_lost; the next request starts a fresh worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [long, "fresh worker here"], tokenDelayMs: 2 }) });
    const { text, error } = await readUntilError(client, 5, () => client.terminate());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: "worker_lost", type: "service_unavailable" });
    expect(long.startsWith(text) && text.length < long.length).toBe(true);
    expect(created).toHaveLength(1);
    // The fresh worker is built from the same spec: its replies start over.
    const next = await client.chat.completions.create(ask("again"));
    expect(next.choices[0].message.content).toBe(long);
    expect(created).toHaveLength(2);
    client.terminate();
  }, SLOW);

  it("an uncaught exception in the worker: the stream throws 503; the next request starts a fresh worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [long], tokenDelayMs: 2 }) });
    const { error, chunks } = await readUntilError(client, 3, () => crash(created[0]));
    expect(error).toMatchObject({ status: 503, code: "worker_lost" });
    expect(chunks).toBeLessThan(300);
    const next = await client.chat.completions.create(ask("again"));
    expect(next.choices[0].message.content).toBe(long);
    expect(created).toHaveLength(2);
    client.terminate();
  }, SLOW);

  it("on the fetch layer: the SSE stream ends with `event: error` 503, and a non-streamed request in flight gets a 503 response", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [long, long, "ok"], tokenDelayMs: 2 }) });
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify({ ...ask("go"), stream: true }) });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    client.terminate();
    let sse = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      sse += new TextDecoder().decode(value);
    }
    expect(sse).toMatch(/event: error\ndata: \{"error":\{"message":"[^"]*","type":"service_unavailable","param":null,"code":"worker_lost"\}\}\n\n$/);

    // The fresh worker is up and serving (a crash while it starts is another error: worker_unavailable).
    await client.stats();
    const pending = client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(ask("go")) });
    setTimeout(() => crash(created[1]), 50);
    const failed = await pending;
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ error: { code: "worker_lost" } });
    expect(created).toHaveLength(2);
    const ok = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(ask("go")) });
    expect(ok.status).toBe(200);
    expect(created).toHaveLength(3);
    client.terminate();
  }, SLOW);
});

describe("nothing changes on the way through the worker", () => {
  it("a thinking model's stream (reasoning, content, usage) arrives as the same chunks as in-process", async () => {
    const reply = "<think>I should greet them warmly, and briefly.</think>Hello there, friend. How can I help?";
    const body = { ...ask("hi"), stream: true as const, stream_options: { include_usage: true } };
    const collect = async (client: Client) => {
      const chunks = [];
      for await (const chunk of await client.chat.completions.create(body)) chunks.push({ ...chunk, id: "", created: 0, x_webgpu: undefined });
      return chunks;
    };
    const worker = createClient({ engine: createScriptedEngine({ replies: [reply] }) });
    const local = createClient({ worker: false, engine: createScriptedEngine({ replies: [reply] }) });
    const [viaWorker, inProcess] = [await collect(worker), await collect(local)];
    expect(JSON.stringify(viaWorker)).toBe(JSON.stringify(inProcess));
    expect(viaWorker.length).toBeGreaterThan(10);
    worker.terminate();
  }, SLOW);
});

describe("abort storm through the worker", () => {
  it("60 requests cancelled while queued, mid-stream and by break leave the worker's queue empty", async () => {
    const replies = Array.from({ length: 80 }, (_, i) => `reply${i} ${Array.from({ length: 30 }, (_, k) => `w${k}`).join(" ")}`);
    const client = createClient({ engine: createScriptedEngine({ replies, tokenDelayMs: 1 }), maxQueue: 64 });
    const runs = Array.from({ length: 60 }, async (_, i) => {
      const controller = new AbortController();
      try {
        const stream = await client.chat.completions.create({ ...ask(`q${i}`), stream: true }, { signal: controller.signal });
        if (i % 3 === 0) setTimeout(() => controller.abort(), i % 7);
        let n = 0;
        for await (const _chunk of stream) {
          if (i % 3 === 1 && ++n === 1 + (i % 5)) break;
          if (i % 3 === 2 && ++n === 1 + (i % 4)) stream.controller.abort();
        }
        return "ended";
      } catch (error) {
        return (error as Error).name;
      }
    });
    const outcomes = await Promise.all(runs);
    expect(outcomes.every((o) => o === "ended" || o === "AbortError")).toBe(true);
    // The aborts reach the worker as messages: its slot is free once it has handled them, not after a fixed time.
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await client.chat.completions.create(ask("after"));
    expect(next.choices[0].message.content).toMatch(/^reply\d+ w0 w1/);
    expect(created).toHaveLength(1);
    client.terminate();
  }, SLOW);
});
