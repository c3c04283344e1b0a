/**
 * The Responses API face through createClient + scripted engine: the Response
 * object, the stream's event sequence, store / previous_response_id / KV reuse,
 * abort, and the fetch routes.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ResponseObject, type ResponseStreamEvent } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const weather = { type: "function" as const, name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The output a client rebuilds from the deltas alone (plus item added/done shells). */
function rebuild(events: ResponseStreamEvent[]) {
  const items: Record<string, unknown>[] = [];
  for (const e of events) {
    switch (e.type) {
      case "response.output_item.added":
        items[e.output_index] = structuredClone(e.item) as unknown as Record<string, unknown>;
        break;
      case "response.content_part.added": {
        const item = items[e.output_index] as { content: unknown[] };
        item.content[e.content_index] = structuredClone(e.part);
        break;
      }
      case "response.output_text.delta":
      case "response.reasoning_text.delta": {
        const item = items[e.output_index] as { content: { text: string }[] };
        item.content[e.content_index].text += e.delta;
        break;
      }
      case "response.reasoning_summary_part.added": {
        const item = items[e.output_index] as { summary: unknown[] };
        item.summary[e.summary_index] = structuredClone(e.part);
        break;
      }
      case "response.reasoning_summary_text.delta": {
        const item = items[e.output_index] as { summary: { text: string }[] };
        item.summary[e.summary_index].text += e.delta;
        break;
      }
      case "response.function_call_arguments.delta":
        (items[e.output_index] as { arguments: string }).arguments += e.delta;
        break;
      case "response.output_item.done": {
        const item = items[e.output_index] as { status?: string };
        if ("status" in e.item) item.status = (e.item as { status: string }).status;
        break;
      }
    }
  }
  return items;
}

describe("client.responses.create (non-streaming)", () => {
  it("returns a Response object with the spec's fields and the settings echoed", async () => {
    const { client } = scriptedClient(["Hello there."]);
    const before = Math.floor(Date.now() / 1000);
    const response = await client.responses.create({ model: "Qwen/Qwen2.5-0.5B-Instruct", input: "hi", metadata: { a: "b" }, temperature: 0.5 });
    expect(response.id).toMatch(/^resp_[A-Za-z0-9]{32}$/);
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "Qwen/Qwen2.5-0.5B-Instruct",
      incomplete_details: null,
      error: null,
      previous_response_id: null,
      instructions: null,
      tools: [],
      tool_choice: "auto",
      truncation: "disabled",
      parallel_tool_calls: true,
      text: { format: { type: "text" } },
      temperature: 0.5,
      top_p: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      reasoning: { effort: null, summary: null },
      max_output_tokens: null,
      max_tool_calls: null,
      store: true,
      background: false,
      service_tier: "default",
      metadata: { a: "b" },
      safety_identifier: null,
      prompt_cache_key: null,
      output_text: "Hello there.",
    });
    expect(response.created_at).toBeGreaterThanOrEqual(before);
    expect(response.completed_at).toBeGreaterThanOrEqual(response.created_at);
    expect(response.output).toEqual([
      { type: "message", id: expect.stringMatching(/^msg_/), status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello there.", annotations: [], logprobs: [] }] },
    ]);
    expect(response.usage).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: (response.usage?.input_tokens ?? 0) + 3,
    });
  });

  it("splits reasoning into a reasoning item with reasoning_text content, and a summary only when asked", async () => {
    const reply = "<think>Two plus two.</think>It is 4.";
    const { client } = scriptedClient([reply, reply]);
    const plain = await client.responses.create({ model: QWEN3, input: "2+2?" });
    expect(plain.output.map((i) => i.type)).toEqual(["reasoning", "message"]);
    expect(plain.output[0]).toEqual({ type: "reasoning", id: expect.stringMatching(/^rs_/), summary: [], content: [{ type: "reasoning_text", text: "Two plus two." }] });
    expect(plain.output_text).toBe("It is 4.");
    expect(plain.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const summarized = await client.responses.create({ model: QWEN3, input: "2+2?", reasoning: { effort: "low", summary: "auto" } });
    expect(summarized.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "Two plus two." }], content: [{ type: "reasoning_text", text: "Two plus two." }] });
    expect(summarized.reasoning).toEqual({ effort: "low", summary: "auto" });
  });

  it("a tool call becomes a function_call item with call_id, name and JSON arguments", async () => {
    const { client } = scriptedClient(['Checking.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>']);
    const response = await client.responses.create({ model: QWEN25, input: "Weather in Paris?", tools: [weather] });
    expect(response.output).toEqual([
      { type: "message", id: expect.any(String), status: "completed", role: "assistant", content: [{ type: "output_text", text: "Checking.", annotations: [], logprobs: [] }] },
      { type: "function_call", id: expect.stringMatching(/^fc_/), call_id: expect.any(String), name: "get_weather", arguments: '{"city": "Paris"}', status: "completed" },
    ]);
    expect(response.tools).toEqual([{ type: "function", name: "get_weather", description: "Weather in a city", parameters: weather.parameters, strict: null }]);
  });

  it("max_output_tokens → status incomplete, reason max_output_tokens, the message item incomplete", async () => {
    const { client } = scriptedClient(["one two three four five"]);
    const response = await client.responses.create({ model: QWEN25, input: "count", max_output_tokens: 2 });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.output[0]).toMatchObject({ type: "message", status: "incomplete", content: [{ text: "one two" }] });
    expect(response.max_output_tokens).toBe(2);
  });

  it("instructions go first as the system message; input items become the chat face's messages", async () => {
    const { client, engine } = scriptedClient(["ok"]);
    await client.responses.create({
      model: QWEN25,
      instructions: "Be brief.",
      input: [
        { role: "developer", content: "Answer in French." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
      ],
      tools: [weather],
    });
    const messages = engine.requests[0].messages;
    expect(messages[0].role).toBe("system");
    expect(String(messages[0].content)).toContain("Be brief.");
    const text = JSON.stringify(messages);
    expect(text).toContain("Answer in French.");
    expect(text).toContain("Weather?");
    expect(text).toContain("get_weather");
    expect(text).toContain("sunny");
  });
});

describe("client.responses.create (streaming)", () => {
  it("emits the full event sequence with increasing sequence_number, deltas concatenating to the final items", async () => {
    const reply = '<think>Let me look.</think>Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const { client } = scriptedClient([reply]);
    const stream = await client.responses.create({ model: QWEN3, input: "Weather?", tools: [weather], stream: true });
    const events = await collect(stream);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const kinds = events.map((e) => e.type).filter((t, i, all) => !(t.endsWith(".delta") && all[i - 1] === t));
    expect(kinds).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const created = events[0] as { response: ResponseObject };
    expect(created.response.status).toBe("in_progress");
    expect(created.response.output).toEqual([]);
    const completed = events[events.length - 1] as { response: ResponseObject };
    expect(completed.response.status).toBe("completed");
    expect(completed.response.id).toBe(created.response.id);
    expect(rebuild(events)).toEqual(completed.response.output);
    for (const e of events) if ("item_id" in e) expect(completed.response.output[e.output_index].id).toBe(e.item_id);
  });

  it("reasoning.summary mirrors the reasoning deltas as reasoning_summary_text events", async () => {
    const { client } = scriptedClient(["<think>Hmm, four.</think>4"]);
    const events = await collect(await client.responses.create({ model: QWEN3, input: "2+2", reasoning: { summary: "auto" }, stream: true }));
    const types = events.map((e) => e.type);
    expect(types).toContain("response.reasoning_summary_part.added");
    expect(types).toContain("response.reasoning_summary_text.done");
    const summary = events.filter((e) => e.type === "response.reasoning_summary_text.delta").map((e) => (e as { delta: string }).delta).join("");
    expect(summary).toBe("Hmm, four.");
    const completed = events[events.length - 1] as { response: ResponseObject };
    expect(rebuild(events)).toEqual(completed.response.output);
  });

  it("ends with response.incomplete when max_output_tokens cuts it", async () => {
    const { client } = scriptedClient(["one two three four five"]);
    const events = await collect(await client.responses.create({ model: QWEN25, input: "count", max_output_tokens: 2, stream: true }));
    const last = events[events.length - 1] as { type: string; response: ResponseObject };
    expect(last.type).toBe("response.incomplete");
    expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("an engine error after the start → response.failed, then the stream throws the error", async () => {
    const engine = createScriptedEngine({ replies: [{ text: "one two three four", error: new Error("GPU gone"), errorAfterTokens: 2 }] });
    const client = createClient({ engine, worker: false });
    const stream = await client.responses.create({ model: QWEN25, input: "x", stream: true });
    const events: ResponseStreamEvent[] = [];
    await expect(async () => {
      for await (const e of stream) events.push(e);
    }).rejects.toMatchObject({ status: 500, message: "GPU gone" });
    const last = events[events.length - 1] as { type: string; response: ResponseObject };
    expect(last.type).toBe("response.failed");
    expect(last.response.status).toBe("failed");
    expect(last.response.error).toMatchObject({ message: "GPU gone" });
  });
});
