/**
 * createClient({ fallback }): requests this device cannot serve (here: an
 * engine that needs WebGPU, in Node where there is none) go to a remote
 * OpenAI-compatible server — a real HTTP server on 127.0.0.1 serving a second
 * client's fetch — and come back in the same shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import OpenAI from "openai";
import { ApiError, createClient, type Client, type ClientOptions } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngine } from "../../src/testing.js";
import { shouldFallBack, withFallback } from "../../src/client/fallback.js";
import { inProcessBackend } from "../../src/client/backend.js";
import { ChunkQueue } from "../../src/client/chunk-queue.js";
import type { GpuProbe } from "../../src/gpu/probe.js";
import { user } from "./support/client.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

/** The remote side: its own scripted client behind node:http, recording what it received. */
let remote: { client: Client; engine: ScriptedEngine; received: { headers: IncomingHttpHeaders; body: Record<string, unknown> }[] };
let server: Server;
let remoteURL: string;

beforeAll(async () => {
  const engine = createScriptedEngine({
    replies: (request) => {
      const prompt = String(request.messages.at(-1)?.content);
      if (prompt === "long") return words(3000); // ~6 s at 2 ms a token: only an abort frees the remote engine sooner
      if (prompt === "break mid-stream") return { text: "a b c d", error: new ApiError({ status: 500, code: "remote_failure", message: "remote engine failed" }), errorAfterTokens: 2 };
      return `Remote says: ${prompt}.`;
    },
    tokenDelayMs: 2,
  });
  remote = { client: createClient({ engine, worker: false }), engine, received: [] };
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    if (body) remote.received.push({ headers: req.headers, body: JSON.parse(body) });
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const response = await remote.client.fetch(`http://remote${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: body || undefined, signal: abort.signal });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body as never).on("error", () => res.destroy()).pipe(res);
    else res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  remoteURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A local client whose engine needs WebGPU, which Node lacks: every chat request 503s locally. */
function gpuLessClient(fallback?: ClientOptions["fallback"]) {
  const engine = Object.assign(createScriptedEngine({ replies: ["local reply"] }), { requiresGpu: true });
  return { client: createClient({ engine, worker: false, fallback }), engine };
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: "Qwen3-0.6B", messages: [user(content)], ...extra });
const askStream = (content: string, extra: Record<string, unknown> = {}) => ({ ...ask(content, extra), stream: true as const });

describe("fallback: JS API", () => {
  it("a request the device cannot serve is answered by the remote server", async () => {
    const { client, engine } = gpuLessClient({ baseURL: remoteURL, apiKey: "sk-remote" });
    remote.received.length = 0;
    const completion = await client.chat.completions.create(ask("hello"));
    expect(completion).toMatchObject({ object: "chat.completion", choices: [{ message: { role: "assistant", content: "Remote says: hello." }, finish_reason: "stop" }] });
    expect(engine.requests).toHaveLength(0);
    expect(remote.received).toHaveLength(1);
    expect(remote.received[0].headers.authorization).toBe("Bearer sk-remote");
    expect(remote.received[0].body).toMatchObject({ model: "Qwen3-0.6B", stream: false, messages: [{ role: "user", content: "hello" }] });
  });

  it("streams: chunks parsed from the remote SSE, usage included", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL, model: (m) => `Qwen/${m}` });
    remote.received.length = 0;
    const stream = await client.chat.completions.create(askStream("stream please", { stream_options: { include_usage: true } }));
    let text = "";
    let finish: string | null = null;
    let usage: unknown = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("Remote says: stream please.");
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
    expect(remote.received[0].body).toMatchObject({ model: "Qwen/Qwen3-0.6B", stream: true });
    expect(remote.received[0].headers.authorization).toBeUndefined();
  });

  it("provider.allow_fallbacks: false or require_local: true keep the local 503", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL });
    remote.received.length = 0;
    for (const provider of [{ allow_fallbacks: false }, { require_local: true }]) {
      await expect(client.chat.completions.create(ask("hi", { provider }))).rejects.toMatchObject({ status: 503, code: "webgpu_unavailable" });
    }
    expect(remote.received).toHaveLength(0);
  });

  it("without the fallback option the request stays a 503", async () => {
    const { client } = gpuLessClient();
    await expect(client.chat.completions.create(ask("hi"))).rejects.toMatchObject({ status: 503, code: "webgpu_unavailable" });
  });

  it("the remote server's errors keep their status and fields", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL, model: "no-such-remote-model" });
    await expect(client.chat.completions.create(ask("hi"))).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    const streaming = gpuLessClient({ baseURL: remoteURL }).client;
    const stream = await streaming.chat.completions.create(askStream("break mid-stream"));
    let text = "";
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e) => e);
    expect(text).toBe("a b");
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: "remote engine failed", code: "remote_failure" });
  });

  it("an unreachable fallback server is a 502 that names it", async () => {
    const { client } = gpuLessClient({ baseURL: "http://127.0.0.1:9/v1" });
    const error = await client.chat.completions.create(ask("hi")).catch((e) => e);
    expect(error).toMatchObject({ status: 502, code: "fallback_unreachable" });
    expect(error.message).toContain("http://127.0.0.1:9/v1");
  });

  it("aborting a fallback stream ends it and stops the remote generation", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL });
    const stream = await client.chat.completions.create(askStream("long"));
    let n = 0;
    for await (const _chunk of stream) if (++n === 3) break;
    expect(n).toBe(3);
    await expect.poll(() => remote.client.queueState(), { timeout: 1500 }).toEqual({ waiting: 0, running: false });
  });
});

describe("fallback: an adapter that is there but too small", () => {
  /** A SwiftShader-like adapter: no shader-f16, 128 MB storage buffers. */
  const smallAdapter = async (): Promise<GpuProbe> => ({
    available: true,
    info: {
      vendor: "google",
      architecture: "swiftshader",
      device: "",
      description: "",
      features: [],
      limits: { maxBufferSize: 2 ** 28, maxStorageBufferBindingSize: 2 ** 27, maxComputeWorkgroupStorageSize: 16384, maxComputeInvocationsPerWorkgroup: 256 },
      isFallbackAdapter: false,
    },
  });
  const backend = () => {
    // a GPU engine as the host sees it, but with no weights to download (acceptsPrefetch: false)
    const engine = Object.assign(createScriptedEngine({ replies: ["local reply"] }), { requiresGpu: true, acceptsPrefetch: async () => false });
    return { engine, backend: withFallback(inProcessBackend({ engine, probeGpu: smallAdapter }), { baseURL: remoteURL }) };
  };

  it("a model needing shader-f16 on an adapter without it goes to the remote server", async () => {
    const { engine, backend: b } = backend();
    const completion = await b.createChatCompletion(ask("f16 please", { model: "Qwen3-0.6B-q4f16_1-MLC" }), new AbortController().signal);
    expect(completion.choices[0].message.content).toBe("Remote says: f16 please.");
    expect(engine.requests).toHaveLength(0);
  });

  it("a model whose buffers do not fit goes to the remote server, streamed", async () => {
    const { engine, backend: b } = backend();
    const queue = new ChunkQueue();
    await b.streamChatCompletion(ask("too big", { model: "gemma-2b-it-q4f32_1-MLC", stream: true }), queue, new AbortController().signal);
    let text = "";
    for (let chunk = await queue.next(); chunk; chunk = await queue.next()) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Remote says: too big.");
    expect(engine.requests).toHaveLength(0);
  });

  it("a model the adapter can run stays local", async () => {
    const { engine, backend: b } = backend();
    const completion = await b.createChatCompletion(ask("small", { model: "Qwen3-0.6B-q4f32_1-MLC" }), new AbortController().signal);
    expect(completion.choices[0].message.content).toBe("local reply");
    expect(engine.requests).toHaveLength(1);
  });
});

describe("fallback: through client.fetch and the OpenAI SDK", () => {
  it("create and stream give the SDK the same shapes as a local reply", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL, apiKey: "sk-remote" });
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", fetch: client.fetch });
    const completion = await openai.chat.completions.create(ask("via sdk"));
    expect(completion.choices[0].message.content).toBe("Remote says: via sdk.");
    const final = await openai.chat.completions.stream(ask("via helper")).finalChatCompletion();
    expect(final.choices[0].message).toMatchObject({ role: "assistant", content: "Remote says: via helper." });
    // the local key never leaves the device: the remote got its own
    expect(remote.received.at(-1)?.headers.authorization).toBe("Bearer sk-remote");
  });

  it("an opted-out request is a 503 the SDK does not retry", async () => {
    const { client } = gpuLessClient({ baseURL: remoteURL });
    let attempts = 0;
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", fetch: (url: string | URL | Request, init?: RequestInit) => (attempts++, client.fetch(url, init)) });
    const error = await openai.chat.completions.create({ ...ask("hi"), provider: { require_local: true } } as never).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 503, code: "webgpu_unavailable" });
    expect(attempts).toBe(1);
  });
});

describe("shouldFallBack", () => {
  const unavailable = (code: string) => new ApiError({ status: 503, code, message: "x" });
  it("falls back only for the device cannot serve it, when the request allows it", () => {
    for (const code of ["webgpu_unavailable", "unsupported_device", "model_does_not_fit"]) expect(shouldFallBack(unavailable(code), ask("hi"))).toBe(true);
    for (const code of ["device_lost", "worker_lost", "queue_full"]) expect(shouldFallBack(unavailable(code), ask("hi"))).toBe(false);
    expect(shouldFallBack(new ApiError({ status: 400, code: "model_does_not_fit", message: "x" }), ask("hi"))).toBe(false);
    expect(shouldFallBack(unavailable("model_does_not_fit"), ask("hi", { provider: { allow_fallbacks: true } }))).toBe(true);
    expect(shouldFallBack(unavailable("model_does_not_fit"), ask("hi", { provider: { allow_fallbacks: false } }))).toBe(false);
    expect(shouldFallBack(unavailable("model_does_not_fit"), ask("hi", { provider: { require_local: true } }))).toBe(false);
  });
});
