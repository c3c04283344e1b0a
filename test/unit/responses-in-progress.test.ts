/**
 * A stored response exists from its creation, as on the hosted API: while it
 * streams, retrieve answers it with `status: "in_progress"`, input_items lists
 * its input, and a delete then wins (the stream may finish, but nothing is
 * stored when it ends). Through the JS API and client.fetch, scripted engine.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const BASE = "http://localhost.webgpu/v1";
const post = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const REPLY = "one two three four five six seven eight nine ten";

describe("a streamed stored response, during the stream (JS API)", () => {
  it("retrieve answers it in_progress (id of response.created), input_items lists its input; completed afterwards", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: 3 });
    const stream = await client.responses.create({ model: QWEN25, input: "count", stream: true });
    let id = "";
    let during: Awaited<ReturnType<typeof client.responses.retrieve>> | null = null;
    let items: Awaited<ReturnType<typeof client.responses.inputItems.list>> | null = null;
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta" && during === null) {
        during = await client.responses.retrieve(id);
        items = await client.responses.inputItems.list(id);
      }
    }
    expect(during).toMatchObject({ id, object: "response", status: "in_progress", completed_at: null, usage: null, store: true });
    expect(items?.data).toMatchObject([{ type: "message", role: "user", content: [{ type: "input_text", text: "count" }] }]);
    expect(types.at(-1)).toBe("response.completed");
    const after = await client.responses.retrieve(id);
    expect(after).toMatchObject({ id, status: "completed", output_text: REPLY });
  });

  it("a delete during the stream wins: the stream ends normally, the response is not stored after it", async () => {
    const { client } = scriptedClient([REPLY, "later"], { tokenDelayMs: 3 });
    const stream = await client.responses.create({ model: QWEN25, input: "count", stream: true });
    let id = "";
    let deleted: unknown = null;
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta" && deleted === null) deleted = await client.responses.delete(id);
    }
    expect(deleted).toEqual({ id, object: "response", deleted: true });
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: { id, status: "completed" } });
    await expect(client.responses.retrieve(id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.inputItems.list(id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model: QWEN25, input: "more", previous_response_id: id })).rejects.toMatchObject({ status: 400, code: "previous_response_not_found" });
  });

  it("continuing it with previous_response_id before it completes → 400 saying it is in progress; after, it continues", async () => {
    const { client } = scriptedClient([REPLY, "eleven"], { tokenDelayMs: 3 });
    const stream = await client.responses.create({ model: QWEN25, input: "count", stream: true });
    let id = "";
    let early: unknown = null;
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta" && early === null) early = await client.responses.create({ model: QWEN25, input: "go on", previous_response_id: id }).catch((e) => e);
    }
    expect(early).toMatchObject({ status: 400, param: "previous_response_id", code: "previous_response_in_progress" });
    expect((await client.responses.create({ model: QWEN25, input: "go on", previous_response_id: id })).output_text).toBe("eleven");
  });

  it("a stream that fails after its start is kept as failed (the id response.created announced stays answerable)", async () => {
    const engine = createScriptedEngine({ replies: [{ text: "one two three four", error: new Error("GPU gone"), errorAfterTokens: 2 }] });
    const client = createClient({ engine, worker: false });
    const stream = await client.responses.create({ model: QWEN25, input: "x", stream: true });
    let id = "";
    await expect(async () => {
      for await (const event of stream) if (event.type === "response.created") id = event.response.id;
    }).rejects.toMatchObject({ message: "GPU gone" });
    expect(await client.responses.retrieve(id)).toMatchObject({ id, status: "failed", error: { message: "GPU gone" } });
  });

  it("store: false is never retrievable, not even during the stream", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: 3 });
    const stream = await client.responses.create({ model: QWEN25, input: "count", stream: true, store: false });
    let id = "";
    let during: unknown = null;
    for await (const event of stream) {
      if (event.type === "response.created") id = event.response.id;
      if (event.type === "response.output_text.delta" && during === null) during = await client.responses.retrieve(id).catch((e) => e);
    }
    expect(during).toMatchObject({ status: 404 });
  });
});

/** Reads SSE frames from `reader` until one of type `type` has arrived; returns that frame's data. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, type: string, seen: string[]): Promise<any> {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${type}`);
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = JSON.parse(frame.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
      seen.push(data.type);
      if (data.type === type) return data;
    }
  }
}

describe("a streamed stored response, during the stream (client.fetch)", () => {
  it("GET answers 200 in_progress, input_items 200; DELETE 200 wins; the SSE stream still completes; GET afterwards 404", async () => {
    const { client } = scriptedClient([REPLY], { tokenDelayMs: 3 });
    const response = await client.fetch(`${BASE}/responses`, post({ model: QWEN25, input: "count", stream: true }));
    const reader = response.body!.getReader();
    const seen: string[] = [];
    const created = await readUntil(reader, "response.created", seen);
    const id = created.response.id as string;

    const got = await client.fetch(`${BASE}/responses/${id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ id, status: "in_progress" });
    const items = await client.fetch(`${BASE}/responses/${id}/input_items`);
    expect(items.status).toBe(200);
    expect((await items.json()).data).toHaveLength(1);
    const gone = await client.fetch(`${BASE}/responses/${id}`, { method: "DELETE" });
    expect(gone.status).toBe(200);
    expect(await gone.json()).toEqual({ id, object: "response", deleted: true });

    await readUntil(reader, "response.completed", seen);
    expect(seen).toContain("response.output_text.done");
    expect((await client.fetch(`${BASE}/responses/${id}`)).status).toBe(404);
  });
});
