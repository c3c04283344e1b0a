/** client.fetch on the wire: routes, accepted input forms, headers, SSE framing, errors and abort, as SDKs see them. */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const body = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: "Qwen3-0.6B", messages: [user("hi")], ...extra });
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** Splits an SSE body into its events (blank-line separated). */
const events = (text: string) => text.split("\n\n").filter(Boolean);

describe("client.fetch routes", () => {
  it("serves POST /chat/completions as JSON with x-request-id", async () => {
    const { client } = scriptedClient(["Hello there."]);
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", headers: { authorization: "Bearer whatever" }, body: body() });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const completion = await response.json();
    expect(completion).toMatchObject({ object: "chat.completion", model: "Qwen3-0.6B", choices: [{ message: { role: "assistant", content: "Hello there." }, finish_reason: "stop" }] });
    expect(response.headers.get("x-request-id")).toBe(completion.x_webgpu.request_id);
  });

  it("accepts a Request object, a URL object, Headers and a byte body", async () => {
    const { client } = scriptedClient(["one", "two", "three"]);
    const fromRequest = await client.fetch(new Request(`${BASE}/chat/completions`, { method: "POST", headers: new Headers({ "content-type": "application/json" }), body: body() }));
    expect((await fromRequest.json()).choices[0].message.content).toBe("one");
    const fromUrl = await client.fetch(new URL(`${BASE}/chat/completions`), { method: "post", body: new TextEncoder().encode(body()) });
    expect((await fromUrl.json()).choices[0].message.content).toBe("two");
    // init overrides the Request's own fields, as in fetch
    const overridden = await client.fetch(new Request(`${BASE}/models`), { method: "POST", body: body() });
    expect(overridden.status).toBe(404);
    const relative = await client.fetch("/v1/chat/completions", { method: "POST", body: body() });
    expect((await relative.json()).choices[0].message.content).toBe("three");
  });

  it("a Request whose body was already read is a 400 that says so (not a 500), on JSON and form routes", async () => {
    const { client, engine } = scriptedClient(["unused"]);
    const read = new Request(`${BASE}/chat/completions`, { method: "POST", body: body() });
    await read.text();
    const response = await client.fetch(read);
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect(error).toMatchObject({ code: "body_already_read", message: expect.stringMatching(/already been read/) });
    const form = new FormData();
    form.set("model", "whisper-tiny");
    const upload = new Request(`${BASE}/audio/transcriptions`, { method: "POST", body: form });
    await upload.formData();
    const refused = await client.fetch(upload);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.code).toBe("body_already_read");
    expect(engine.requests).toHaveLength(0);
  });

  it("accepts a Request from another implementation (polyfill, other realm)", async () => {
    const { client } = scriptedClient(["foreign"]);
    const foreign = { url: `${BASE}/chat/completions`, method: "POST", headers: {}, signal: null, text: async () => body() };
    const response = await client.fetch(foreign as unknown as Request);
    expect((await response.json()).choices[0].message.content).toBe("foreign");
  });

  it("serves GET /models and GET /models/{id}, with vendor-prefixed ids encoded or not", async () => {
    const { client } = scriptedClient([]);
    const list = await (await client.fetch(`${BASE}/models`)).json();
    expect(list.object).toBe("list");
    expect(list.data.length).toBeGreaterThan(0);
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: expect.any(String), created: expect.any(Number) });
    const encoded = await client.fetch(`${BASE}/models/${encodeURIComponent("Qwen/Qwen3-0.6B")}`);
    expect(encoded.status).toBe(200);
    expect(await encoded.json()).toMatchObject({ id: "Qwen/Qwen3-0.6B", object: "model" });
    const plain = await client.fetch(`${BASE}/models/Qwen/Qwen3-0.6B`);
    expect(await plain.json()).toMatchObject({ id: "Qwen/Qwen3-0.6B" });
    expect((await client.fetch(`${BASE}/models/bad%E0escape`)).status).toBe(404);
    const unknown = await client.fetch(`${BASE}/models/no-such-model`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: "model_not_found" });
  });

  it("answers every other route with a 404 JSON error", async () => {
    const { client } = scriptedClient([]);
    for (const [method, path] of [["POST", "/edits"], ["GET", "/completions"], ["GET", "/chat/completions"], ["GET", "/embeddings"], ["DELETE", "/models/x"]]) {
      const response = await client.fetch(`${BASE}${path}`, { method, body: method === "GET" ? undefined : "{}" });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("x-should-retry")).toBe("false");
      const { error } = await response.json();
      expect(error).toMatchObject({ type: "not_found_error", code: "unknown_route" });
      expect(error.message).toContain(`${method} /v1${path}`);
    }
  });
});

describe("client.fetch streaming", () => {
  it("frames chunks as SSE data events, then [DONE], then closes", async () => {
    const { client } = scriptedClient(["Hello there."]);
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ stream: true, stream_options: { include_usage: true } }) });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const frames = events(await response.text());
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.slice(0, -1).map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      return JSON.parse(frame.slice(6));
    });
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello there.");
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
  });

  it("returns the response as soon as generation starts, before it ends", async () => {
    const { client } = scriptedClient([words(40)], { tokenDelayMs: 10 });
    const started = performance.now();
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ stream: true }) });
    const headersAfter = performance.now() - started;
    await response.text();
    const totalAfter = performance.now() - started;
    expect(headersAfter).toBeLessThan(totalAfter / 2);
  });

  it("reports an error after the stream started as event: error, then closes", async () => {
    const { client } = scriptedClient([{ text: "a b c d", error: new ApiError({ status: 503, code: "device_lost", message: "GPU lost" }), errorAfterTokens: 2 }]);
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ stream: true }) });
    expect(response.status).toBe(200);
    const frames = events(await response.text());
    expect(frames.at(-1)).toBe('event: error\ndata: {"error":{"message":"GPU lost","type":"service_unavailable","param":null,"code":"device_lost"}}');
    expect(frames).not.toContain("data: [DONE]");
  });
});

describe("client.fetch errors before the stream", () => {
  it("uses the contract status and body, with x-should-retry: false when a retry cannot help", async () => {
    const { client } = scriptedClient([]);
    const bad = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ temperature: 9, stream: true }) });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("x-should-retry")).toBe("false");
    expect((await bad.json()).error).toMatchObject({ type: "invalid_request_error", param: "temperature" });
    const notJson = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: "{not json" });
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe("invalid_json");
    const missing = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ model: "no-such-model" }) });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-should-retry")).toBe("false");
  });

  it("answers a full queue with 429 and retry-after-ms, and no x-should-retry: false", async () => {
    const { client } = scriptedClient(() => words(30), { tokenDelayMs: 2, maxQueue: 1 });
    const responses = await Promise.all([0, 1, 2].map(() => client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body() })));
    const limited = responses.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(limited!.headers.get("x-should-retry")).toBeNull();
    expect((await limited!.json()).error).toMatchObject({ type: "rate_limit_error", code: "queue_full" });
  });
});

describe("client.fetch abort", () => {
  it("rejects with the signal's reason when aborted before or during a non-streaming request", async () => {
    const { client } = scriptedClient(() => words(200), { tokenDelayMs: 2 });
    const early = new AbortController();
    early.abort();
    await expect(client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body(), signal: early.signal })).rejects.toMatchObject({ name: "AbortError" });
    const late = new AbortController();
    const pending = client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body(), signal: late.signal });
    setTimeout(() => late.abort(), 20);
    const error = await pending.catch((e) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect(error.name).toBe("AbortError");
    const next = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ max_tokens: 2 }) });
    expect((await next.json()).choices[0].message.content).toBe("w0 w1");
  });

  it("errors the SSE body with AbortError when the signal aborts mid-stream, and stops generation", async () => {
    const { client, engine } = scriptedClient(() => words(500), { tokenDelayMs: 1 });
    const controller = new AbortController();
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ stream: true }), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const error = await (async () => {
      for (;;) {
        const { done } = await reader.read();
        if (done) return null;
      }
    })().catch((e) => e);
    expect(error).toMatchObject({ name: "AbortError" });
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ max_tokens: 2 }) });
    expect((await next.json()).choices[0].message.content).toBe("w0 w1");
    expect(engine.requests).toHaveLength(2);
  });

  it("an abort while the request body stalls rejects with the signal's reason and cancels the body", async () => {
    const { client, engine } = scriptedClient(["unused"]);
    const stalled = () => {
      const seen: { cancelled?: unknown } = {};
      // One byte, then nothing: a body whose sender stopped sending.
      const stream = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode("{")), cancel: (reason) => void (seen.cancelled = reason) });
      return { stream, seen };
    };
    const viaInit = stalled();
    const controller = new AbortController();
    const pending = client.fetch(`${BASE}/chat/completions`, { method: "POST", body: viaInit.stream, signal: controller.signal, duplex: "half" } as RequestInit);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(viaInit.seen.cancelled).toMatchObject({ name: "AbortError" });
    // The same with the body and signal on a Request.
    const viaRequest = stalled();
    const timeout = AbortSignal.timeout(20);
    const request = new Request(`${BASE}/chat/completions`, { method: "POST", body: viaRequest.stream, signal: timeout, duplex: "half" } as RequestInit);
    await expect(client.fetch(request)).rejects.toMatchObject({ name: "TimeoutError" });
    expect(engine.requests).toHaveLength(0);
  });

  it("stops generation when the body is cancelled", async () => {
    const { client } = scriptedClient(() => words(500), { tokenDelayMs: 1 });
    const response = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ stream: true }) });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await client.fetch(`${BASE}/chat/completions`, { method: "POST", body: body({ max_tokens: 1 }) });
    expect((await next.json()).choices[0].message.content).toBe("w0");
  });
});
