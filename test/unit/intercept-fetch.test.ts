/**
 * interceptFetch: global fetch under the base URL is served locally; every
 * other URL reaches the real network stack (a real HTTP server on 127.0.0.1)
 * with its method, headers and body untouched; restore undoes it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { interceptFetch } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let origin: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.writeHead(201, { "content-type": "text/plain", "x-from": "real-server" });
      res.end(`real ${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
  seen.length = 0;
});

describe("interceptFetch", () => {
  it("serves the base URL locally, so an SDK without a fetch option works", async () => {
    const { client } = scriptedClient(["Served locally."]);
    restore = interceptFetch(client, { baseURL: "http://localhost.webgpu/v1" });
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local" });
    const completion = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("hi")] });
    expect(completion.choices[0].message.content).toBe("Served locally.");
    const models = await fetch("http://localhost.webgpu/v1/models");
    expect((await models.json()).object).toBe("list");
    expect(seen).toHaveLength(0);
  });

  it("passes every other URL to the original fetch untouched", async () => {
    const { client, engine } = scriptedClient(["local"]);
    const base = `${origin}/v1`;
    restore = interceptFetch(client, { baseURL: base });
    // same origin, path outside the base; a base-prefixed sibling; a Request object; a URL object
    const outside = await fetch(`${origin}/v10/chat/completions`, { method: "POST", headers: { "x-custom": "kept", authorization: "Bearer secret" }, body: '{"raw":true}' });
    expect(outside.status).toBe(201);
    expect(outside.headers.get("x-from")).toBe("real-server");
    expect(await outside.text()).toBe("real POST /v10/chat/completions");
    const viaRequest = await fetch(new Request(`${origin}/other?q=1`, { method: "PUT", body: "abc" }));
    expect(await viaRequest.text()).toBe("real PUT /other?q=1");
    const viaUrl = await fetch(new URL(`${origin}/v1x`));
    expect(await viaUrl.text()).toBe("real GET /v1x");
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /v10/chat/completions", "PUT /other?q=1", "GET /v1x"]);
    expect(seen[0].headers).toMatchObject({ "x-custom": "kept", authorization: "Bearer secret" });
    expect(seen[0].body).toBe('{"raw":true}');
    expect(seen[1].body).toBe("abc");
    // and under the base (same host and port as the real server) it is served locally
    const local = await fetch(`${base}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "Qwen3-0.6B", messages: [user("hi")] }) });
    expect((await local.json()).choices[0].message.content).toBe("local");
    expect(seen).toHaveLength(3);
    expect(engine.requests).toHaveLength(1);
  });

  it("restore() puts the original fetch back", async () => {
    const original = globalThis.fetch;
    const { client } = scriptedClient([]);
    const undo = interceptFetch(client, { baseURL: `${origin}/v1` });
    expect(globalThis.fetch).not.toBe(original);
    undo();
    expect(globalThis.fetch).toBe(original);
    const response = await fetch(`${origin}/v1/models`);
    expect(await response.text()).toBe("real GET /v1/models");
  });

  it("after restore, a layer another library stacked on top keeps working and ours passes through", async () => {
    const original = globalThis.fetch;
    const { client } = scriptedClient([]);
    const undo = interceptFetch(client, { baseURL: `${origin}/v1` });
    const ours = globalThis.fetch;
    const calls: string[] = [];
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
      calls.push(String(input));
      return ours(input, init);
    }) as typeof fetch;
    try {
      undo();
      const response = await fetch(`${origin}/v1/models`);
      expect(await response.text()).toBe("real GET /v1/models");
      expect(calls).toEqual([`${origin}/v1/models`]);
    } finally {
      globalThis.fetch = original;
    }
  });
});
