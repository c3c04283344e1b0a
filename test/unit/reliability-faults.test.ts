/**
 * Faults below the API: an engine that throws mid-generation, and a lost GPU
 * device. The caller always gets a settled answer — an in-stream error
 * (`event: error` on the fetch layer, a throw from the iterator), never a hang
 * — and the next request works. (The worker dying is in
 * test/browser/reliability-worker.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { ApiError, createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, type ScriptedReply } from "../../src/testing.js";

const model = "Qwen3-0.6B";
const ask = (content: string) => ({ model, messages: [{ role: "user" as const, content }] });
const deviceLost = () => new ApiError({ status: 503, code: "device_lost", message: "The GPU device was lost (the driver reset or the tab was backgrounded too long). Retry: the model reloads." });

/** A client whose engine answers each prompt with the reply `script` gives it. */
function clientWith(script: (prompt: string) => ScriptedReply) {
  const engine = createScriptedEngine({ replies: (request) => script(String(request.messages.at(-1)?.content)), tokenDelayMs: 1 });
  return { engine, client: createClient({ engine, worker: false }) };
}

async function drain(client: Client, content: string): Promise<{ text: string; error: unknown }> {
  let text = "";
  try {
    for await (const chunk of await client.chat.completions.create({ ...ask(content), stream: true })) text += chunk.choices[0]?.delta.content ?? "";
    return { text, error: null };
  } catch (error) {
    return { text, error };
  }
}

/** Reads an SSE response to its end: the data payloads and the error events. */
async function readSse(response: Response): Promise<{ data: string[]; errors: unknown[]; raw: string }> {
  const raw = await response.text();
  const data: string[] = [];
  const errors: unknown[] = [];
  for (const event of raw.split("\n\n").filter(Boolean)) {
    const payload = /^data: (.*)$/m.exec(event)?.[1] ?? "";
    if (/^event: error$/m.test(event)) errors.push(JSON.parse(payload));
    else data.push(payload);
  }
  return { data, errors, raw };
}

const fetchStream = (client: Client, content: string) =>
  client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify({ ...ask(content), stream: true }) });

describe("an engine that throws mid-generation", () => {
  const failing = (prompt: string): ScriptedReply =>
    prompt.startsWith("fail") ? { text: "one two three four five", error: prompt === "fail-plain" ? new Error("kernel panic in sampler") : new ApiError({ status: 500, code: "engine_error", message: "The engine failed while decoding." }), errorAfterTokens: 3 } : "recovered fine";

  it("the iterator throws the error after the tokens that made it; the next request succeeds", async () => {
    const { client } = clientWith(failing);
    const { text, error } = await drain(client, "fail-api");
    expect(text).toBe("one two three");
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, code: "engine_error" });
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    expect(await drain(client, "ok")).toEqual({ text: "recovered fine", error: null });
  });

  it("a plain Error becomes a 500 ApiError that keeps its message", async () => {
    const { client } = clientWith(failing);
    const { error } = await drain(client, "fail-plain");
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, type: "server_error", message: expect.stringContaining("kernel panic in sampler") });
    await expect(client.chat.completions.create(ask("fail-plain"))).rejects.toMatchObject({ status: 500 });
    expect((await client.chat.completions.create(ask("ok"))).choices[0].message.content).toBe("recovered fine");
  });

  it("the fetch layer ends the SSE stream with `event: error` (no [DONE]) and serves the next request", async () => {
    const { client } = clientWith(failing);
    const response = await fetchStream(client, "fail-api");
    expect(response.status).toBe(200);
    const { data, errors, raw } = await readSse(response);
    expect(data.map((d) => JSON.parse(d).choices[0]?.delta.content ?? "").join("")).toBe("one two three");
    expect(errors).toEqual([{ error: { message: "The engine failed while decoding.", type: "server_error", param: null, code: "engine_error" } }]);
    expect(raw).not.toContain("[DONE]");
    const next = await readSse(await fetchStream(client, "ok"));
    expect(next.errors).toEqual([]);
    expect(next.data.at(-1)).toBe("[DONE]");
  });

  it("an error before the first token is the HTTP status itself on the fetch layer", async () => {
    const { client } = clientWith((prompt) => (prompt === "fail-now" ? { text: "x", error: new ApiError({ status: 500, code: "engine_error", message: "The engine failed at prefill." }), errorAfterTokens: 0 } : "fine"));
    const response = await fetchStream(client, "fail-now");
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: "engine_error" } });
    await expect(client.chat.completions.create({ ...ask("fail-now"), stream: true })).rejects.toMatchObject({ status: 500 });
    expect((await client.chat.completions.create(ask("again"))).choices[0].message.content).toBe("fine");
  });
});

describe("a lost GPU device", () => {
  const losing = (prompt: string): ScriptedReply => (prompt.startsWith("lose") ? { text: "alpha beta gamma delta", error: deviceLost(), errorAfterTokens: prompt === "lose-early" ? 0 : 2 } : "back online");

  it("mid-stream: 503 device_lost from the iterator; the host unloads and the next request reloads the model", async () => {
    const { engine, client } = clientWith(losing);
    const { text, error } = await drain(client, "lose-mid");
    expect(text).toBe("alpha beta");
    expect(error).toMatchObject({ status: 503, code: "device_lost", type: "service_unavailable" });
    expect(engine.loadedModel).toBeNull();
    expect(engine.loads).toHaveLength(1);
    expect(await drain(client, "ok")).toEqual({ text: "back online", error: null });
    expect(engine.loads).toHaveLength(2);
  });

  it("before the first token: create() rejects with 503, non-streamed too, and each next request recovers", async () => {
    const { engine, client } = clientWith(losing);
    await expect(client.chat.completions.create({ ...ask("lose-early"), stream: true })).rejects.toMatchObject({ status: 503, code: "device_lost" });
    expect((await client.chat.completions.create(ask("ok"))).choices[0].message.content).toBe("back online");
    await expect(client.chat.completions.create(ask("lose-mid"))).rejects.toMatchObject({ status: 503, code: "device_lost" });
    expect((await client.chat.completions.create(ask("ok"))).choices[0].message.content).toBe("back online");
    expect(engine.loads).toHaveLength(3);
  });

  it("on the fetch layer: 503 with a retryable response before the stream, `event: error` within it", async () => {
    const { engine, client } = clientWith(losing);
    const before = await fetchStream(client, "lose-early");
    expect(before.status).toBe(503);
    expect(before.headers.get("x-should-retry")).not.toBe("false");
    expect(await before.json()).toMatchObject({ error: { type: "service_unavailable", code: "device_lost" } });
    const within = await readSse(await fetchStream(client, "lose-mid"));
    expect(within.errors).toMatchObject([{ error: { code: "device_lost" } }]);
    const after = await readSse(await fetchStream(client, "ok"));
    expect(after.data.at(-1)).toBe("[DONE]");
    expect(engine.loads).toHaveLength(3);
  });
});
