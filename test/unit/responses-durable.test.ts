/**
 * The response store behind its interface (memory form in Node: the IndexedDB
 * form has the same semantics and its own browser test), background
 * responses (queued at once, polled, cancelled, followed from any event on),
 * and store faults (a damaged record, a quota error) with the scripted engine.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import OpenAI from "openai";
import { ApiError, createClient, type ResponseObject, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine, EngineHost } from "../../src/testing.js";
import { MemoryResponseStore } from "../../src/store/memory-response-store.js";
import type { StoredResponse } from "../../src/store/response-store.js";
import { scriptedClient } from "./support/client.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const WORDS = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lastUserText = (messages: Array<{ role: string; content: unknown }>) => JSON.stringify(messages.filter((m) => m.role === "user").at(-1)?.content);

async function settled(client: ReturnType<typeof createClient>, id: string): Promise<ResponseObject> {
  for (let i = 0; i < 500; i++) {
    const response = await client.responses.retrieve(id);
    if (response.status !== "queued" && response.status !== "in_progress") return response;
    await sleep(5);
  }
  throw new Error(`response ${id} never finished`);
}

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Only the fields that do not name this run (ids, times): what two runs of one request share. */
function shape(response: ResponseObject) {
  return { status: response.status, output_text: response.output_text, output: response.output.map(({ id: _id, ...item }) => item), usage: response.usage };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("item ids an app chose", () => {
  it("a later request re-using an item id never takes over the earlier response's item", async () => {
    const { client, engine } = scriptedClient(["one", "two", "three"]);
    await client.responses.create({ model: MODEL, input: [{ type: "message", id: "msg_app_1", role: "user", content: "my own question" }] });
    // Another tab (or app) sends its own text under the same id.
    await client.responses.create({ model: MODEL, input: [{ type: "message", id: "msg_app_1", role: "user", content: "someone else's text" }] });
    await client.responses.create({ model: MODEL, input: [{ type: "item_reference", id: "msg_app_1" }] });
    expect(lastUserText(engine.requests[2].messages)).toContain("my own question");
  });
});

describe("retention: oldest dropped first", () => {
  it("by bytes", async () => {
    const engine = createScriptedEngine({ replies: () => "ok" });
    const client = createClient({ engine, worker: false, responsesStore: { maxBytes: 6000 } });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await client.responses.create({ model: MODEL, input: `${i} ${"x".repeat(1000)}` })).id);
    const kept = (await client.responses.list({ limit: 100, order: "asc" })).data.map((r) => r.id);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(6);
    expect(kept).toEqual(ids.slice(ids.length - kept.length));
    await expect(client.responses.create({ model: MODEL, input: "more", previous_response_id: ids[0] })).rejects.toMatchObject({ status: 400, code: "previous_response_not_found", param: "previous_response_id" });
  });

  it("by age, and a chain continues from a response whose own parent was dropped", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    const engine = createScriptedEngine({ replies: ["a", "b", "c"] });
    const client = createClient({ engine, worker: false, responsesStore: { maxAgeMs: 60_000 } });
    const first = await client.responses.create({ model: MODEL, input: "first" });
    vi.setSystemTime(new Date("2026-01-01T00:00:50Z"));
    const second = await client.responses.create({ model: MODEL, input: "second", previous_response_id: first.id });
    vi.setSystemTime(new Date("2026-01-01T00:01:30Z"));
    const third = await client.responses.create({ model: MODEL, input: "third", previous_response_id: second.id });
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, code: "response_not_found" });
    // Every record holds its whole conversation: the dropped first turn is still part of the chain.
    expect(JSON.stringify(engine.requests[2].messages)).toContain("first");
    expect(third.status).toBe("completed");
  });
});

describe("list and clear", () => {
  it("lists stored responses newest first with limit/after, and clear deletes them all", async () => {
    const { client } = scriptedClient(() => "ok");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.responses.create({ model: MODEL, input: String(i) })).id);
    await client.responses.create({ model: MODEL, input: "not stored", store: false });
    const page1 = await client.responses.list({ limit: 2 });
    expect(page1).toMatchObject({ object: "list", first_id: ids[2], last_id: ids[1], has_more: true });
    expect(page1.data[0].output_text).toBe("ok");
    const page2 = await client.responses.list({ limit: 2, after: page1.last_id! });
    expect(page2.data.map((r) => r.id)).toEqual([ids[0]]);
    expect(page2.has_more).toBe(false);
    expect(await client.responses.clear()).toEqual({ object: "response.cleared", deleted: 3 });
    expect((await client.responses.list()).data).toEqual([]);
    await expect(client.responses.retrieve(ids[0])).rejects.toMatchObject({ status: 404 });
  });
});

describe("a damaged record", () => {
  it("gives a clear 500 naming it; the other responses are intact", async () => {
    const store = new MemoryResponseStore();
    const host = new EngineHost({ engine: createScriptedEngine({ replies: () => "ok" }), responseStore: store });
    const good = await host.createResponse({ model: MODEL, input: "good" });
    const bad = await host.createResponse({ model: MODEL, input: "bad" });
    store.damage(bad.id, { response: "garbage" });
    const error = await host.retrieveResponse(bad.id).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, code: "stored_response_corrupt" });
    expect(error.message).toContain(bad.id);
    await expect(host.createResponse({ model: MODEL, input: "x", previous_response_id: bad.id })).rejects.toMatchObject({ code: "stored_response_corrupt" });
    expect((await host.retrieveResponse(good.id)).status).toBe("completed");
    expect((await host.listResponses()).data.map((r) => r.id)).toEqual([good.id]);
    expect(await host.deleteResponse(bad.id)).toMatchObject({ deleted: true });
  });
});

describe("a failed store write (quota)", () => {
  it("the stream still completes; the failure is reported", async () => {
    class FullStore extends MemoryResponseStore {
      override async put(_entry: StoredResponse): Promise<void> {
        throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      }
    }
    const reported: ApiError[] = [];
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const host = new EngineHost({ engine: createScriptedEngine({ replies: ["all of it"] }), responseStore: new FullStore(), onResponseStoreError: (e) => reported.push(e) });
    const events: ResponseStreamEvent[] = [];
    await new Promise<void>((resolve, reject) => {
      host.streamResponse({ model: MODEL, input: "x", stream: true }, { write: (e) => events.push(...e), end: resolve, fail: reject }).catch(reject);
    });
    const completed = events.at(-1) as { type: string; response: ResponseObject };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output[0]).toMatchObject({ type: "message", content: [{ text: "all of it" }] });
    expect(reported[0]).toMatchObject({ code: "response_store_quota_exceeded", status: 507 });
    expect(reported[0].message).toContain(completed.response.id);
  });
});

describe("background: true", () => {
  it("answers at once with status queued; retrieve polls it to the same result as a foreground run", async () => {
    const { client } = scriptedClient([WORDS], { tokenDelayMs: 1 });
    const created = await client.responses.create({ model: MODEL, input: "count", background: true });
    expect(created).toMatchObject({ status: "queued", background: true, output: [] });
    const done = await settled(client, created.id);
    const foreground = await scriptedClient([WORDS]).client.responses.create({ model: MODEL, input: "count" });
    expect(shape(done)).toEqual(shape(foreground));
    expect(done.output_text).toBe(WORDS);
  });

  it("needs store", async () => {
    const { client } = scriptedClient(["x"]);
    await expect(client.responses.create({ model: MODEL, input: "x", background: true, store: false })).rejects.toMatchObject({ status: 400, param: "background" });
  });

  it("cancel stops it: status cancelled with the output so far; the queue is free again", async () => {
    const { client, engine } = scriptedClient([WORDS, "after"], { tokenDelayMs: 5 });
    const created = await client.responses.create({ model: MODEL, input: "count", background: true });
    let running = await client.responses.retrieve(created.id);
    while (!(running.output_text ?? "").includes("w3")) {
      await sleep(5);
      running = await client.responses.retrieve(created.id);
    }
    expect(running.status).toBe("in_progress");
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    expect(WORDS.startsWith(cancelled.output_text ?? "")).toBe(true);
    expect((cancelled.output_text ?? "").length).toBeLessThan(WORDS.length);
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
    // Cancelling again changes nothing.
    expect((await client.responses.cancel(created.id)).output_text).toBe(cancelled.output_text);
    expect((await client.responses.create({ model: MODEL, input: "next" })).output_text).toBe("after");
    expect(engine.requests).toHaveLength(2);
  });

  it("cancel while queued: it never reaches the engine", async () => {
    // One generation at a time: the second waits in the queue.
    const { client, engine } = scriptedClient([WORDS, "never"], { tokenDelayMs: 2, batch: false });
    const running = client.responses.create({ model: MODEL, input: "first" });
    await sleep(5);
    const created = await client.responses.create({ model: MODEL, input: "second", background: true });
    expect((await client.responses.retrieve(created.id)).status).toBe("queued");
    expect((await client.responses.cancel(created.id)).status).toBe("cancelled");
    expect((await running).status).toBe("completed");
    expect(engine.requests).toHaveLength(1);
  });

  it("cancel of a response that is not a background one → 400; of an unknown id → 404", async () => {
    const { client } = scriptedClient(["x"]);
    const plain = await client.responses.create({ model: MODEL, input: "x" });
    await expect(client.responses.cancel(plain.id)).rejects.toMatchObject({ status: 400, param: "response_id" });
    await expect(client.responses.cancel("resp_missing")).rejects.toMatchObject({ status: 404 });
  });

  it("a stream reattached with starting_after gets each later event once, in order, and the same response.completed", async () => {
    const { client } = scriptedClient([WORDS], { tokenDelayMs: 2 });
    const created = await client.responses.create({ model: MODEL, input: "count", background: true });
    // The whole run, followed from its first event...
    const whole = collect(await client.responses.retrieve(created.id, { stream: true }));
    // ...and a stream that left after some events, reattached from its last sequence number.
    const first = await client.responses.retrieve(created.id, { stream: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of first) {
      seen.push(event);
      if (seen.length === 8) break;
    }
    const cut = seen.at(-1)!.sequence_number;
    const rest = await collect(await client.responses.retrieve(created.id, { stream: true, starting_after: cut }));
    const all = await whole;
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect([...seen, ...rest]).toEqual(all);
    const completed = rest.at(-1) as { type: string; response: ResponseObject };
    expect(completed.type).toBe("response.completed");
    expect(completed.response).toEqual({ ...(await client.responses.retrieve(created.id)), output_text: undefined });
    // After the end, the log answers the same.
    expect(await collect(await client.responses.retrieve(created.id, { stream: true, starting_after: cut }))).toEqual(rest);
  });

  it("background with stream: true streams the run; leaving the stream does not stop it", async () => {
    const { client } = scriptedClient([WORDS], { tokenDelayMs: 2 });
    const stream = await client.responses.create({ model: MODEL, input: "count", background: true, stream: true });
    let id = "";
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") break;
    }
    expect((await settled(client, id)).output_text).toBe(WORDS);
  });

  it("a stream of a response that was not created in the background → 400", async () => {
    const { client } = scriptedClient(["x"]);
    const plain = await client.responses.create({ model: MODEL, input: "x" });
    await expect(client.responses.retrieve(plain.id, { stream: true })).rejects.toMatchObject({ status: 400, param: "stream" });
  });
});

describe("the unchanged openai SDK on client.fetch", () => {
  const BASE = "http://localhost.webgpu/v1";

  it("background + polling + cancel, a reattached stream (starting_after), list", async () => {
    const { client } = scriptedClient([WORDS, WORDS], { tokenDelayMs: 3 });
    const openai = new OpenAI({ baseURL: BASE, apiKey: "local", maxRetries: 0, fetch: client.fetch as never });
    const created = await openai.responses.create({ model: MODEL, input: "count", background: true });
    expect(created.status).toBe("queued");
    const all: ResponseStreamEvent[] = [];
    for await (const event of await openai.responses.retrieve(created.id, { stream: true })) all.push(event as never);
    const cut = 5;
    const rest: ResponseStreamEvent[] = [];
    for await (const event of await openai.responses.retrieve(created.id, { stream: true, starting_after: cut })) rest.push(event as never);
    expect(rest).toEqual(all.filter((e) => e.sequence_number > cut));
    let polled = await openai.responses.retrieve(created.id);
    expect(polled.status).toBe("completed");
    expect(polled.output_text).toBe(WORDS);
    // The SDK's own background helper: responses.stream({ response_id, starting_after }).
    const helper = openai.responses.stream({ response_id: created.id, starting_after: cut });
    const final = await helper.finalResponse();
    expect(final).toMatchObject({ id: created.id, status: "completed", output: [{ type: "message", content: [{ text: WORDS }] }] });

    const second = await openai.responses.create({ model: MODEL, input: "count", background: true });
    do {
      await sleep(5);
      polled = await openai.responses.retrieve(second.id);
    } while (polled.status === "queued");
    const cancelled = await openai.responses.cancel(second.id);
    expect(cancelled.status).toBe("cancelled");
    const listed = (await (await client.fetch(`${BASE}/responses?limit=5`)).json()) as { data: Array<{ id: string }> };
    expect(listed.data.map((r) => r.id)).toEqual([second.id, created.id]);
    expect(await (await client.fetch(`${BASE}/responses`, { method: "DELETE" })).json()).toEqual({ object: "response.cleared", deleted: 2 });
  });
});
