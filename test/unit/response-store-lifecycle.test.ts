/**
 * What a stored response leaves behind, at the store (memory form; the
 * IndexedDB form has its own browser test with the same cases): a response
 * deleted, cleared or dropped by retention while its run still logs keeps no
 * event and no chunk; event logs count in the byte budget; a finished
 * stream's log is dropped; maxAgeMs holds for reads; a damaged summary or
 * record is contained; `starting_after` is a sequence number.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createScriptedEngine, EngineHost } from "../../src/testing.js";
import { MemoryResponseStore } from "../../src/store/memory-response-store.js";
import { overRetention, retentionOf, type StoredResponse } from "../../src/store/response-store.js";
import type { ResponseObject, ResponseStreamEvent } from "../../src/protocol/responses/types.js";
import { scriptedClient } from "./support/client.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const WORDS = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
const BASE = "http://localhost.webgpu/v1";

function entry(id: string, text = "x"): StoredResponse {
  const response = { id, object: "response", status: "completed", output: [{ type: "message", id: `out_${id}`, status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }] } as unknown as ResponseObject;
  return { response, inputItems: [{ type: "message", id: `msg_${id}`, status: "completed", role: "user", content: [{ type: "input_text", text: "q" }] }], history: [] };
}
const delta = (n: number, text: string) => ({ type: "response.output_text.delta", sequence_number: n, item_id: "m", output_index: 0, content_index: 0, delta: text, logprobs: [] }) as unknown as ResponseStreamEvent;

/** A host over `store` whose replies take ~5 ms a token, one generation at a time (`drained` queues behind the others). */
function host(store: MemoryResponseStore) {
  return new EngineHost({ engine: createScriptedEngine({ replies: () => WORDS, tokenDelayMs: 5, batch: false }), responseStore: store });
}

/** Resolves once every run queued before has ended (the queue is one slot) and their last writes are done. */
async function drained(h: EngineHost): Promise<void> {
  await h.createResponse({ model: MODEL, input: "after", store: false });
}

/** Resolves once the response's output holds a few words (its run has logged events). */
async function generating(h: EngineHost, id: string): Promise<void> {
  await vi.waitUntil(async () => JSON.stringify((await h.retrieveResponse(id)).output).includes("w3"), { timeout: 4_000, interval: 5 });
}

async function leftBehind(store: MemoryResponseStore, ids: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const id of ids) {
    if (await store.get(id)) continue;
    if ((await store.readEvents(id)).length > 0 || (await store.readChunks(id)).length > 0) left.push(id);
  }
  return left;
}

afterEach(() => vi.useRealTimers());

describe("a response that is gone leaves nothing behind", () => {
  it("deleted while its background run generates: the run's last flush logs nothing for it", async () => {
    const store = new MemoryResponseStore();
    const h = host(store);
    const { id } = await h.createResponse({ model: MODEL, input: "count", background: true });
    await generating(h, id);
    await h.deleteResponse(id);
    await drained(h);
    expect(await store.readEvents(id)).toEqual([]);
    expect(await store.readChunks(id)).toEqual([]);
  });

  it("cleared while background runs generate", async () => {
    const store = new MemoryResponseStore();
    const h = host(store);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.createResponse({ model: MODEL, input: `count ${i}`, background: true })).id);
    await generating(h, ids[0]);
    await h.clearResponses();
    await drained(h);
    expect(await leftBehind(store, ids)).toEqual([]);
  });

  it("dropped by retention (maxResponses 2) under 5 concurrent background runs", async () => {
    const store = new MemoryResponseStore({ maxResponses: 2 });
    const h = host(store);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.createResponse({ model: MODEL, input: `count ${i}`, background: true })).id);
    await drained(h);
    const kept = (await store.list()).map((r) => r.id);
    expect(kept).toEqual(ids.slice(3));
    expect(await leftBehind(store, ids)).toEqual([]);
    // The kept ones have their whole logs (a stream can still reattach).
    for (const id of kept) expect((await store.readEvents(id)).at(-1)).toMatchObject({ type: "response.completed" });
  });

  it("appendEvents answers false, and keeps nothing, for an id that is not held", async () => {
    const store = new MemoryResponseStore();
    expect(await store.appendEvents("resp_none", [delta(0, "a")], [{ text: "a" }])).toBe(false);
    expect(await store.readEvents("resp_none")).toEqual([]);
    expect(await store.readChunks("resp_none")).toEqual([]);
  });
});

describe("event logs in the byte budget", () => {
  it("a record's log counts: an old record with a large log is dropped first", async () => {
    const store = new MemoryResponseStore({ maxBytes: 20_000 });
    await store.put(entry("resp_a"));
    expect(await store.appendEvents("resp_a", [delta(0, "y".repeat(12_000))])).toBe(true);
    await store.put(entry("resp_b", "z".repeat(9_000)));
    // Records alone: ~0.4 KB + ~9.4 KB. With resp_a's log: over 20 KB.
    expect(await store.get("resp_a")).toBeUndefined();
    expect(await store.readEvents("resp_a")).toEqual([]);
    expect(await store.get("resp_b")).toBeDefined();
  });

  it("a finished stored stream (not background) keeps no log: nothing can reattach to it", async () => {
    const store = new MemoryResponseStore();
    const h = host(store);
    const events: ResponseStreamEvent[] = [];
    await new Promise<void>((resolve, reject) => {
      h.streamResponse({ model: MODEL, input: "count", stream: true }, { write: (e) => events.push(...e), end: resolve, fail: reject }).catch(reject);
    });
    const id = (events[0] as { response: ResponseObject }).response.id;
    await drained(h);
    expect((await store.get(id))?.response.status).toBe("completed");
    expect(await store.readEvents(id)).toEqual([]);
    expect(await store.readChunks(id)).toEqual([]);
    // Taken for none later either.
    expect(await store.appendEvents(id, [delta(99, "late")])).toBe(false);
  });

  it("a background response keeps its log once finished (a stream may reattach)", async () => {
    const store = new MemoryResponseStore();
    const h = host(store);
    const { id } = await h.createResponse({ model: MODEL, input: "count", background: true });
    await drained(h);
    expect((await store.readEvents(id)).at(-1)).toMatchObject({ type: "response.completed" });
  });
});

describe("damage and age", () => {
  it("maxAgeMs holds for reads: an expired response is neither retrieved, listed nor an item_reference", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    const store = new MemoryResponseStore({ maxAgeMs: 60_000 });
    await store.put(entry("resp_old"));
    expect(await store.get("resp_old")).toBeDefined();
    vi.setSystemTime(new Date("2026-01-01T00:01:01Z"));
    expect(await store.get("resp_old")).toBeUndefined();
    expect(await store.list()).toEqual([]);
    expect(await store.item("msg_resp_old")).toBeUndefined();
  });

  it("a damaged summary (bytes not a number) does not make retention drop every response", () => {
    const retention = retentionOf({ maxResponses: 100, maxBytes: 1_000_000 });
    const summaries = [
      { id: "resp_damaged", seq: 1, bytes: "many" as unknown as number },
      { id: "resp_new", seq: 2, bytes: 500 },
    ];
    expect(overRetention(summaries, retention)).toEqual([]);
    // Nor a damaged seq: it is taken for the oldest, so the count bound drops it first.
    expect(overRetention([{ id: "resp_new", seq: 2, bytes: 1 }, { id: "resp_bad", seq: null as unknown as number, bytes: 1 }], retentionOf({ maxResponses: 1 }))).toEqual(["resp_bad"]);
  });

  it("continuing a record whose conversation is damaged: 500 stored_response_corrupt, not a TypeError", async () => {
    const store = new MemoryResponseStore();
    const h = new EngineHost({ engine: createScriptedEngine({ replies: () => "ok" }), responseStore: store });
    const first = await h.createResponse({ model: MODEL, input: "first" });
    const held = (await store.get(first.id))!;
    for (const history of [[null], [42], [{ role: "user", content: 42, toolCalls: [] }], [{ role: "assistant", content: "", toolCalls: [null] }]]) {
      store.damage(first.id, { ...held, history });
      await expect(h.createResponse({ model: MODEL, input: "more", previous_response_id: first.id }), JSON.stringify(history)).rejects.toMatchObject({ status: 500, code: "stored_response_corrupt" });
    }
    store.damage(first.id, { ...held, inputItems: [null] });
    await expect(h.retrieveResponse(first.id)).rejects.toMatchObject({ status: 500, code: "stored_response_corrupt" });
  });
});

describe("starting_after", () => {
  it("is a sequence number: an empty value, 0x3, ' 4', 1e1 and -1 are a 400 naming it", async () => {
    const { client } = scriptedClient([WORDS]);
    const created = await client.responses.create({ model: MODEL, input: "count", background: true });
    for (const value of ["", "0x3", " 4", "1e1", "-1", "2.5"]) {
      const response = await client.fetch(`${BASE}/responses/${created.id}?stream=true&starting_after=${encodeURIComponent(value)}`);
      expect(response.status, JSON.stringify(value)).toBe(400);
      expect((await response.json()).error, JSON.stringify(value)).toMatchObject({ param: "starting_after" });
    }
    await expect(client.responses.retrieve(created.id, { stream: true, starting_after: -1 })).rejects.toMatchObject({ status: 400, param: "starting_after" });
    // Left out (or null, as an app may pass a parameter it leaves out): every event.
    const every: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.retrieve(created.id, { stream: true, starting_after: null as unknown as undefined })) every.push(event);
    expect(every[0].sequence_number).toBe(0);
    const ok = await client.fetch(`${BASE}/responses/${created.id}?stream=true&starting_after=3`);
    expect(ok.status).toBe(200);
    const first = (await ok.text()).split("\n\n").filter(Boolean)[0];
    expect(JSON.parse(first.split("\n")[1].slice(6)).sequence_number).toBe(4);
  });
});
