/**
 * Stored responses in IndexedDB, in real Chromium: the store's own semantics
 * (one transaction per response, the oldest holder of an item id, retention,
 * a damaged record), a previous_response_id chain across worker restarts
 * (what a reload does to a dedicated worker) with the unchanged openai SDK v7
 * on client.fetch, and a background response whose worker stopped mid-way,
 * resumed by the next worker: a stream reattached with starting_after gets the
 * events after the cut once each, in order, ending with the response.completed
 * an uninterrupted run gives. Each test uses a database of its own.
 */
import { afterEach, describe, expect, it } from "vitest";
import OpenAI from "openai-v7";
import { createClient, type Client, type ResponseObject, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { IdbResponseStore, openResponsesDatabase } from "../../src/store/idb-response-store.js";
import type { StoredResponse } from "../../src/store/response-store.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const BASE = "http://localhost.webgpu/v1";
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let databases: string[] = [];
let clients: Client[] = [];
afterEach(async () => {
  for (const client of clients) client.terminate();
  clients = [];
  await sleep(50);
  for (const name of databases) indexedDB.deleteDatabase(name);
  databases = [];
});

function database(): string {
  const name = `responses-test-${Math.random().toString(36).slice(2)}`;
  databases.push(name);
  return name;
}

function client(databaseName: string, replies: string[], options: { tokenDelayMs?: number; loadDelayMs?: number; worker?: boolean | "shared" } = {}): Client {
  const made = createClient({ engine: createScriptedEngine({ replies, tokenDelayMs: options.tokenDelayMs, loadDelayMs: options.loadDelayMs }), responsesStore: { databaseName }, worker: options.worker });
  clients.push(made);
  return made;
}

const sdk = (c: Client) => new OpenAI({ baseURL: BASE, apiKey: "local", dangerouslyAllowBrowser: true, maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => c.fetch(url, init) });

function entry(id: string, text: string, itemId = `msg_${id}`): StoredResponse {
  const response = { id, object: "response", status: "completed", output: [{ type: "message", id: `out_${id}`, status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }] } as unknown as ResponseObject;
  return { response, inputItems: [{ type: "message", id: itemId, status: "completed", role: "user", content: [{ type: "input_text", text }] }], history: [] };
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out; last value: ${JSON.stringify(value).slice(0, 300)}`);
    await sleep(20);
  }
}

/**
 * Waits until the event log of response `id` in database `name` holds what `ok` asks: what a worker stopped
 * now leaves to the next one. The log is written in batches (every 100 ms, host/background-run.ts), so a
 * test that stops a worker waits for the events it saw to be logged, not for a fixed time.
 */
async function logged(name: string, id: string, ok: (events: ResponseStreamEvent[]) => boolean): Promise<void> {
  const store = new IdbResponseStore(name);
  await until(() => store.readEvents(id), ok);
}
const through = (sequence: number) => (events: ResponseStreamEvent[]) => (events.at(-1)?.sequence_number ?? -1) >= sequence;
const withText = (text: string) => (events: ResponseStreamEvent[]) =>
  events.map((e) => (e.type === "response.output_text.delta" ? e.delta : "")).join("").length >= text.length;

/** Ids are random: every id replaced by its place of first appearance, times zeroed. */
/** Events with ids numbered in order of appearance, times zeroed, and the run's own performance counters left out (a resumed run decodes less). */
function canon(value: unknown): string {
  const ids = new Map<string, string>();
  return JSON.stringify(value, (key, v) => (key === "x_webgpu" ? undefined : v))
    .replace(/"(resp|msg|rs|fc|call)_[A-Za-z0-9]+"/g, (m) => (ids.has(m) ? ids.get(m)! : (ids.set(m, `"id${ids.size}"`), `"id${ids.size - 1}"`)))
    .replace(/"(created_at|completed_at)":\d+/g, '"$1":0');
}

describe("the IndexedDB response store", () => {
  it("keeps responses across instances; the oldest holder of an item id answers; retention drops the oldest; a damaged record is a clear error", async () => {
    const name = database();
    const first = new IdbResponseStore(name, { maxResponses: 3 });
    await first.put(entry("resp_a", "mine", "msg_shared"));
    await first.put(entry("resp_b", "theirs", "msg_shared"));
    // Another context (a reloaded page's worker) opens the same database.
    const second = new IdbResponseStore(name, { maxResponses: 3 });
    expect((await second.get("resp_a"))?.response.output).toEqual(entry("resp_a", "mine").response.output);
    expect(await second.item("msg_shared")).toMatchObject({ content: [{ text: "mine" }] });
    await second.put(entry("resp_c", "c"));
    await second.put(entry("resp_d", "d"));
    expect((await second.list()).map((r) => r.id)).toEqual(["resp_b", "resp_c", "resp_d"]);
    expect(await second.get("resp_a")).toBeUndefined();
    // With resp_a dropped, the item id's next holder answers.
    expect(await second.item("msg_shared")).toMatchObject({ content: [{ text: "theirs" }] });

    // A record damaged on disk.
    const db = await openResponsesDatabase(name);
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction("responses", "readwrite");
      tx.objectStore("responses").put({ id: "resp_c", seq: 1, itemIds: [], data: { response: 42 } });
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    await expect(second.get("resp_c")).rejects.toMatchObject({ status: 500, code: "stored_response_corrupt" });
    expect((await second.list()).map((r) => r.id)).toEqual(["resp_b", "resp_d"]);
    expect(await second.delete("resp_c")).toBe(true);
    await second.appendEvents("resp_d", [{ type: "response.created", sequence_number: 0, response: entry("resp_d", "d").response }]);
    expect((await second.readEvents("resp_d")).map((e) => e.sequence_number)).toEqual([0]);
    expect(await second.clear()).toBe(2);
    expect(await second.readEvents("resp_d")).toEqual([]);
  });

  it("journals engine chunks with the event batches, in order, batches of chunks alone included; dropped with the response", async () => {
    const store = new IdbResponseStore(database(), {});
    await store.put(entry("resp_j", "j"));
    const delta = (n: number) => ({ type: "response.output_text.delta", sequence_number: n, item_id: "m", output_index: 0, content_index: 0, delta: `d${n}`, logprobs: [] }) as unknown as ResponseStreamEvent;
    await store.appendEvents("resp_j", [delta(0), delta(1)], [{ text: "a" }, { text: "b" }]);
    // chunks whose events are not out yet (a parser holding a marker): keyed between event 1 and event 2
    await store.appendEvents("resp_j", [], [{ text: "<" }], 1.5);
    await store.appendEvents("resp_j", [], [{ text: "t" }], 1.75);
    await store.appendEvents("resp_j", [delta(2)], [{ text: "c", logprobs: [{ token: "c", logprob: -1, bytes: [99], top_logprobs: [] }] }]);
    expect((await store.readChunks("resp_j")).map((c) => c.text)).toEqual(["a", "b", "<", "t", "c"]);
    expect((await store.readChunks("resp_j"))[4].logprobs?.[0].logprob).toBe(-1);
    expect((await store.readEvents("resp_j")).map((e) => e.sequence_number)).toEqual([0, 1, 2]);
    expect((await store.readEvents("resp_j", 2)).map((e) => e.sequence_number)).toEqual([2]);
    await store.delete("resp_j");
    expect(await store.readChunks("resp_j")).toEqual([]);
  });
});

describe("a previous_response_id chain across worker restarts (the openai SDK v7 on client.fetch)", () => {
  // Dedicated: each client's worker ends with it (as on a reload). Shared: the clients of this page join one worker
  // (its end on a real tab close is the shared-tabs tests' business); the store is the same database either way.
  for (const worker of [true, "shared"] as const) {
    it(`4 turns over 3 clients (${worker === true ? "dedicated workers" : "the shared worker"})`, async () => {
      const name = database();
      const all = ["r1", "r2", "r3", "r4"];
      const ask = async (c: Client, input: string, previous?: string) => (await sdk(c).responses.create({ model: MODEL, input, ...(previous ? { previous_response_id: previous } : {}) })).id;
      const one = client(name, worker === "shared" ? all : ["r1", "r2"], { worker });
      const t1 = await ask(one, "turn one");
      const t2 = await ask(one, "turn two", t1);
      one.terminate();
      await sleep(100);
      const two = client(name, worker === "shared" ? all : ["r3"], { worker });
      const t3 = await ask(two, "turn three", t2);
      two.terminate();
      await sleep(100);
      const three = client(name, worker === "shared" ? all : ["r4"], { worker });
      const t4 = await ask(three, "turn four", t3);
      const openai = sdk(three);
      expect((await openai.responses.retrieve(t1)).output_text).toBe("r1");
      expect((await openai.responses.inputItems.list(t2)).data[0]).toMatchObject({ type: "message", content: [{ type: "input_text", text: "turn two" }] });
      const last = await openai.responses.retrieve(t4);
      expect(last).toMatchObject({ previous_response_id: t3, output_text: "r4" });
      // The fourth turn's prompt held every turn: its input tokens grew with the chain.
      const firstUsage = (await openai.responses.retrieve(t1)).usage!.input_tokens;
      expect(last.usage!.input_tokens).toBeGreaterThan(firstUsage * 2);
    });
  }

  it("in this thread (worker: false): the engine sees every turn of the chain", async () => {
    const name = database();
    const engine = createScriptedEngine({ replies: ["r1"] });
    const first = createClient({ engine, worker: false, responsesStore: { databaseName: name } });
    const t1 = await first.responses.create({ model: MODEL, input: "remember the word kiwi" });
    const engine2 = createScriptedEngine({ replies: ["r2"] });
    const second = createClient({ engine: engine2, worker: false, responsesStore: { databaseName: name } });
    await second.responses.create({ model: MODEL, input: "which word?", previous_response_id: t1.id });
    expect(JSON.stringify(engine2.requests[0].messages)).toContain("remember the word kiwi");
  });
});

describe("a background response whose worker stopped", () => {
  it("resumes in the next worker, which prefills the prompt and the reply so far and decodes only the rest: a stream reattached after the cut gets each later event once, in order, and the response.completed of an uninterrupted run", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15 });
    const created = await first.responses.create({ model: MODEL, input: "count", background: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of await first.responses.retrieve(created.id, { stream: true })) {
      seen.push(event);
      if (seen.length === 20) break;
    }
    const cut = seen.at(-1)!.sequence_number;
    await logged(name, created.id, through(cut));
    first.terminate(); // the worker dies mid-generation, as on a reload

    const second = client(name, [WORDS], { tokenDelayMs: 1 });
    // The next worker starts with the client's first request, and resumes what was interrupted.
    await second.responses.retrieve(created.id);
    const rest: ResponseStreamEvent[] = [];
    for await (const event of await second.responses.retrieve(created.id, { stream: true, starting_after: cut })) rest.push(event);
    const all = [...seen, ...rest];
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    const completed = rest.at(-1) as { type: string; response: ResponseObject };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.id).toBe(created.id);

    // The same request run without interruption.
    const third = client(database(), [WORDS], { tokenDelayMs: 1 });
    const other = await third.responses.create({ model: MODEL, input: "count", background: true });
    const uninterrupted: ResponseStreamEvent[] = [];
    for await (const event of await third.responses.retrieve(other.id, { stream: true })) uninterrupted.push(event);
    expect(canon(all)).toBe(canon(uninterrupted));
    const resumed = await second.responses.retrieve(created.id);
    expect(resumed.output_text).toBe(WORDS);
    // The reply was continued, not regenerated: the tokens it had were prefilled (with the prompt: a new worker's cache is empty), only the rest decoded.
    const counts = resumed.x_webgpu!.resumed!;
    const deltasSeen = seen.filter((e) => e.type === "response.output_text.delta").length;
    expect(counts.reply_tokens).toBeGreaterThanOrEqual(deltasSeen);
    expect(counts.reply_tokens).toBeLessThan(60);
    expect(counts.prefilled_tokens).toBe(resumed.usage!.input_tokens + counts.reply_tokens);
    expect(resumed.usage!.output_tokens).toBe(60);
    expect(resumed.x_webgpu!.decode_passes).toBeLessThanOrEqual(60 - counts.reply_tokens);
    expect(completed.response.x_webgpu).toEqual(resumed.x_webgpu);
  });

  it("cut inside its reasoning: continued with the reasoning budget left (the parser state rebuilt from the journal); cut inside a call's arguments under a tool grammar: regenerated; both end as an uninterrupted run", async () => {
    const reasoning = Array.from({ length: 25 }, (_, i) => `r${i}`).join(" ");
    const reply = `<think>${reasoning}</think><tool_call>\n{"name": "lookup", "arguments": {"q": "${WORDS.slice(0, 80)}"}}\n</tool_call>`;
    const withTools = { model: "Qwen3-0.6B-q4f16_1-MLC", input: "look it up", background: true as const, tools: [{ type: "function" as const, name: "lookup", strict: false, parameters: { type: "object", properties: { q: { type: "string" } } } }] };
    const noTools = { model: "Qwen3-0.6B-q4f16_1-MLC", input: "look it up", background: true as const };
    const run = async (body: typeof withTools | typeof noTools, replies: string[], cutWhen: (events: ResponseStreamEvent[]) => boolean) => {
      const name = database();
      const first = client(name, replies, { tokenDelayMs: 15 });
      const created = await first.responses.create(body);
      const seen: ResponseStreamEvent[] = [];
      for await (const event of await first.responses.retrieve(created.id, { stream: true })) {
        seen.push(event);
        if (cutWhen(seen)) break;
      }
      await logged(name, created.id, through(seen.at(-1)!.sequence_number));
      first.terminate();
      const second = client(name, replies, { tokenDelayMs: 1 });
      await second.responses.retrieve(created.id);
      const rest: ResponseStreamEvent[] = [];
      for await (const event of await second.responses.retrieve(created.id, { stream: true, starting_after: seen.at(-1)!.sequence_number })) rest.push(event);
      return { all: [...seen, ...rest], final: await second.responses.retrieve(created.id) };
    };
    const uninterruptedRun = async (body: typeof withTools | typeof noTools) => {
      const third = client(database(), [reply], { tokenDelayMs: 1 });
      const other = await third.responses.create(body);
      const events: ResponseStreamEvent[] = [];
      for await (const event of await third.responses.retrieve(other.id, { stream: true })) events.push(event);
      return events;
    };
    for (const [where, body, cutWhen, continued] of [
      ["in the reasoning", noTools, (e: ResponseStreamEvent[]) => e.filter((x) => x.type === "response.reasoning_text.delta").length === 10, true],
      ["in the call's arguments", withTools, (e: ResponseStreamEvent[]) => e.filter((x) => x.type === "response.function_call_arguments.delta").length === 5, false],
    ] as const) {
      const { all, final } = await run(body, [reply], cutWhen);
      expect(all.map((e) => e.sequence_number), where).toEqual(all.map((_, i) => i));
      expect(canon(all), where).toBe(canon(await uninterruptedRun(body)));
      expect(final.output.find((item) => item.type === "reasoning"), where).toBeDefined();
      if (body === withTools) {
        const call = final.output.find((item) => item.type === "function_call") as { name: string; arguments: string } | undefined;
        expect(call?.name, where).toBe("lookup");
        expect(JSON.parse(call?.arguments ?? "null"), where).toEqual({ q: WORDS.slice(0, 80) });
      }
      if (continued) expect(final.x_webgpu?.resumed?.reply_tokens, where).toBeGreaterThan(10);
      else expect(final.x_webgpu?.resumed, where).toBeUndefined();
    }
  });

  it("stopped before its first token (during the model's load or the prefill): the next worker generates it whole, nothing to continue", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15, loadDelayMs: 3_000 });
    const created = await first.responses.create({ model: MODEL, input: "count", background: true });
    // The queued response is written after create() answers: what the next worker resumes from once it is stored.
    const store = new IdbResponseStore(name);
    await until(() => store.get(created.id), (entry) => entry !== undefined);
    expect((await first.responses.retrieve(created.id)).output).toEqual([]);
    first.terminate();
    const second = client(name, [WORDS], { tokenDelayMs: 1 });
    const ended = await until(() => second.responses.retrieve(created.id), (r) => r.status !== "in_progress" && r.status !== "queued");
    expect(ended).toMatchObject({ status: "completed", output_text: WORDS });
    expect(ended.x_webgpu?.resumed).toBeUndefined();
    const events: ResponseStreamEvent[] = [];
    for await (const event of await second.responses.retrieve(created.id, { stream: true })) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => e.type === "response.created")).toHaveLength(1);
  });

  it("that cannot be continued from its text (penalties count the tokens generated) is regenerated from the start, and ends incomplete with the output it sent when the regeneration differs", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15 });
    const created = await first.responses.create({ model: MODEL, input: "count", background: true, frequency_penalty: 0.5 });
    const sent = await until(() => first.responses.retrieve(created.id), (r) => (r.output_text ?? "").length > 20);
    await logged(name, created.id, withText(sent.output_text!));
    first.terminate();
    // The next worker's generation of the same request differs from its first token on.
    const second = client(name, [WORDS.replace("w0", "v0")], { tokenDelayMs: 1 });
    const ended = await until(() => second.responses.retrieve(created.id), (r) => r.status !== "in_progress" && r.status !== "queued");
    expect(ended).toMatchObject({ status: "incomplete", incomplete_details: { reason: "interrupted" }, error: { code: "resume_diverged" } });
    expect(ended.output_text!.startsWith(sent.output_text!)).toBe(true);
    expect(WORDS.startsWith(ended.output_text!)).toBe(true);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await second.responses.retrieve(created.id, { stream: true })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "response.incomplete" });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it("a stored stream interrupted by its worker's end ends incomplete with its text so far, never in_progress", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15 });
    const stream = await first.responses.create({ model: MODEL, input: "count", stream: true });
    let id = "";
    let text = "";
    // Read without leaving the stream (leaving it would abort the request, and an aborted stream is not kept).
    const events = stream[Symbol.asyncIterator]();
    while (text.split(" ").length <= 10) {
      const { value: event } = await events.next();
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    await logged(name, id, withText(text));
    first.terminate();
    const second = client(name, [], {});
    const ended = await until(() => second.responses.retrieve(id), (r) => r.status !== "in_progress");
    expect(ended).toMatchObject({ status: "incomplete", incomplete_details: { reason: "interrupted" }, error: { code: "interrupted" } });
    expect(WORDS.startsWith(ended.output_text ?? "-")).toBe(true);
    expect((ended.output_text ?? "").length).toBeGreaterThanOrEqual(text.length);
  });

  it("whose model is not in the cache ends incomplete (model_not_cached), never downloading", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15 });
    const created = await first.responses.create({ model: MODEL, input: "count", background: true });
    const sent = await until(() => first.responses.retrieve(created.id), (r) => (r.output_text ?? "").length > 10);
    await logged(name, created.id, withText(sent.output_text!));
    first.terminate();
    // The real engine (web-llm), whose cache holds no model in this browser.
    const second = createClient({ responsesStore: { databaseName: name } });
    clients.push(second);
    const ended = await until(() => second.responses.retrieve(created.id), (r) => r.status !== "in_progress" && r.status !== "queued");
    expect(ended).toMatchObject({ status: "incomplete", incomplete_details: { reason: "interrupted" }, error: { code: "model_not_cached" } });
    expect(WORDS.startsWith(ended.output_text ?? "-")).toBe(true);
  });
});

/** The database's rows, read from this page: summaries, records, item-index rows (by record id) and event batches. */
async function rows(name: string) {
  const db = await openResponsesDatabase(name);
  const tx = db.transaction(["responses", "summaries", "events"], "readonly");
  const read = <T>(request: IDBRequest<T>) => new Promise<T>((resolve, reject) => ((request.onsuccess = () => resolve(request.result)), (request.onerror = () => reject(request.error))));
  const summaries = (await read(tx.objectStore("summaries").getAll())) as Array<{ id: string; bytes: number; logBytes?: number }>;
  const records = (await read(tx.objectStore("responses").getAllKeys())) as string[];
  const indexed = (await read(tx.objectStore("responses").index("itemIds").getAllKeys())) as string[];
  const batches = (await read(tx.objectStore("events").getAll())) as Array<{ id: string; events: unknown[]; chunks?: unknown[] }>;
  db.close();
  const held = new Set(summaries.map((s) => s.id));
  const orphans = [...new Set([...records, ...indexed, ...batches.map((b) => b.id)])].filter((id) => !held.has(id));
  const bytes = (id: string) => batches.filter((b) => b.id === id).reduce((n, b) => n + JSON.stringify(b).length, 0);
  return { summaries, records, batches, orphans, bytes };
}

async function writeRows(name: string, write: (tx: IDBTransaction) => void): Promise<void> {
  const db = await openResponsesDatabase(name);
  await new Promise<void>((resolve, reject) => {
    const tx = db.transaction(["responses", "summaries", "events"], "readwrite");
    write(tx);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

describe("no row outlives its response (real IndexedDB)", () => {
  const generating = (c: Client, id: string) => until(() => c.responses.retrieve(id), (r) => (r.output_text ?? "").length > 10);

  it("deleted, dropped by retention (maxResponses 2, 5 concurrent background runs) or cleared while running: no event, chunk, record or index row is left for an id without a summary", async () => {
    // Deleted while it generates (its run's last flush comes after the delete).
    const name = database();
    const one = client(name, [WORDS, "after"], { tokenDelayMs: 5 });
    const deleted = await one.responses.create({ model: MODEL, input: "count", background: true });
    await generating(one, deleted.id);
    await one.responses.delete(deleted.id);
    await one.responses.create({ model: MODEL, input: "after" }); // queued behind the run; answered once stored
    expect((await rows(name)).orphans).toEqual([]);
    expect((await rows(name)).batches.filter((b) => b.id === deleted.id)).toEqual([]);

    // Retention under concurrent runs.
    const name2 = database();
    const engine = createScriptedEngine({ replies: Array.from({ length: 6 }, () => WORDS), tokenDelayMs: 3 });
    const two = createClient({ engine, responsesStore: { databaseName: name2, maxResponses: 2 } });
    clients.push(two);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await two.responses.create({ model: MODEL, input: `count ${i}`, background: true })).id);
    await two.responses.create({ model: MODEL, input: "after", store: false }); // queued behind every run
    await sleep(300); // the runs' last flushes
    const after = await rows(name2);
    expect(after.summaries.map((s) => s.id).sort()).toEqual(ids.slice(3).sort());
    expect(after.orphans).toEqual([]);
    // The kept ones' logs are whole, and counted in their summaries.
    for (const summary of after.summaries) expect(summary.logBytes).toBeGreaterThan(after.bytes(summary.id) / 2);

    // Cleared while three run.
    const name3 = database();
    const three = client(name3, [WORDS, WORDS, WORDS, "after"], { tokenDelayMs: 5 });
    const running = [];
    for (let i = 0; i < 3; i++) running.push((await three.responses.create({ model: MODEL, input: `count ${i}`, background: true })).id);
    await generating(three, running[0]);
    await three.responses.clear();
    await three.responses.create({ model: MODEL, input: "after", store: false });
    await sleep(300);
    const cleared = await rows(name3);
    expect(cleared.summaries).toEqual([]);
    expect(cleared.orphans).toEqual([]);
  });

  it("appends racing a delete from another context (another tab's store): the summary is checked in the append's own transaction", async () => {
    const name = database();
    const writer = new IdbResponseStore(name, {});
    const otherTab = new IdbResponseStore(name, {});
    await writer.put(entry("resp_r", "r"));
    await otherTab.list(); // open, so its delete lands among the appends
    const results: boolean[] = [];
    const deleting = sleep(30).then(() => otherTab.delete("resp_r"));
    for (let i = 0; i < 200 && results.at(-1) !== false; i++) results.push(await writer.appendEvents("resp_r", [{ type: "response.output_text.delta", sequence_number: i, item_id: "m", output_index: 0, content_index: 0, delta: `d${i}`, logprobs: [] } as unknown as ResponseStreamEvent]));
    expect(await deleting).toBe(true);
    expect((await rows(name)).orphans).toEqual([]);
    expect(results.at(-1)).toBe(false);
    expect(await writer.appendEvents("resp_r", [{ type: "response.output_text.delta", sequence_number: 999, item_id: "m", output_index: 0, content_index: 0, delta: "late", logprobs: [] } as unknown as ResponseStreamEvent])).toBe(false);
    expect((await rows(name)).batches).toEqual([]);
  });

  it("a database with orphans from before is swept at startup; logs an older version did not count are counted (and retention sees them)", async () => {
    const name = database();
    const kept = entry("resp_kept", "kept");
    const big = { type: "response.output_text.delta", sequence_number: 0, item_id: "m", output_index: 0, content_index: 0, delta: "y".repeat(30_000), logprobs: [] };
    await writeRows(name, (tx) => {
      tx.objectStore("responses").put({ id: "resp_kept", seq: Date.now(), itemIds: ["msg_resp_kept"], data: kept });
      tx.objectStore("summaries").put({ id: "resp_kept", seq: Date.now(), bytes: 300 }); // as written before logs counted
      tx.objectStore("events").put({ id: "resp_kept", first: 0, events: [big] });
      tx.objectStore("events").put({ id: "resp_ghost", first: 0, events: [big], chunks: [{ text: "g" }] }); // deleted, then flushed
      tx.objectStore("responses").put({ id: "resp_nosummary", seq: 1, itemIds: ["msg_x"], data: entry("resp_nosummary", "x") });
      tx.objectStore("summaries").put({ id: "resp_norecord", seq: 2, bytes: 10 });
    });
    expect((await rows(name)).orphans.sort()).toEqual(["resp_ghost", "resp_nosummary"]);
    const store = new IdbResponseStore(name, {});
    expect((await store.list()).map((r) => r.id)).toEqual(["resp_kept"]);
    const swept = await rows(name);
    expect(swept.orphans).toEqual([]);
    expect(swept.summaries.map((s) => s.id)).toEqual(["resp_kept"]);
    expect(swept.summaries[0].logBytes).toBeGreaterThan(30_000);
    // A client with a smaller budget drops it when it starts: its log is over it.
    const small = new IdbResponseStore(name, { maxBytes: 20_000 });
    expect(await small.list()).toEqual([]);
    expect((await rows(name)).batches).toEqual([]);
  });

  it("event logs count in maxBytes; a damaged summary row does not make a write drop every response; maxAgeMs holds for reads", async () => {
    const name = database();
    const store = new IdbResponseStore(name, { maxBytes: 20_000 });
    await store.put(entry("resp_a", "a"));
    expect(await store.appendEvents("resp_a", [{ type: "response.output_text.delta", sequence_number: 0, item_id: "m", output_index: 0, content_index: 0, delta: "y".repeat(12_000), logprobs: [] } as unknown as ResponseStreamEvent])).toBe(true);
    await store.put(entry("resp_b", "z".repeat(9_000)));
    expect((await store.list()).map((r) => r.id)).toEqual(["resp_b"]);
    expect((await rows(name)).batches).toEqual([]);

    await writeRows(name, (tx) => tx.objectStore("summaries").put({ id: "resp_b", seq: Date.now(), bytes: "damaged" }));
    const roomy = new IdbResponseStore(name, {});
    await roomy.put(entry("resp_c", "c"));
    await roomy.put(entry("resp_d", "d"));
    expect((await roomy.list()).map((r) => r.id)).toEqual(["resp_b", "resp_c", "resp_d"]);

    const aging = new IdbResponseStore(name, { maxAgeMs: 1_000 });
    await aging.put(entry("resp_e", "e"));
    expect(await aging.get("resp_e")).toBeDefined();
    await sleep(1_100);
    expect(await aging.get("resp_e")).toBeUndefined();
    expect(await aging.list()).toEqual([]);
    expect(await aging.item("msg_resp_e")).toBeUndefined();
  });

  it("a hostile event log (output_index 4294967294) is refused at recovery: the response ends incomplete, stored_response_corrupt, at once", async () => {
    const name = database();
    const first = client(name, [WORDS], { tokenDelayMs: 15 });
    const created = await first.responses.create({ model: MODEL, input: "count", background: true });
    await until(() => first.responses.retrieve(created.id), (r) => (r.output_text ?? "").length > 10);
    await sleep(250);
    first.terminate();
    await sleep(100);
    // The log's item opens at an index no log of this length reaches.
    const { batches } = await rows(name);
    await writeRows(name, (tx) => {
      for (const batch of batches) {
        for (const event of batch.events as Array<{ type: string; output_index?: number }>) if (event.output_index !== undefined) event.output_index = 4294967294;
        tx.objectStore("events").put(batch);
      }
    });
    const second = client(name, [WORDS], { tokenDelayMs: 1 });
    const started = Date.now();
    const ended = await until(() => second.responses.retrieve(created.id), (r) => r.status !== "in_progress" && r.status !== "queued");
    expect(ended).toMatchObject({ status: "incomplete", incomplete_details: { reason: "interrupted" }, error: { code: "stored_response_corrupt" } });
    expect(ended.error?.message).toContain(created.id);
    // Was 103 s with the worker blocked (1e8: 2.1 s).
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
