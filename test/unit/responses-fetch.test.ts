/** The Responses routes of client.fetch: JSON, SSE framing (`event:` + `data:`), GET/DELETE, input_items, errors. */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { packEvents, unpackEvents } from "../../src/worker/event-wire.js";
import type { ResponseStreamEvent } from "../../src/protocol/responses/types.js";
import { scriptedClient } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const post = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

function parseSse(text: string): { event: string; data: any }[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: /);
      expect(lines[1]).toMatch(/^data: /);
      return { event: lines[0].slice(7), data: JSON.parse(lines[1].slice(6)) };
    });
}

describe("POST /responses", () => {
  it("returns the Response as JSON under any base URL", async () => {
    const { client } = scriptedClient(["Hello."]);
    const response = await client.fetch("https://anything.example/custom/base/responses", post({ model: MODEL, input: "hi" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = await response.json();
    expect(body).toMatchObject({ object: "response", status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "Hello." }] }] });
  });

  it("streams SSE frames `event: <type>` + `data: <event>`, whose type matches, ending with response.completed", async () => {
    const { client } = scriptedClient(["one two three"]);
    const response = await client.fetch(`${BASE}/responses`, post({ model: MODEL, input: "hi", stream: true }));
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const frames = parseSse(await response.text());
    for (const f of frames) expect(f.data.type).toBe(f.event);
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i));
    expect(frames[0].event).toBe("response.created");
    expect(frames[frames.length - 1].event).toBe("response.completed");
    const text = frames.filter((f) => f.event === "response.output_text.delta").map((f) => f.data.delta).join("");
    expect(text).toBe("one two three");
    expect(frames[frames.length - 1].data.response.output[0].content[0].text).toBe(text);
  });

  it("an error after the start → response.failed, then an `error` event, and the body ends", async () => {
    const engine = createScriptedEngine({ replies: [{ text: "one two three four", error: new Error("GPU gone"), errorAfterTokens: 2 }] });
    const client = createClient({ engine, worker: false });
    const response = await client.fetch(`${BASE}/responses`, post({ model: MODEL, input: "hi", stream: true }));
    const frames = parseSse(await response.text());
    const [failed, error] = frames.slice(-2);
    expect(failed.event).toBe("response.failed");
    expect(failed.data.response).toMatchObject({ status: "failed", error: { message: "GPU gone" } });
    expect(error.event).toBe("error");
    expect(error.data).toMatchObject({ type: "error", sequence_number: failed.data.sequence_number + 1, error: { message: "GPU gone", type: "server_error" } });
  });

  it("errors before the start are HTTP errors with the OpenAI body", async () => {
    const { client } = scriptedClient([]);
    const bad = await client.fetch(`${BASE}/responses`, post({ model: MODEL, input: "hi", temperature: 9, stream: true }));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ param: "temperature", type: "invalid_request_error" });
    const missing = await client.fetch(`${BASE}/responses`, post({ model: MODEL, input: "hi", previous_response_id: "resp_x" }));
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: "previous_response_not_found", param: "previous_response_id" });
  });

  it("aborting the fetch's signal mid-stream errors the body and stops generation", async () => {
    const { client } = scriptedClient(["a b c d e f g h i j k l m n o p"], { tokenDelayMs: 5 });
    const controller = new AbortController();
    const response = await client.fetch(`${BASE}/responses`, { ...post({ model: MODEL, input: "hi", stream: true }), signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((r) => setTimeout(r, 20));
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
  });
});

describe("GET / DELETE /responses/{id}, GET /responses/{id}/input_items", () => {
  it("serves the stored response, its input items, deletion, and 404 for unknown ids", async () => {
    const { client } = scriptedClient(["Hello."]);
    const created = await (await client.fetch(`${BASE}/responses`, post({ model: MODEL, input: "hi" }))).json();
    const got = await client.fetch(`${BASE}/responses/${created.id}`);
    expect(got.status).toBe(200);
    expect((await got.json()).id).toBe(created.id);
    const items = await (await client.fetch(`${BASE}/responses/${created.id}/input_items?limit=5&order=asc`)).json();
    expect(items).toMatchObject({ object: "list", data: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }], has_more: false });
    const deleted = await client.fetch(`${BASE}/responses/${created.id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ id: created.id, object: "response", deleted: true });
    const gone = await client.fetch(`${BASE}/responses/${created.id}`);
    expect(gone.status).toBe(404);
    expect((await gone.json()).error).toMatchObject({ code: "response_not_found" });
  });
});

describe("worker wire for events", () => {
  it("packEvents/unpackEvents round-trips a stream exactly, key order included, and compacts text deltas", async () => {
    const { client } = scriptedClient(["<think>Hmm let me think.</think>Sure thing.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>"]);
    const stream = await client.responses.create({ model: "Qwen3-0.6B-q4f16_1-MLC", input: "x", reasoning: { summary: "auto" }, tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} } }], stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    for (const [from, to] of [[0, events.length], [3, 9], [5, 6], [4, events.length - 2]]) {
      const batch = events.slice(from, to);
      const packed = packEvents(batch);
      const back = unpackEvents(structuredClone(packed));
      expect(JSON.stringify(back)).toBe(JSON.stringify(batch));
    }
    const packed = packEvents(events);
    const strings = packed.items.filter((i) => typeof i === "string" || Array.isArray(i)).length;
    const deltas = events.filter((e) => e.type.endsWith(".delta")).length;
    expect(strings).toBeGreaterThan(deltas / 2);
  });

  it("output_text deltas (logprobs: [] unless asked for) travel as bare strings after the first; with logprobs they travel whole", async () => {
    const { client } = scriptedClient(["One two three four five six.", "One two three."]);
    const collect = async (body: Record<string, unknown>) => {
      const events: ResponseStreamEvent[] = [];
      for await (const e of await client.responses.create({ model: MODEL, input: "x", stream: true, ...body } as never)) events.push(e as ResponseStreamEvent);
      return events;
    };
    const plain = await collect({});
    const textDeltas = plain.filter((e) => e.type === "response.output_text.delta");
    expect(textDeltas.length).toBeGreaterThan(3);
    const packed = packEvents(plain);
    expect(packed.items.filter((i) => typeof i === "string")).toHaveLength(textDeltas.length - 1);
    const back = unpackEvents(structuredClone(packed));
    expect(JSON.stringify(back)).toBe(JSON.stringify(plain));
    // Each unpacked event has its own empty logprobs array, as the original events do.
    const backDeltas = back.filter((e) => e.type === "response.output_text.delta") as Array<{ logprobs: unknown[] }>;
    expect(new Set(backDeltas.map((e) => e.logprobs)).size).toBe(backDeltas.length);

    const withLogprobs = await collect({ include: ["message.output_text.logprobs"], top_logprobs: 2 });
    const packedLp = packEvents(withLogprobs);
    expect(packedLp.items.filter((i) => typeof i === "string")).toHaveLength(0);
    expect(JSON.stringify(unpackEvents(structuredClone(packedLp)))).toBe(JSON.stringify(withLogprobs));
  });
});
