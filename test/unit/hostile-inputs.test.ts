/**
 * Requests shaped to break the pipeline rather than use it, each answered
 * with a 4xx that names the problem instead of a 500 from deep inside: form
 * fields named after Object.prototype members, JSON nested thousands of levels
 * deep (tool-call arguments, Responses items, /responses/compact input), an
 * upload far over the size limit (refused by its size, before it is read), and
 * a host method that throws before returning a promise (its port still
 * closes).
 */
import { afterEach, describe, expect, it } from "vitest";
import * as Comlink from "comlink";
import { EngineHost, createScriptedEngine, exposeEngineHost } from "../../src/testing.js";
import { MAX_JSON_DEPTH } from "../../src/protocol/json-depth.js";
import { refusal, scriptedClient, user } from "./support/client.js";
import { makeWav } from "./support/wav.js";

const BASE = "http://localhost.webgpu/v1";
const deepArray = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

describe("multipart form fields are names, not property lookups", () => {
  it.each(["constructor[]", "__proto__[]", "toString[]", "constructor", "__proto__"])("a %s field is a 400 naming it", async (name) => {
    const { client } = scriptedClient(["ok"]);
    const form = new FormData();
    form.append("file", new File([makeWav({ seconds: 0.5 }) as BlobPart], "a.wav"));
    form.append("model", "gemma-4-E2B-it-q4f32_1-MLC");
    form.append(name, "x");
    const response = await client.fetch(`${BASE}/audio/transcriptions`, { method: "POST", body: form });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "unknown_parameter", param: name.replace("[]", "") } });
  });
});

describe("JSON nested past the bound is a 400 before it reaches anything recursive", () => {
  it("tool_calls arguments thousands of levels deep", async () => {
    const { client, engine } = scriptedClient(["ok"]);
    const body = {
      model: "Qwen3-0.6B",
      messages: [user("x"), { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: deepArray(100_000) } }] }, { role: "tool", tool_call_id: "c1", content: "r" }],
    };
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: JSON.stringify(body) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "nesting_too_deep", param: "messages[1].tool_calls[0].function.arguments" } });
    expect(engine.requests).toHaveLength(0);
  });

  it("arguments at the bound pass; brackets inside strings do not count", async () => {
    const { client } = scriptedClient(["ok"]);
    const args = `{"a":${deepArray(MAX_JSON_DEPTH - 1)},"s":${JSON.stringify("[".repeat(1_000))}}`;
    const completion = await client.chat.completions.create({
      model: "Qwen3-0.6B",
      messages: [user("x"), { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: args } }] }, { role: "tool", tool_call_id: "c1", content: "r" }],
    });
    expect(completion.choices[0].message.content).toBe("ok");
  });

  it("a Responses function_call item with deep arguments, and a deep Responses body", async () => {
    const { client } = scriptedClient(["ok"]);
    const input = [user("x"), { type: "function_call", call_id: "c1", name: "f", arguments: deepArray(50_000) }, { type: "function_call_output", call_id: "c1", output: "r" }];
    const response = await client.fetch(`${BASE}/responses`, { method: "POST", body: JSON.stringify({ model: "Qwen3-0.6B", input }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "nesting_too_deep", param: "input[1].arguments" } });
    const deepBody = `{"model":"Qwen3-0.6B","input":[{"role":"user","content":${deepArray(20_000)}}]}`;
    expect((await client.fetch(`${BASE}/responses`, { method: "POST", body: deepBody })).status).toBe(400);
  });

  it("/responses/compact input nested 5 000 arrays or 20 000 messages deep", async () => {
    const { client } = scriptedClient(["ok"]);
    const messages = `${'{"type":"message","role":"user","content":['.repeat(20_000)}"hi"${"]}".repeat(20_000)}`;
    for (const input of [deepArray(5_000), `[${messages}]`]) {
      const response = await client.fetch(`${BASE}/responses/compact`, { method: "POST", body: `{"model":"Qwen3-0.6B","input":${input}}` });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "nesting_too_deep" } });
    }
  });

  it("a chat body nested deep in its content", async () => {
    const { client } = scriptedClient(["ok"]);
    const body = `{"model":"Qwen3-0.6B","messages":[{"role":"user","content":[{"type":"text","text":"hi","extra":${deepArray(10_000)}}]}]}`;
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "nesting_too_deep" } });
  });
});

describe("uploads are measured before they are read", () => {
  it("a 200 MB file is a 413 from its size: its bytes are never read", async () => {
    const { client } = scriptedClient(["ok"]);
    let read = 0;
    const huge = { name: "long.wav", type: "audio/wav", size: 200 * 1024 * 1024, arrayBuffer: async () => (read++, new ArrayBuffer(8)), stream: () => new ReadableStream(), slice: () => huge };
    const error = await refusal(client.audio.transcriptions.create({ file: huge as unknown as File, model: "gemma-4-E2B-it-q4f32_1-MLC" }));
    expect(error).toMatchObject({ status: 413, code: "audio_too_large", param: "file" });
    expect(read).toBe(0);
  });

  it("a stream stops being read once it passes the limit", async () => {
    const { client } = scriptedClient(["ok"]);
    let pulled = 0;
    async function* chunks() {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield new Uint8Array(1024 * 1024);
      }
    }
    const error = await refusal(client.audio.transcriptions.create({ file: chunks() as unknown as File, model: "gemma-4-E2B-it-q4f32_1-MLC" }));
    expect(error).toMatchObject({ status: 413, code: "audio_too_large" });
    expect(pulled).toBeLessThan(30);
  });

  it("a raw multipart body over the limit is a 413 before the platform parses it", async () => {
    const { client } = scriptedClient(["ok"]);
    const body = new Uint8Array(30 * 1024 * 1024);
    const response = await client.fetch(`${BASE}/audio/transcriptions`, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body });
    expect(response.status).toBe(413);
  });
});

describe("a host method that throws before returning a promise", () => {
  const ports: MessagePort[] = [];
  afterEach(() => {
    for (const port of ports.splice(0)) port.close();
  });

  it("compactResponse throwing synchronously: the caller gets the error and the request's port closes", async () => {
    class ThrowingHost extends EngineHost {
      override compactResponse(): never {
        throw new Error("compaction broke before it began");
      }
    }
    const worker = new MessageChannel();
    ports.push(worker.port1, worker.port2);
    exposeEngineHost(new ThrowingHost({ engine: createScriptedEngine({ replies: ["ok"] }) }), worker.port2 as unknown as Comlink.Endpoint);
    const api = Comlink.wrap<{ compactResponse(body: unknown, port: MessagePort): Promise<unknown> }>(worker.port1 as unknown as Comlink.Endpoint);
    const request = new MessageChannel();
    ports.push(request.port1);
    // Node's MessagePort tells one end when the other closes.
    const closed = new Promise<void>((resolve) => (request.port1 as unknown as { once(event: "close", listener: () => void): void }).once("close", resolve));
    await expect(api.compactResponse({ model: "Qwen3-0.6B", input: "hi" }, Comlink.transfer(request.port2, [request.port2]))).rejects.toThrow(/compaction broke/);
    await expect(Promise.race([closed.then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("still open"), 2000))])).resolves.toBe("closed");
  });

  type StreamApi = {
    streamCompletion(body: unknown, port: MessagePort): Promise<void>;
    retrieveResponseStream(id: string, startingAfter: number | undefined, port: MessagePort): Promise<void>;
  };
  it.each([
    ["streamCompletion without a prompt", (api: StreamApi, port: MessagePort) => api.streamCompletion({ model: "Qwen3-0.6B" }, port), /prompt/],
    ["retrieveResponseStream of an unknown id", (api: StreamApi, port: MessagePort) => api.retrieveResponseStream("resp_unknown", undefined, port), /resp_unknown/],
  ] as const)("%s: the stream never starts, the caller gets the error and the request's port closes", async (_what, call, message) => {
    const worker = new MessageChannel();
    ports.push(worker.port1, worker.port2);
    exposeEngineHost(new EngineHost({ engine: createScriptedEngine({ replies: ["ok"] }) }), worker.port2 as unknown as Comlink.Endpoint);
    const api = Comlink.wrap<StreamApi>(worker.port1 as unknown as Comlink.Endpoint);
    const request = new MessageChannel();
    ports.push(request.port1);
    const closed = new Promise<void>((resolve) => (request.port1 as unknown as { once(event: "close", listener: () => void): void }).once("close", resolve));
    await expect(call(api, Comlink.transfer(request.port2, [request.port2]))).rejects.toThrow(message);
    await expect(Promise.race([closed.then(() => "closed"), new Promise((resolve) => setTimeout(() => resolve("still open"), 2000))])).resolves.toBe("closed");
  });
});
