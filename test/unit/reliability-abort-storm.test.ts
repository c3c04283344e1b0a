/**
 * Abort storms: 200 requests cancelled at seeded random moments — before they
 * are sent, while queued, while the engine holds them before the first token
 * (prefill), right after the stream opens, mid-stream, between chunks, during
 * a non-streamed generation, and on the fetch layer mid-SSE. Nothing may leak:
 * every request settles, no engine slot stays taken, nothing rejects
 * unhandled, and the next request gets exactly its own answer.
 */
import { describe, expect, it } from "vitest";
import { createClient, type Client, type EngineRequest } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { seededRandom } from "./support/malformed-requests.js";
import { recordUnhandledRejections } from "./support/unhandled.js";

const MODES = ["before", "queued", "prefill", "after-open", "mid-stream", "between-chunks", "non-stream", "fetch-mid-sse", "none"] as const;
type Mode = (typeof MODES)[number];

const replyFor = (id: number) => `r${id}: ${Array.from({ length: 24 }, (_, i) => `w${i}`).join(" ")}`;
const idOf = (request: EngineRequest) => Number(/^q(\d+)$/.exec(String(request.messages.at(-1)?.content))?.[1]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const unhandled = recordUnhandledRejections();

interface Outcome {
  id: number;
  mode: Mode;
  /** Text that reached the consumer. */
  text: string;
  /** Name of the error the request ended with, if any. */
  error: string | null;
  completed: boolean;
}

/** Runs one request and cancels it the way `mode` says. */
async function run(client: Client, id: number, mode: Mode, controller: AbortController, rng: () => number): Promise<Outcome> {
  const body = { model: "Qwen3-0.6B", messages: [{ role: "user" as const, content: `q${id}` }] };
  const outcome: Outcome = { id, mode, text: "", error: null, completed: false };
  try {
    switch (mode) {
      case "before":
        controller.abort();
        await client.chat.completions.create(body, { signal: controller.signal });
        break;
      case "queued": {
        const pending = client.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
        setTimeout(() => controller.abort(), Math.floor(rng() * 3));
        const stream = await pending;
        for await (const chunk of stream) outcome.text += chunk.choices[0]?.delta.content ?? "";
        break;
      }
      case "prefill": // the engine's reply function aborts (see below)
      case "none": {
        const stream = await client.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
        for await (const chunk of stream) outcome.text += chunk.choices[0]?.delta.content ?? "";
        break;
      }
      case "after-open": {
        const stream = await client.chat.completions.create({ ...body, stream: true });
        stream.controller.abort();
        for await (const chunk of stream) outcome.text += chunk.choices[0]?.delta.content ?? "";
        break;
      }
      case "mid-stream": {
        const stream = await client.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
        const after = 1 + Math.floor(rng() * 20);
        const how = Math.floor(rng() * 3);
        let n = 0;
        for await (const chunk of stream) {
          outcome.text += chunk.choices[0]?.delta.content ?? "";
          if (++n !== after) continue;
          if (how === 0) break;
          if (how === 1) stream.controller.abort();
          else controller.abort();
        }
        break;
      }
      case "between-chunks": {
        const stream = await client.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
        setTimeout(() => controller.abort(), Math.floor(rng() * 25));
        for await (const chunk of stream) {
          outcome.text += chunk.choices[0]?.delta.content ?? "";
          await sleep(Math.floor(rng() * 2));
        }
        break;
      }
      case "non-stream": {
        setTimeout(() => controller.abort(), Math.floor(rng() * 30));
        const completion = await client.chat.completions.create(body, { signal: controller.signal });
        outcome.text = completion.choices[0].message.content ?? "";
        break;
      }
      case "fetch-mid-sse": {
        const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify({ ...body, stream: true }), signal: controller.signal });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let sse = "";
        const after = 1 + Math.floor(rng() * 15);
        for (let n = 0; ; n++) {
          if (n === after) {
            if (rng() < 0.5) await reader.cancel();
            else controller.abort();
          }
          const { value, done } = await reader.read();
          if (done) break;
          sse += decoder.decode(value);
        }
        outcome.text = [...sse.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]).join("");
        break;
      }
    }
    outcome.completed = true;
  } catch (error) {
    outcome.error = (error as Error).name ?? String(error);
  }
  return outcome;
}

describe("abort storms", () => {
  it("200 requests aborted at random moments leak nothing; the next request succeeds", async () => {
    const rng = seededRandom(4242);
    const controllers = new Map<number, AbortController>();
    const modes = new Map<number, Mode>();
    const engine = createScriptedEngine({
      replies: (request) => {
        const id = idOf(request);
        if (modes.get(id) === "prefill") controllers.get(id)?.abort();
        return replyFor(id);
      },
      tokenDelayMs: 1,
    });
    const client = createClient({ engine, worker: false, maxQueue: 32 });

    const outcomes: Outcome[] = [];
    for (let wave = 0; wave < 20; wave++) {
      const batch = Array.from({ length: 10 }, (_, k) => {
        const id = wave * 10 + k;
        const mode = MODES[id % MODES.length === 8 ? 8 : Math.floor(rng() * MODES.length)];
        const controller = new AbortController();
        controllers.set(id, controller);
        modes.set(id, mode);
        return run(client, id, mode, controller, rng);
      });
      const settled = await Promise.race([Promise.all(batch), sleep(20_000).then(() => null)]);
      expect(settled, `wave ${wave} hung`).not.toBeNull();
      outcomes.push(...(settled as Outcome[]));
    }

    expect(outcomes).toHaveLength(200);
    // Every cancellation mode was exercised, and most requests really were cut short.
    expect(new Set(outcomes.map((o) => o.mode)).size).toBe(MODES.length);
    const cut = outcomes.filter((o) => o.mode !== "none" && o.text !== replyFor(o.id));
    expect(cut.length).toBeGreaterThan(120);
    for (const o of outcomes) {
      // Aborting ends a request with an AbortError or an early end — never another error.
      if (o.error !== null) expect(o.error, `#${o.id} ${o.mode}`).toBe("AbortError");
      // What reached the consumer is a prefix of its own reply: nothing from another request.
      expect(replyFor(o.id).startsWith(o.text), `#${o.id} ${o.mode}: ${o.text}`).toBe(true);
      if (o.mode === "none") expect(o.text).toBe(replyFor(o.id));
    }
    // A request cancelled before it was sent never reached the engine.
    const seen = new Set(engine.requests.map(idOf));
    for (const o of outcomes.filter((x) => x.mode === "before")) expect(seen.has(o.id)).toBe(false);

    // Nothing leaked: no waiter, no slot held, the model loaded once.
    await sleep(20);
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    expect(engine.loads).toEqual(["Qwen3-0.6B-q4f32_1-MLC"]);
    const next = await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "q999" }] });
    expect(next.choices[0].message.content).toBe(replyFor(999));
    expect(unhandled.reasons).toEqual([]);
  }, 120_000);
});
