/**
 * Load: 100 concurrent requests against one engine with maxQueue 16. One runs,
 * sixteen wait, and exactly the other 83 are refused with 429 and a
 * retry-after; the admitted ones complete in arrival order, each with its own
 * answer. Checked on the JS API and on the fetch layer (header included).
 */
import { describe, expect, it } from "vitest";
import { ApiError, createClient, type EngineRequest } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const CONCURRENT = 100;
const MAX_QUEUE = 16;
const ADMITTED = MAX_QUEUE + 1;

const answer = (id: number) => `answer ${id}: ${Array.from({ length: 10 }, (_, i) => `t${i}`).join(" ")}`;
const idOf = (request: EngineRequest) => Number(/^q(\d+)$/.exec(String(request.messages.at(-1)?.content))?.[1]);

async function warmClient() {
  // One generation at a time: the queue's FIFO order and its overflow are what these tests check.
  const engine = createScriptedEngine({ replies: (request) => answer(idOf(request)), tokenDelayMs: 1, batch: false });
  const client = createClient({ engine, worker: false, maxQueue: MAX_QUEUE });
  // Load the model first, so every request below meets a loaded engine.
  await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "q-1" }] });
  engine.requests.length = 0;
  return { engine, client };
}

const body = (id: number) => ({ model: "Qwen3-0.6B", messages: [{ role: "user" as const, content: `q${id}` }] });

describe("load", () => {
  it(`${CONCURRENT} concurrent requests, maxQueue ${MAX_QUEUE}: exactly the overflow gets 429 with retryAfterMs, the rest finish in FIFO order`, async () => {
    const { engine, client } = await warmClient();
    const finished: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, async (_, id) => {
        const stream = id % 2 === 0;
        let text: string;
        if (stream) {
          text = "";
          for await (const chunk of await client.chat.completions.create({ ...body(id), stream: true })) text += chunk.choices[0]?.delta.content ?? "";
        } else {
          text = (await client.chat.completions.create(body(id))).choices[0].message.content ?? "";
        }
        finished.push(id);
        return text;
      }),
    );
    const admitted = results.flatMap((r, id) => (r.status === "fulfilled" ? [id] : []));
    const refused = results.flatMap((r, id) => (r.status === "rejected" ? [[id, r.reason as ApiError] as const] : []));
    // The first arrival runs, the next sixteen wait; everyone after them is refused.
    expect(admitted).toEqual(Array.from({ length: ADMITTED }, (_, i) => i));
    expect(refused).toHaveLength(CONCURRENT - ADMITTED);
    for (const [, error] of refused) {
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 429, type: "rate_limit_error", code: "queue_full", param: null });
      expect(error.retryAfterMs).toBeGreaterThan(0);
      expect(error.message).toMatch(/maxQueue/);
    }
    // FIFO: the engine saw them and they finished in arrival order, each with its own answer.
    expect(engine.requests.map(idOf)).toEqual(admitted);
    expect(finished).toEqual(admitted);
    for (const id of admitted) expect((results[id] as PromiseFulfilledResult<string>).value).toBe(answer(id));
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
  }, 60_000);

  it("the same on the fetch layer: 429 responses carry retry-after-ms and an OpenAI error body", async () => {
    const { engine, client } = await warmClient();
    const responses = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, id) =>
        client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body(id), stream: id % 2 === 0 }) }),
      ),
    );
    const texts = await Promise.all(responses.map((r) => r.text()));
    const ok = responses.flatMap((r, id) => (r.status === 200 ? [id] : []));
    expect(ok).toEqual(Array.from({ length: ADMITTED }, (_, i) => i));
    for (const [id, response] of responses.entries()) {
      if (response.status === 200) {
        const content =
          id % 2 === 0
            ? [...texts[id].matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]).choices[0]?.delta.content ?? "").join("")
            : JSON.parse(texts[id]).choices[0].message.content;
        expect(content).toBe(answer(id));
        if (id % 2 === 0) expect(texts[id].endsWith("data: [DONE]\n\n")).toBe(true);
        continue;
      }
      expect(response.status).toBe(429);
      expect(Number(response.headers.get("retry-after-ms"))).toBeGreaterThan(0);
      expect(response.headers.get("x-should-retry")).not.toBe("false");
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(JSON.parse(texts[id])).toEqual({ error: { message: expect.stringMatching(/Retry after \d+ ms/), type: "rate_limit_error", param: null, code: "queue_full" } });
    }
    expect(engine.requests.map(idOf)).toEqual(ok);
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
  }, 60_000);

  it("once the queue drains, a refused client is served", async () => {
    const { client } = await warmClient();
    const burst = await Promise.allSettled(Array.from({ length: 40 }, (_, id) => client.chat.completions.create(body(id))));
    expect(burst.filter((r) => r.status === "rejected")).toHaveLength(40 - ADMITTED);
    const retry = await client.chat.completions.create(body(77));
    expect(retry.choices[0].message.content).toBe(answer(77));
  }, 60_000);
});
