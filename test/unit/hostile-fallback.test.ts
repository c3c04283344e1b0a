/**
 * The fallback server and interceptFetch as a hostile or careless setup would
 * meet them: a fallback to the very URL interceptFetch serves (the drop-in
 * setup: the unchanged OpenAI SDK pointed at the hosted API), remote replies
 * of the wrong shape, a remote `x_webgpu` with a header-breaking request id,
 * an Authorization header next to `apiKey`, and base URLs of non-special
 * schemes. A real HTTP server on 127.0.0.1 stands in for the hosted API.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { createClient, interceptFetch, type Client, type ClientOptions } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { user } from "./support/client.js";

/** What the stand-in API answers next (JSON body for a plain request, SSE lines for a stream), and what it received. */
let reply: { json?: unknown; sse?: string[] } = {};
const received: { url: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }[] = [];
let server: Server;
let baseURL: string;

const completion = (content: string, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-remote",
  object: "chat.completion",
  created: 1,
  model: "gpt-remote",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop", logprobs: null }],
  ...extra,
});

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as Record<string, unknown>;
    received.push({ url: req.url ?? "", headers: req.headers, body });
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const line of reply.sse ?? []) res.write(`data: ${line}\n\n`);
      res.end("data: [DONE]\n\n");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(reply.json ?? completion("Hosted says hi.")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
  received.length = 0;
  reply = {};
});

/** A client whose engine needs WebGPU, which Node lacks: every chat request falls back. */
function gpuLessClient(fallback: ClientOptions["fallback"]): Client {
  const engine = Object.assign(createScriptedEngine({ replies: ["local reply"] }), { requiresGpu: true });
  return createClient({ engine, worker: false, fallback });
}

const ask = (content: string) => ({ model: "Qwen3-0.6B", messages: [user(content)] });

describe("interceptFetch with a fallback to the same base URL", () => {
  it("the unchanged OpenAI SDK gets the hosted reply: the fallback request reaches the network, not the client again", async () => {
    const client = gpuLessClient({ baseURL, apiKey: "sk-hosted" });
    // Counts entries into the client: the fallback re-entering it would loop without end (each pass only awaits
    // promises, so no timer could stop it). Past a few entries it throws, which bounds the test in time.
    let entries = 0;
    const counted = {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => {
        if (++entries > 5) return Promise.reject(new Error(`client.fetch re-entered ${entries} times`));
        return client.fetch(input, init);
      },
    };
    restore = interceptFetch(counted, { baseURL });
    const sdk = new OpenAI({ baseURL, apiKey: "sk-app", maxRetries: 0 });

    const answer = await sdk.chat.completions.create(ask("hello"));
    expect(answer.choices[0].message.content).toBe("Hosted says hi.");
    expect(entries).toBe(1);
    expect(received).toHaveLength(1);
    expect(received[0].headers.authorization).toBe("Bearer sk-hosted");

    reply.sse = [JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-remote", choices: [{ index: 0, delta: { content: "streamed" }, finish_reason: null }] })];
    const stream = await sdk.chat.completions.create({ ...ask("stream"), stream: true });
    const texts: string[] = [];
    for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? "");
    expect(texts.join("")).toBe("streamed");
    expect(entries).toBe(2);
    expect(received).toHaveLength(2);
  });

  it("a fallback fetch option that is the patched global still reaches the network once", async () => {
    let entries = 0;
    const holder: { client?: Client } = {};
    const counted = {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => {
        if (++entries > 5) return Promise.reject(new Error(`client.fetch re-entered ${entries} times`));
        return holder.client!.fetch(input, init);
      },
    };
    restore = interceptFetch(counted, { baseURL });
    // The app hands the fallback the global fetch it sees, which is already ours.
    holder.client = gpuLessClient({ baseURL, fetch: (url, init) => globalThis.fetch(url, init) });
    const answer = await holder.client.chat.completions.create(ask("hello"));
    expect(answer.choices[0].message.content).toBe("Hosted says hi.");
    expect(received).toHaveLength(1);
    expect(entries).toBe(0);
  });

  it("a wrapper another library puts on top later (rebuilding each request) does not lead the fallback back into the client", async () => {
    let entries = 0;
    const client = gpuLessClient({ baseURL });
    const counted = {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => {
        if (++entries > 5) return Promise.reject(new Error(`client.fetch re-entered ${entries} times`));
        return client.fetch(input, init);
      },
    };
    const undoIntercept = interceptFetch(counted, { baseURL });
    const ours = globalThis.fetch;
    // Instrumentation of the kind tracing libraries install: every call becomes a fresh Request, so no init object survives.
    const instrumented = ((input: RequestInfo | URL, init?: RequestInit) => ours(new Request(input, init))) as typeof fetch;
    globalThis.fetch = instrumented;
    restore = () => {
      globalThis.fetch = ours;
      undoIntercept();
    };
    const sdk = new OpenAI({ baseURL, apiKey: "sk-app", maxRetries: 0 });
    const answer = await sdk.chat.completions.create(ask("hello"));
    expect(answer.choices[0].message.content).toBe("Hosted says hi.");
    expect(entries).toBe(1);
    expect(received).toHaveLength(1);
  });
});

describe("fallback replies are checked before they reach the app", () => {
  it("a completion whose choices is not an array is a 502", async () => {
    const client = gpuLessClient({ baseURL });
    reply.json = completion("x", { choices: "not-an-array" });
    await expect(client.chat.completions.create(ask("hi"))).rejects.toMatchObject({ status: 502, code: "fallback_bad_response" });
    reply.json = 42;
    await expect(client.chat.completions.create(ask("hi"))).rejects.toMatchObject({ status: 502, code: "fallback_bad_response" });
  });

  it("a stream chunk that is not a chunk object fails the stream with 502", async () => {
    const client = gpuLessClient({ baseURL });
    reply.sse = ["42"];
    const stream = await client.chat.completions.create({ ...ask("hi"), stream: true });
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) seen.push(chunk);
      })(),
    ).rejects.toMatchObject({ status: 502, code: "fallback_bad_response" });
    expect(seen).toEqual([]);
  });

  it("the remote x_webgpu is dropped: a CRLF request id never becomes a header", async () => {
    const client = gpuLessClient({ baseURL });
    reply.json = completion("fine", { x_webgpu: { request_id: "req_1\r\nSet-Cookie: a=b" } });
    const direct = await client.chat.completions.create(ask("hi"));
    expect(direct).not.toHaveProperty("x_webgpu");
    const response = await client.fetch(`${baseURL}/chat/completions`, { method: "POST", body: JSON.stringify(ask("hi")) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(response.headers.get("x-request-id")).not.toContain("Set-Cookie");
    expect(((await response.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe("fine");

    reply.sse = [JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], x_webgpu: { request_id: "bad\r\n" } })];
    const stream = await client.chat.completions.create({ ...ask("hi"), stream: true });
    for await (const chunk of stream) expect(chunk).not.toHaveProperty("x_webgpu");
  });

  it("headers merge case-insensitively, and apiKey wins over an Authorization header", async () => {
    const client = gpuLessClient({ baseURL, apiKey: "sk-option", headers: { Authorization: "Bearer other", "X-Team": "blue", Accept: "application/json" } });
    await client.chat.completions.create(ask("hi"));
    expect(received[0].headers.authorization).toBe("Bearer sk-option");
    expect(received[0].headers["x-team"]).toBe("blue");
    expect(received[0].headers.accept).toBe("application/json");

    const keyless = gpuLessClient({ baseURL, headers: { Authorization: "Bearer from-headers" } });
    await keyless.chat.completions.create(ask("hi"));
    expect(received[1].headers.authorization).toBe("Bearer from-headers");
  });
});

describe("interceptFetch compares scheme and host", () => {
  it("a non-special scheme base URL matches only its own host, never any other://", async () => {
    const served: string[] = [];
    const client = { fetch: async (input: RequestInfo | URL) => (served.push(String(input)), new Response("local")) };
    const realBefore = globalThis.fetch;
    const passed: string[] = [];
    globalThis.fetch = (async (input: RequestInfo | URL) => (passed.push(String(input)), new Response("network"))) as typeof fetch;
    try {
      restore = interceptFetch(client, { baseURL: "webgpu://local/v1" });
      await globalThis.fetch("webgpu://local/v1/chat/completions");
      await globalThis.fetch("other://elsewhere/v1/chat/completions");
      await globalThis.fetch("webgpu://elsewhere/v1/chat/completions");
      await globalThis.fetch("other://local/v1/chat/completions");
      expect(served).toEqual(["webgpu://local/v1/chat/completions"]);
      expect(passed).toEqual(["other://elsewhere/v1/chat/completions", "webgpu://elsewhere/v1/chat/completions", "other://local/v1/chat/completions"]);
    } finally {
      restore?.();
      restore = null;
      globalThis.fetch = realBefore;
    }
  });
});
