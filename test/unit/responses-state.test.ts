/**
 * Responses state: store (default on), previous_response_id chains that reuse
 * the KV cache as chat turns do, items sent back, item_reference, retrieve /
 * delete / input_items, the store's LRU bound, and abort (queued and running).
 */
import { describe, expect, it } from "vitest";
import { createClient, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const weather = { type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } };

describe("previous_response_id", () => {
  it("continues the conversation and reuses the KV cache (cached_tokens > 0 on turn 2)", async () => {
    const { client, engine } = scriptedClient(["Hello there.", "I am a local model."]);
    const first = await client.responses.create({ model: QWEN25, instructions: "Be kind.", input: "hi" });
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0);
    const second = await client.responses.create({ model: QWEN25, instructions: "Be kind.", input: "who are you?", previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    // As chat (and web-llm): the whole first turn but its last reply token is served from the cache.
    expect(second.usage?.input_tokens_details.cached_tokens).toBe((first.usage?.input_tokens ?? 0) + (first.usage?.output_tokens ?? 0) - 1);
    const [turn1, turn2] = engine.requests;
    expect(turn2.messages.slice(0, turn1.messages.length)).toEqual(turn1.messages);
    expect(turn2.messages[turn2.messages.length - 1].content).toContain("who are you?");
  });

  it("a thinking model's chain gets the same cached_tokens as the same chat conversation", async () => {
    const replies = ["<think>Greet back.</think>Hello there.", "<think>Name?</think>I am a local model."];
    const { client } = scriptedClient(replies);
    const first = await client.responses.create({ model: QWEN3, instructions: "Be kind.", input: "hi" });
    const second = await client.responses.create({ model: QWEN3, instructions: "Be kind.", input: "who are you?", previous_response_id: first.id });
    // A second client, so the chat conversation starts from a cold cache as the chain did.
    const { client: chat } = scriptedClient(replies);
    const messages = [{ role: "system" as const, content: "Be kind." }, { role: "user" as const, content: "hi" }];
    const c1 = await chat.chat.completions.create({ model: QWEN3, messages });
    const c2 = await chat.chat.completions.create({ model: QWEN3, messages: [...messages, c1.choices[0].message as never, { role: "user", content: "who are you?" }] });
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(c2.usage.prompt_tokens_details.cached_tokens);
    expect(second.usage?.input_tokens).toBe(c2.usage.prompt_tokens);
  });

  it("instructions are not carried over: each request's own instructions apply", async () => {
    const { client, engine } = scriptedClient(["a", "b"]);
    const first = await client.responses.create({ model: QWEN25, instructions: "Speak French.", input: "hi" });
    await client.responses.create({ model: QWEN25, instructions: "Speak German.", input: "again", previous_response_id: first.id });
    const text = JSON.stringify(engine.requests[1].messages);
    expect(text).toContain("Speak German.");
    expect(text).not.toContain("Speak French.");
  });

  it("the items sent back (no previous_response_id) reuse the KV cache the same way", async () => {
    const { client } = scriptedClient(["Hello there.", "Fine."]);
    const first = await client.responses.create({ model: QWEN25, input: [{ role: "user", content: "hi" }] });
    const second = await client.responses.create({ model: QWEN25, input: [{ role: "user", content: "hi" }, ...first.output, { role: "user", content: "how are you?" }] as never });
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("a thinking model's items sent back restore the raw reply only while its reasoning text is unedited", async () => {
    // Qwen3 keeps the reasoning of a tool round (after the last user message), so the restored raw text reaches the prompt.
    const raw = '<think>\nThe user wants Paris.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const { client, engine } = scriptedClient([raw, "Sunny.", raw, "Sunny."]);
    const roundTrip = async (edit: (text: string) => string) => {
      const first = await client.responses.create({ model: QWEN3, input: [{ role: "user", content: "Weather in Paris?" }], tools: [weather] });
      const call = first.output.find((i) => i.type === "function_call") as { call_id: string };
      const sentBack = first.output.map((item) =>
        item.type === "reasoning" ? { ...item, content: item.content?.map((part) => ({ ...part, text: edit(part.text) })) } : item,
      );
      const input = [{ role: "user", content: "Weather in Paris?" }, ...sentBack, { type: "function_call_output", call_id: call.call_id, output: "18C" }];
      await client.responses.create({ model: QWEN3, input: input as never, tools: [weather] });
      return JSON.stringify(engine.requests[engine.requests.length - 1].messages);
    };
    expect(await roundTrip((text) => text)).toContain("The user wants Paris.");
    // The model must see what the app sent: an edited reasoning is not swapped for the remembered raw reply.
    expect(await roundTrip(() => "The user wants Lyon.")).not.toContain("The user wants Paris.");
  });

  it("a function call round trip: function_call_output after previous_response_id, KV reused", async () => {
    const { client, engine } = scriptedClient(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "It is sunny in Paris."]);
    const first = await client.responses.create({ model: QWEN25, input: "Weather in Paris?", tools: [weather] });
    const call = first.output.find((i) => i.type === "function_call");
    expect(call).toMatchObject({ name: "get_weather" });
    const second = await client.responses.create({
      model: QWEN25,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: '{"sky":"sunny"}' }],
      tools: [weather],
    });
    expect(second.output_text).toBe("It is sunny in Paris.");
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(engine.requests[1].messages)).toContain('{\\"sky\\":\\"sunny\\"}');
    // The reply's raw call markup is restored in the history (the KV-reuse memory), as for chat.
    expect(JSON.stringify(engine.requests[1].messages)).toContain("<tool_call>");
  });

  it("an unknown or deleted id → 400 previous_response_not_found naming previous_response_id", async () => {
    const { client } = scriptedClient(["a", "b"]);
    await expect(client.responses.create({ model: QWEN25, input: "x", previous_response_id: "resp_nope" })).rejects.toMatchObject({
      status: 400,
      type: "invalid_request_error",
      code: "previous_response_not_found",
      param: "previous_response_id",
    });
    const first = await client.responses.create({ model: QWEN25, input: "x" });
    expect(await client.responses.delete(first.id)).toEqual({ id: first.id, object: "response", deleted: true });
    await expect(client.responses.create({ model: QWEN25, input: "y", previous_response_id: first.id })).rejects.toMatchObject({ code: "previous_response_not_found" });
  });

  it("store: false keeps nothing", async () => {
    const { client } = scriptedClient(["a"]);
    const response = await client.responses.create({ model: QWEN25, input: "x", store: false });
    expect(response.store).toBe(false);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe("retrieve, delete, input_items, item_reference", () => {
  it("retrieve returns the stored Response; delete removes it; unknown → 404", async () => {
    const { client } = scriptedClient(["Hello."]);
    const created = await client.responses.create({ model: QWEN25, input: "hi" });
    expect(await client.responses.retrieve(created.id)).toEqual(created);
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.inputItems.list(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("input_items lists this request's items with ids, newest first by default; limit, order, after", async () => {
    const { client } = scriptedClient(["ok"]);
    const created = await client.responses.create({ model: QWEN25, input: [{ role: "user", content: "one" }, { role: "user", content: "two" }, { role: "user", content: "three" }] });
    const all = await client.responses.inputItems.list(created.id);
    expect(all.object).toBe("list");
    expect(all.data.map((i) => (i as { content: { text: string }[] }).content[0].text)).toEqual(["three", "two", "one"]);
    expect(all.data.every((i) => /^msg_/.test(i.id))).toBe(true);
    expect(all).toMatchObject({ first_id: all.data[0].id, last_id: all.data[2].id, has_more: false });
    const page = await client.responses.inputItems.list(created.id, { order: "asc", limit: 1 });
    expect(page.data.map((i) => (i as { content: { text: string }[] }).content[0].text)).toEqual(["one"]);
    expect(page.has_more).toBe(true);
    const next = await client.responses.inputItems.list(created.id, { order: "asc", after: page.last_id as string });
    expect(next.data).toHaveLength(2);
    await expect(client.responses.inputItems.list(created.id, { limit: 0 })).rejects.toMatchObject({ status: 400, param: "limit" });
  });

  it("item_reference resolves stored input and output items", async () => {
    const { client, engine } = scriptedClient(["Hello there.", "Again."]);
    const first = await client.responses.create({ model: QWEN25, input: "hi" });
    const inputId = (await client.responses.inputItems.list(first.id)).data[0].id;
    await client.responses.create({ model: QWEN25, input: [{ type: "item_reference", id: inputId }, { type: "item_reference", id: first.output[0].id }, { role: "user", content: "more" }] });
    const roles = engine.requests[1].messages.map((m) => m.role);
    expect(roles.slice(-3)).toEqual(["user", "assistant", "user"]);
    await expect(client.responses.create({ model: QWEN25, input: [{ type: "item_reference", id: "msg_missing" }] })).rejects.toMatchObject({ status: 400, param: "input[0].id" });
  });
});

describe("store bound", () => {
  it("keeps at most responsesStore.maxResponses, dropping the oldest first (reading one does not keep it)", async () => {
    const engine = createScriptedEngine({ replies: () => "ok" });
    const client = createClient({ engine, worker: false, responsesStore: { maxResponses: 2 } });
    const a = await client.responses.create({ model: QWEN25, input: "a" });
    const b = await client.responses.create({ model: QWEN25, input: "b" });
    await client.responses.retrieve(a.id);
    const c = await client.responses.create({ model: QWEN25, input: "c" });
    await expect(client.responses.retrieve(a.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.responses.retrieve(b.id)).id).toBe(b.id);
    expect((await client.responses.retrieve(c.id)).id).toBe(c.id);
    await expect(client.responses.create({ model: QWEN25, input: "d", previous_response_id: a.id })).rejects.toMatchObject({ code: "previous_response_not_found" });
  });

  it("defaults to 100", async () => {
    const { client } = scriptedClient(() => "ok");
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) ids.push((await client.responses.create({ model: QWEN25, input: String(i) })).id);
    await expect(client.responses.retrieve(ids[0])).rejects.toMatchObject({ status: 404 });
    expect((await client.responses.retrieve(ids[1])).id).toBe(ids[1]);
  });
});

describe("abort", () => {
  it("a running stream stops when aborted (controller.abort) and nothing is stored", async () => {
    const { client, engine } = scriptedClient(["one two three four five six seven eight nine ten"], { tokenDelayMs: 5 });
    const stream = await client.responses.create({ model: QWEN25, input: "count", stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === "response.output_text.delta") stream.controller.abort();
    }
    expect(events.some((e) => e.type === "response.completed")).toBe(false);
    const created = events[0] as { response: { id: string } };
    await expect(client.responses.retrieve(created.response.id)).rejects.toMatchObject({ status: 404 });
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    expect(engine.requests).toHaveLength(1);
  });

  it("a queued request aborted by its signal never reaches the engine; the running one completes", async () => {
    // One generation at a time: the second waits in the queue.
    const { client, engine } = scriptedClient(["one two three four five", "never"], { tokenDelayMs: 5, batch: false });
    const running = client.responses.create({ model: QWEN25, input: "first" });
    const controller = new AbortController();
    const queued = client.responses.create({ model: QWEN25, input: "second" }, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 10));
    expect((await client.queueState()).waiting).toBe(1);
    controller.abort();
    await expect(queued).rejects.toMatchObject({ name: "AbortError" });
    expect((await running).status).toBe("completed");
    expect(engine.requests).toHaveLength(1);
  });

  it("a running non-streamed request aborted by its signal rejects with AbortError", async () => {
    const { client } = scriptedClient(["one two three four five six seven eight"], { tokenDelayMs: 5 });
    const controller = new AbortController();
    const pending = client.responses.create({ model: QWEN25, input: "x" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 15);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });
});
