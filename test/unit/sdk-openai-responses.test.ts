/**
 * The unchanged OpenAI SDK (v6, Node) speaking the Responses API to `client.fetch`:
 * what an app written against `openai.responses` does, with the local scripted
 * model underneath (a Qwen3 id, so its reasoning and tool-call formats are parsed).
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import type { EngineRequest } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const MODEL = "Qwen3-0.6B";

function setup(replies: ScriptedEngineOptions["replies"]) {
  const { client, engine } = scriptedClient(replies);
  const attempts: string[] = [];
  const openai = new OpenAI({
    baseURL: BASE,
    apiKey: "local",
    maxRetries: 0,
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      attempts.push(`${init?.method ?? "GET"} ${String(url)}`);
      return client.fetch(url, init);
    },
  });
  return { client, engine, openai, attempts };
}

const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};
const weatherCall = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

describe("openai v6: responses.create", () => {
  it("returns a completed Response; output_text joins the message text", async () => {
    const { openai, attempts } = setup(["Hello from the GPU."]);
    const response = await openai.responses.create({ model: MODEL, input: "hi" });
    expect(response).toMatchObject({ object: "response", status: "completed", model: MODEL });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("Hello from the GPU.");
    const message = response.output.find((item) => item.type === "message");
    expect(message).toMatchObject({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello from the GPU.", annotations: [] }] });
    expect(response.usage).toMatchObject({ output_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    expect(attempts).toEqual([`POST ${BASE}/responses`]);
  });

  it("instructions reach the model as its system text", async () => {
    const { openai, engine } = setup(["Arr, hello."]);
    const response = await openai.responses.create({ model: MODEL, instructions: "You are a pirate.", input: "Say hello." });
    expect(response.output_text).toBe("Arr, hello.");
    expect(response.instructions).toBe("You are a pirate.");
    expect(engine.requests[0].messages[0]).toMatchObject({ role: "system" });
    expect(promptText(engine.requests[0])).toContain("You are a pirate.");
  });

  it("reasoning comes back as a reasoning item before the message, not in output_text", async () => {
    const { openai } = setup(["<think>\nThe user greets me.\n</think>\n\nHello!"]);
    const response = await openai.responses.create({ model: MODEL, input: "hi" });
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toBeInstanceOf(Array);
    expect(reasoning.content?.map((c) => c.text).join("").trim()).toBe("The user greets me.");
    expect(response.output_text).toBe("Hello!");
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it("stream: true yields the full event sequence; deltas concatenate to the final text", async () => {
    const { openai } = setup(["<think>\nCounting.\n</think>\n\nOne two three."]);
    const stream = await openai.responses.create({ model: MODEL, input: "count", stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("response.created");
    expect(types[1]).toBe("response.in_progress");
    expect(types.at(-1)).toBe("response.completed");
    const numbers = events.map((e) => e.sequence_number);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
    // message item: added → content_part.added → deltas → text.done → part.done → item.done
    const messageEvents = types.filter((t) => /output_text|content_part|output_item/.test(t));
    expect(messageEvents.indexOf("response.content_part.added")).toBeLessThan(messageEvents.indexOf("response.output_text.delta"));
    expect(types.lastIndexOf("response.output_text.delta")).toBeLessThan(types.indexOf("response.output_text.done"));
    expect(types.indexOf("response.output_text.done")).toBeLessThan(types.lastIndexOf("response.content_part.done"));
    expect(types.lastIndexOf("response.content_part.done")).toBeLessThan(types.lastIndexOf("response.output_item.done"));
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(text).toBe("One two three.");
    const reasoning = events.flatMap((e) => (e.type === "response.reasoning_text.delta" ? [e.delta] : [])).join("");
    expect(reasoning.trim()).toBe("Counting.");
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(done.response.status).toBe("completed");
    const finalMessage = done.response.output.find((item) => item.type === "message") as OpenAI.Responses.ResponseOutputMessage;
    expect((finalMessage.content[0] as OpenAI.Responses.ResponseOutputText).text).toBe(text);
    expect(done.response.usage?.output_tokens).toBeGreaterThan(0);
  });

  it("responses.stream() helper: text deltas and finalResponse()", async () => {
    const { openai } = setup(["Streaming helper works."]);
    const runner = openai.responses.stream({ model: MODEL, input: "hi" });
    const deltas: string[] = [];
    runner.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await runner.finalResponse();
    expect(final.status).toBe("completed");
    // (the v6 helper adds `output_text` only when it parses a text.format; the message holds the text)
    const message = final.output.find((item) => item.type === "message") as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content).toMatchObject([{ type: "output_text", text: "Streaming helper works." }]);
    expect(deltas.join("")).toBe("Streaming helper works.");
  });

  it("max_output_tokens cuts the reply: status incomplete, reason max_output_tokens", async () => {
    const { openai } = setup(["one two three four five six seven eight"]);
    const response = await openai.responses.create({ model: MODEL, input: "count", max_output_tokens: 3 });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.usage!.output_tokens).toBe(3);
  });
});

describe("openai v6: responses with function tools", () => {
  it("a function_call item, then function_call_output sent back with the items gives the answer", async () => {
    const { openai, engine } = setup((request) => (promptText(request).includes("18°C") ? "It is 18°C and sunny in Paris." : weatherCall));
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "Weather in Paris?" }];
    const first = await openai.responses.create({ model: MODEL, input, tools: [weatherTool] });
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
    expect(call.call_id).toBeTruthy();
    expect(first.output_text).toBe("");
    const second = await openai.responses.create({
      model: MODEL,
      tools: [weatherTool],
      store: false,
      input: [...input, ...first.output, { type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ forecast: "18°C and sunny" }) }] as OpenAI.Responses.ResponseInput,
    });
    expect(second.output_text).toBe("It is 18°C and sunny in Paris.");
    expect(promptText(engine.requests[1])).toContain("18°C and sunny");
    // the tool definition reaches the model's prompt (rendered by the family)
    expect(promptText(engine.requests[0])).toContain("get_weather");
  });

  it("streaming a call: output_item.added (function_call) → arguments deltas → arguments.done → item.done", async () => {
    const { openai } = setup([weatherCall]);
    const stream = await openai.responses.create({ model: MODEL, input: "Weather in Paris?", tools: [weatherTool], stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
    expect(added).toBeDefined();
    const args = events.flatMap((e) => (e.type === "response.function_call_arguments.delta" ? [e.delta] : [])).join("");
    const argsDone = events.find((e) => e.type === "response.function_call_arguments.done") as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent;
    expect(args).toBe(argsDone.arguments);
    expect(JSON.parse(args)).toEqual({ city: "Paris" });
    const itemDone = events.find((e) => e.type === "response.output_item.done" && e.item.type === "function_call") as OpenAI.Responses.ResponseOutputItemDoneEvent;
    expect((itemDone.item as OpenAI.Responses.ResponseFunctionToolCall).arguments).toBe(args);
  });

  it("tool_choice names the function: the call is constrained by a grammar", async () => {
    const { openai, engine } = setup([weatherCall]);
    const response = await openai.responses.create({ model: MODEL, input: "Paris", tools: [weatherTool], tool_choice: { type: "function", name: "get_weather" } });
    expect(response.output.some((item) => item.type === "function_call")).toBe(true);
    expect(engine.requests[0].responseFormat?.type).toBe("structural_tag");
  });
});

describe("openai v6: conversation state", () => {
  it("previous_response_id continues the conversation and reuses the KV cache", async () => {
    const { openai, engine } = setup(["Nice to meet you, Alice.", "Your name is Alice."]);
    const first = await openai.responses.create({ model: MODEL, input: "My name is Alice." });
    const second = await openai.responses.create({ model: MODEL, input: "What is my name?", previous_response_id: first.id });
    expect(second.output_text).toBe("Your name is Alice.");
    expect(second.previous_response_id).toBe(first.id);
    const prompt = promptText(engine.requests[1]);
    expect(prompt).toContain("My name is Alice.");
    expect(prompt).toContain("Nice to meet you, Alice.");
    expect(second.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("function_call_output continued with previous_response_id (only the new item sent)", async () => {
    const { openai, engine } = setup((request) => (promptText(request).includes("18°C") ? "18°C in Paris." : weatherCall));
    const first = await openai.responses.create({ model: MODEL, input: "Weather in Paris?", tools: [weatherTool] });
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await openai.responses.create({
      model: MODEL,
      tools: [weatherTool],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "18°C and sunny" }],
    });
    expect(second.output_text).toBe("18°C in Paris.");
    expect(promptText(engine.requests[1])).toContain("Weather in Paris?");
  });

  it("retrieve, inputItems.list and delete; a deleted id is 404 and unusable as previous_response_id", async () => {
    const { openai } = setup(["Stored reply."]);
    const created = await openai.responses.create({ model: MODEL, input: "keep this" });
    const retrieved = await openai.responses.retrieve(created.id);
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.output_text).toBe("Stored reply.");
    const items: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of openai.responses.inputItems.list(created.id)) items.push(item);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: "message", role: "user" });
    await openai.responses.delete(created.id);
    const gone = await openai.responses.retrieve(created.id).catch((e) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    const stale = await openai.responses.create({ model: MODEL, input: "again", previous_response_id: created.id }).catch((e) => e);
    expect(stale).toBeInstanceOf(OpenAI.BadRequestError);
    expect(stale).toMatchObject({ status: 400, code: "previous_response_not_found", param: "previous_response_id" });
  });
});

describe("openai v6: structured output and errors", () => {
  const schema = { type: "object", properties: { city: { type: "string" }, population: { type: "number" } }, required: ["city", "population"], additionalProperties: false };

  it("text.format json_schema constrains decoding; responses.parse() gives output_parsed", async () => {
    const { openai, engine } = setup(['{"city": "Paris", "population": 2100000}']);
    const response = await openai.responses.parse({
      model: "Qwen2.5-0.5B-Instruct",
      input: "Largest city of France?",
      text: { format: { type: "json_schema", name: "city", schema, strict: true } },
    });
    expect(response.output_parsed).toEqual({ city: "Paris", population: 2100000 });
    expect(response.text?.format).toMatchObject({ type: "json_schema", name: "city" });
    expect(engine.requests[0].responseFormat).toEqual({ type: "json_object", schema: JSON.stringify(schema) });
  });

  it("bad values are 400s naming the param; hosted-only tools are refused", async () => {
    const { openai } = setup([]);
    const bad = await openai.responses.create({ model: MODEL, input: "hi", temperature: 9 }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad).toMatchObject({ status: 400, param: "temperature" });
    const hosted = await openai.responses.create({ model: MODEL, input: "hi", tools: [{ type: "web_search" }] }).catch((e) => e);
    expect(hosted).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String(hosted.param)).toMatch(/^tools/);
    const missing = await openai.responses.create({ model: "no-such-model", input: "hi" }).catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("breaking out of a stream stops generation; the next request runs", async () => {
    const { client, openai } = setup([Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "), "still fine"]);
    const stream = await openai.responses.create({ model: MODEL, input: "long", stream: true });
    let n = 0;
    for await (const event of stream) if (event.type === "response.output_text.delta" && ++n === 3) break;
    expect(n).toBe(3);
    await expect.poll(() => client.queueState()).toEqual({ waiting: 0, running: false });
    const next = await openai.responses.create({ model: MODEL, input: "again" });
    expect(next.output_text).toBe("still fine");
  });
});
