/**
 * Isolation: images are never fetched from the network, and nothing from one
 * request leaks into another's output or prompt. (interceptFetch's URL
 * isolation is tested with the fetch layer.)
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createClient, type EngineRequest } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const vision = "Phi-3.5-vision-instruct-q4f32_1-MLC";
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("images are never fetched", () => {
  const remote = ["https://example.com/cat.png", "http://127.0.0.1:9/x.jpg", "//cdn.example.com/x.png", "blob:https://example.com/1234", "file:///etc/hosts"];

  it.each(remote)("a remote image URL (%s) is refused with 400 before anything is fetched, even for a vision model", async (url) => {
    const fetchSpy = vi.fn(() => Promise.reject(new Error("network used")));
    vi.stubGlobal("fetch", fetchSpy);
    const engine = createScriptedEngine({ replies: () => "I see it." });
    const client = createClient({ engine, worker: false });
    const body = { model: vision, messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "what is this?" }, { type: "image_url" as const, image_url: { url } }] }] };
    await expect(client.chat.completions.create(body)).rejects.toMatchObject({ status: 400, code: "invalid_image_url", param: "messages[0].content[1].image_url.url" });
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });
    expect(response.status).toBe(400);
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(engine.requests).toHaveLength(0);
  });

  it("a data: URI image reaches a vision model without any fetch", async () => {
    const fetchSpy = vi.fn(() => Promise.reject(new Error("network used")));
    vi.stubGlobal("fetch", fetchSpy);
    const engine = createScriptedEngine({ replies: () => "A single pixel." });
    const client = createClient({ engine, worker: false });
    const completion = await client.chat.completions.create({ model: vision, messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: PIXEL } }] }] });
    expect(completion.choices[0].message.content).toBe("A single pixel.");
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});

describe("nothing leaks between requests", () => {
  const replyFor = (request: EngineRequest) => {
    const who = String(request.messages.at(-1)?.content);
    return `private answer for ${who}: ${Array.from({ length: 12 }, (_, i) => `${who}${i}`).join(" ")}`;
  };

  it("20 concurrent streams, read interleaved, each carry only their own chunks", async () => {
    const engine = createScriptedEngine({ replies: replyFor, tokenDelayMs: 1 });
    const client = createClient({ engine, worker: false, maxQueue: 32 });
    const users = Array.from({ length: 20 }, (_, i) => `user${i}`);
    const streams = await Promise.all(users.map((u) => client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: u }], stream: true })));
    const iterators = streams.map((s) => s[Symbol.asyncIterator]());
    const texts = users.map(() => "");
    const ids = users.map(() => new Set<string>());
    // Round-robin reading: every stream advances a chunk at a time while the others are in flight.
    let open = users.map((_, i) => i);
    while (open.length > 0) {
      const still: number[] = [];
      for (const i of open) {
        const { value, done } = await iterators[i].next();
        if (done) continue;
        ids[i].add(value.id);
        texts[i] += value.choices[0]?.delta.content ?? "";
        still.push(i);
      }
      open = still;
    }
    users.forEach((u, i) => expect(texts[i]).toBe(replyFor({ messages: [{ role: "user", content: u }] } as EngineRequest)));
    // One id per stream, different for every stream.
    expect(ids.every((set) => set.size === 1)).toBe(true);
    expect(new Set(ids.map((set) => [...set][0])).size).toBe(users.length);
  });

  it("the raw text remembered for KV reuse is restored only for the same prompt_cache_key", async () => {
    const engine = createScriptedEngine({ replies: ["<think>alice's private notes</think>Hello Alice.", "ok", "ok"] });
    const client = createClient({ engine, worker: false });
    const model = "Qwen3-0.6B";
    const first = await client.chat.completions.create({ model, prompt_cache_key: "alice", messages: [{ role: "user", content: "hi" }] });
    const visible = first.choices[0].message.content ?? "";
    // Alice continues her conversation: her own raw reply may be restored (KV reuse).
    await client.chat.completions.create({ model, prompt_cache_key: "alice", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: visible }, { role: "user", content: "and?" }] });
    // Bob sends the same visible history under his own key: he gets exactly what he sent, never Alice's raw text.
    await client.chat.completions.create({ model, prompt_cache_key: "bob", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: visible }, { role: "user", content: "and?" }] });
    const [, alice, bob] = engine.requests;
    const assistantOf = (request: EngineRequest) => request.messages.find((m) => m.role === "assistant")?.content;
    expect(assistantOf(alice)).toContain("Hello Alice.");
    expect(assistantOf(bob)).toBe(visible);
    if (visible !== "<think>alice's private notes</think>Hello Alice.") expect(JSON.stringify(bob.messages)).not.toContain("private notes");
  });
});
