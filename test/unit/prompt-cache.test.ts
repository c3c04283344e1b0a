/**
 * Prompt caching through createClient + the scripted engine, which simulates
 * the prompt-cache policy on its own tokens: what an app sees in
 * `cached_tokens` (chat and Responses), `x_webgpu.prefill_tokens`,
 * `prompt_cache_key` on every face, and the `promptCache` option.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ChatCompletion, type PromptCacheOption } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngine } from "../../src/testing.js";
import type { EngineRequest } from "../../src/engine/types.js";
import { Vocabulary, renderPrompt } from "../../src/engine/scripted-prompt.js";
import { commonPrefix } from "../../src/engine/prompt-cache/policy.js";
import { hostFromConfig } from "../../src/worker/expose.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const SYSTEM = `You are a helpful assistant for a travel agency. ${"Answer briefly and cite the booking rules. ".repeat(30)}`;
const sys = { role: "system" as const, content: SYSTEM };
const user = (content: string) => ({ role: "user" as const, content });
const asst = (c: ChatCompletion) => c.choices[0].message;

type Message = Record<string, unknown> | ChatCompletion["choices"][0]["message"];

function setup(options: { promptCache?: PromptCacheOption } = {}) {
  const engine = createScriptedEngine({ replies: (r) => `Reply ${r.messages.length} about ${String(r.messages[r.messages.length - 1].content).slice(0, 12)}.` });
  const client = createClient({ worker: false, engine, promptCache: options.promptCache });
  const chat = (messages: Message[], extra: Record<string, unknown> = {}) => client.chat.completions.create({ model: MODEL, messages, ...extra } as never) as unknown as Promise<ChatCompletion>;
  return { engine, client, chat };
}

/** The common prefix of two engine requests' prompts as the scripted template renders them. */
function sharedTokens(a: EngineRequest, b: EngineRequest): number {
  const vocab = new Vocabulary();
  return commonPrefix(renderPrompt(a.messages, a.continueFinalMessage, vocab).ids, renderPrompt(b.messages, b.continueFinalMessage, vocab).ids);
}

const cached = (c: ChatCompletion) => c.usage.prompt_tokens_details.cached_tokens;
const lastTwo = (engine: ScriptedEngine) => engine.requests.slice(-2) as [EngineRequest, EngineRequest];

describe("prompt caching: what a chat app sees", () => {
  it("a new chat reuses the shared system prompt; the first chat keeps its own cache", async () => {
    const { chat, engine } = setup();
    const a1 = await chat([sys, user("Book Paris")]);
    const b1 = await chat([sys, user("Book Rome")]);
    expect(cached(b1)).toBe(sharedTokens(...lastTwo(engine)));
    expect(cached(b1)).toBeGreaterThan(SYSTEM.split(" ").length);
    expect(b1.x_webgpu.prefill_tokens).toBe(b1.usage.prompt_tokens - cached(b1));
    // Back to chat A: B did not replace its sequence.
    const a2 = await chat([sys, user("Book Paris"), asst(a1), user("For two")]);
    expect(cached(a2)).toBe(a1.usage.prompt_tokens + a1.usage.completion_tokens - 1);
  });

  it("two chats interleaved keep both caches", async () => {
    const { chat } = setup();
    let a: Message[] = [sys, user("Book Paris")];
    let b: Message[] = [sys, user("Book Rome")];
    let lastA = await chat(a);
    let lastB = await chat(b);
    for (let turn = 0; turn < 3; turn++) {
      a = [...a, asst(lastA), user(`A turn ${turn}`)];
      const nextA = await chat(a);
      expect(cached(nextA)).toBe(lastA.usage.prompt_tokens + lastA.usage.completion_tokens - 1);
      b = [...b, asst(lastB), user(`B turn ${turn}`)];
      const nextB = await chat(b);
      expect(cached(nextB)).toBe(lastB.usage.prompt_tokens + lastB.usage.completion_tokens - 1);
      [lastA, lastB] = [nextA, nextB];
    }
  });

  it("regenerate reuses all but one prompt token; cached_tokens never reaches prompt_tokens", async () => {
    const { chat } = setup();
    const messages = [sys, user("Book Paris")];
    await chat(messages);
    const again = await chat(messages);
    expect(cached(again)).toBe(again.usage.prompt_tokens - 1);
    expect(again.x_webgpu.prefill_tokens).toBe(1);
  });

  it("an edited earlier message reuses what precedes the edit", async () => {
    const { chat, engine } = setup();
    const a1 = await chat([sys, user("Book Paris")]);
    await chat([sys, user("Book Paris"), asst(a1), user("For two")]);
    const edited = await chat([sys, user("Book Paris"), asst(a1), user("For three")]);
    expect(cached(edited)).toBe(sharedTokens(...lastTwo(engine)));
    expect(cached(edited)).toBeGreaterThan(a1.usage.prompt_tokens);
  });

  it("a Responses request with the same instructions reuses the chat's system prompt (input_tokens_details)", async () => {
    const { chat, client, engine } = setup();
    await chat([sys, user("Book Paris")]);
    const response = await client.responses.create({ model: MODEL, instructions: SYSTEM, input: "Book Oslo" });
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(sharedTokens(...lastTwo(engine)));
    expect(response.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(SYSTEM.split(" ").length);
  });

  it("a reply that failed mid-generation leaves nothing uncertain behind", async () => {
    let calls = 0;
    const engine = createScriptedEngine({ replies: () => (++calls === 2 ? { text: "Broken reply here.", error: new Error("GPU hiccup"), errorAfterTokens: 2 } : "Fine.") });
    const client = createClient({ worker: false, engine });
    const messages = [sys, user("Book Paris")];
    await client.chat.completions.create({ model: MODEL, messages: [sys, user("Other")] });
    await expect(client.chat.completions.create({ model: MODEL, messages })).rejects.toThrow(/GPU hiccup/);
    const retry = await client.chat.completions.create({ model: MODEL, messages });
    // Only the first chat's prefix: the failed sequence was dropped.
    expect(retry.usage.prompt_tokens_details.cached_tokens).toBe(sharedTokens(engine.requests[0], engine.requests[2]));
  });
});

describe("prompt_cache_key", () => {
  it("reaches the engine from chat, Responses and /responses/compact (which used to answer 400)", async () => {
    const { chat, client, engine } = setup();
    await chat([sys, user("hi")], { prompt_cache_key: "chat-key" });
    await client.responses.create({ model: MODEL, input: "hi", prompt_cache_key: "resp-key" });
    const history = [
      { type: "message", role: "user", content: "One." },
      { type: "message", role: "assistant", content: "Two." },
      { type: "message", role: "user", content: "Three." },
      { type: "message", role: "assistant", content: "Four." },
      { type: "message", role: "user", content: "Five." },
    ];
    const response = await client.fetch("http://local/v1/responses/compact", { method: "POST", body: JSON.stringify({ model: MODEL, input: history, prompt_cache_key: "compact-key" }) });
    expect(response.status).toBe(200);
    expect(engine.requests.map((r) => r.promptCacheKey)).toEqual(["chat-key", "resp-key", "compact-key"]);
  });

  it("separates users: another key's first request reuses nothing of a shared system prompt; the same key reuses it", async () => {
    const { chat } = setup();
    const alice = await chat([sys, user("Book Paris")], { prompt_cache_key: "user-alice" });
    const bob = await chat([sys, user("Book Paris")], { prompt_cache_key: "user-bob" });
    expect(bob.usage.prompt_tokens).toBe(alice.usage.prompt_tokens);
    expect(cached(bob), "bob learns nothing of alice's prompt").toBe(0);
    const bobAgain = await chat([sys, user("Book Rome")], { prompt_cache_key: "user-bob" });
    expect(cached(bobAgain), "bob's own system prompt").toBeGreaterThan(SYSTEM.split(" ").length);
    const aliceAgain = await chat([sys, user("Book Paris"), asst(alice), user("For two")], { prompt_cache_key: "user-alice" });
    expect(cached(aliceAgain)).toBe(alice.usage.prompt_tokens + alice.usage.completion_tokens - 1);
  });

  it("requests without a key share among themselves, never with keyed ones; `user` stands in for the key", async () => {
    const { chat, client } = setup();
    await chat([sys, user("Book Paris")], { prompt_cache_key: "user-alice" });
    expect(cached(await chat([sys, user("Book Paris")])), "unkeyed after a keyed one").toBe(0);
    expect(cached(await chat([sys, user("Book Rome")])), "unkeyed after an unkeyed one").toBeGreaterThan(SYSTEM.split(" ").length);
    expect(cached(await chat([sys, user("Book Oslo")], { user: "user-carol" })), "`user` is a key").toBe(0);
    const viaSafety = await client.responses.create({ model: MODEL, instructions: SYSTEM, input: "Book Oslo", safety_identifier: "user-dave" });
    expect(viaSafety.usage?.input_tokens_details.cached_tokens, "`safety_identifier` is a key").toBe(0);
    const dave = await client.responses.create({ model: MODEL, instructions: SYSTEM, input: "Book Rome", prompt_cache_key: "user-dave" });
    expect(dave.usage?.input_tokens_details.cached_tokens, "the same key through prompt_cache_key").toBeGreaterThan(SYSTEM.split(" ").length);
  });

  it("a key that is not a string is refused on compact, naming the field", async () => {
    const { client } = setup();
    const response = await client.fetch("http://local/v1/responses/compact", { method: "POST", body: JSON.stringify({ model: MODEL, input: "hi", prompt_cache_key: 7 }) });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "prompt_cache_key" });
  });
});

describe("createClient({ promptCache })", () => {
  it("false: only web-llm's own reuse (the previous conversation extended byte for byte)", async () => {
    const { chat } = setup({ promptCache: false });
    const a1 = await chat([sys, user("Book Paris")]);
    expect(cached(await chat([sys, user("Book Rome")]))).toBe(0);
    expect(cached(await chat([sys, user("Book Rome")]))).toBe(0);
    const b1 = await chat([sys, user("Book Oslo")]);
    const b2 = await chat([sys, user("Book Oslo"), asst(b1), user("For two")]);
    expect(cached(b2)).toBe(b1.usage.prompt_tokens + b1.usage.completion_tokens - 1);
    void a1;
  });

  it("a small budget evicts the least recently used conversation", async () => {
    const other = { role: "system", content: "Another app entirely. ".repeat(60) };
    const run = async (budgetTokens: number) => {
      const { chat, engine } = setup({ promptCache: { budgetTokens } });
      const a1 = await chat([sys, user("Book Paris")]);
      const b1 = await chat([other, user("Book Rome")]);
      const a2 = await chat([sys, user("Book Paris"), asst(a1), user("For two")]);
      return { a1, b1, a2, shared: sharedTokens(...lastTwo(engine)) };
    };
    // Room for one conversation: chat B pushes chat A out; A2 finds only B's `<start> <system>`.
    const small = await run(400);
    expect(small.a1.usage.prompt_tokens + small.b1.usage.prompt_tokens).toBeGreaterThan(400);
    expect(cached(small.a2)).toBe(small.shared);
    expect(cached(small.a2)).toBeLessThan(small.a1.usage.prompt_tokens);
    const roomy = await run(1000);
    expect(cached(roomy.a2)).toBe(roomy.a1.usage.prompt_tokens + roomy.a1.usage.completion_tokens - 1);
  });

  it("a bad budget is refused when the client is created", () => {
    expect(() => createClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }), promptCache: { budgetTokens: 0 } })).toThrow(/promptCache.budgetTokens/);
    expect(() => createClient({ worker: false, engine: createScriptedEngine({ replies: ["x"] }), promptCache: { maxSequences: 1.5 } })).toThrow(/promptCache.maxSequences/);
  });

  it("crosses to a worker's host with the other options (WorkerHostConfig)", async () => {
    const run = async (promptCache: false | undefined) => {
      const host = hostFromConfig({ engine: { kind: "scripted", replies: ["One.", "Two."] }, promptCache });
      await host.createChatCompletion({ model: MODEL, messages: [sys, user("Book Paris")] });
      return (await host.createChatCompletion({ model: MODEL, messages: [sys, user("Book Rome")] })).usage.prompt_tokens_details.cached_tokens;
    };
    expect(await run(undefined)).toBeGreaterThan(0);
    expect(await run(false)).toBe(0);
  });
});

describe("the scripted engine's cache at the seam", () => {
  const request = (messages: EngineRequest["messages"]): EngineRequest => ({ model: MODEL, messages, sampling: { stop: [], max_tokens: 20 }, thinking: { enabled: false }, continueFinalMessage: false });
  const run = async (engine: ScriptedEngine, r: EngineRequest) => {
    for await (const event of engine.generate(r, new AbortController().signal)) if (event.type === "done") return event.usage.cachedTokens;
    return -1;
  };

  it("an image ends the reusable prefix", async () => {
    const engine = createScriptedEngine({ replies: () => "Seen." });
    await engine.load({ model: "x", model_id: MODEL, model_lib: "x" }, {});
    const withImage = request([sys, { role: "user", content: [{ type: "text", text: "Look:" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }, { type: "text", text: "What is it?" }] }]);
    await run(engine, withImage);
    const imageAt = renderPrompt(withImage.messages, false, new Vocabulary()).imageAt!;
    expect(await run(engine, withImage)).toBe(imageAt);
  });

  it("unload and reload clear the cache", async () => {
    const engine = createScriptedEngine({ replies: () => "Fine." });
    const record = { model: "x", model_id: MODEL, model_lib: "x" };
    await engine.load(record, {});
    const r = request([sys, user("Book Paris")]);
    await run(engine, r);
    expect(await run(engine, r)).toBeGreaterThan(0);
    await engine.unload();
    await engine.load(record, {});
    expect(await run(engine, r)).toBe(0);
  });
});
