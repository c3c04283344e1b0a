/**
 * Open Responses compliance, over real HTTP: `client.fetch` is served on
 * 127.0.0.1 and plain `fetch` sends the scenarios the Open Responses compliance
 * suite (openresponses/openresponses) covers — basic, streaming, system prompt,
 * tool calling (plain and streaming), function call round trip, image input on
 * a vision model, multi-turn, previous_response_id, assistant phase labels,
 * compaction. The checks are ours, written from the specification's OpenAPI
 * document (required fields, types, the streaming event sequence): see
 * ./support/open-responses-shapes.ts. WebSocket transport is out of scope (a
 * page has no server socket).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRequest } from "../../src/index.js";
import { scriptedClient } from "./support/client.js";
import { serveFetch, type ServedFetch } from "./support/serve-fetch.js";
import { checkCompaction, checkEvent, checkResponse, readSse } from "./support/open-responses-shapes.js";

const MODEL = "Qwen3-0.6B";
const VISION = "Phi-3.5-vision-instruct-q4f32_1-MLC";
// a 1×1 PNG
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

/** The scripted model: a weather call when a weather tool is offered and no result came back yet; else a short reply. */
function reply(request: EngineRequest): string {
  const prompt = promptText(request);
  if (prompt.includes("CONTEXT CHECKPOINT") || /summar/i.test(prompt.split("\n").slice(-3).join("\n"))) return "Summary: the user is Alice; she asked about Paris and its weather.";
  if (prompt.includes("get_weather") && !prompt.includes("64 degrees")) return '<tool_call>\n{"name": "get_weather", "arguments": {"location": "San Francisco, CA"}}\n</tool_call>';
  if (prompt.includes("64 degrees")) return "It is 64 degrees and clear in San Francisco.";
  if (prompt.includes("papaya")) return prompt.includes("What code word") ? "The code word is papaya." : "OK";
  if (prompt.includes("Alice")) return "Your name is Alice.";
  return "<think>\nA short answer.\n</think>\n\nHello there, friend!";
}

let served: ServedFetch;
const { client, engine } = scriptedClient(reply);

beforeAll(async () => {
  served = await serveFetch(client.fetch);
});
afterAll(() => served.close());

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${served.baseURL}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer local" }, body: JSON.stringify(body) });
}

async function createOk(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await post("/responses", body);
  const json = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(json)).toBe(200);
  expect(checkResponse(json)).toEqual([]);
  return json;
}

const outputTypes = (response: Record<string, unknown>) => (response.output as { type: string }[]).map((item) => item.type);
const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: { type: "object", properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } }, required: ["location"] },
};

async function streamOk(body: Record<string, unknown>) {
  const response = await post("/responses", { ...body, stream: true });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events = await readSse(response);
  const errors = events.flatMap((e, i) => [...checkEvent(e.data, `events[${i}]`), ...(e.event && e.event !== e.data.type ? [`events[${i}]: SSE event name ${e.event} ≠ data.type ${String(e.data.type)}`] : [])]);
  expect(errors).toEqual([]);
  const numbers = events.map((e) => e.data.sequence_number as number);
  numbers.forEach((n, i) => i > 0 && expect(n).toBeGreaterThan(numbers[i - 1]));
  return events;
}

describe("Open Responses compliance scenarios over HTTP", () => {
  it("basic-response: a user message item → a completed response that matches ResponseResource", async () => {
    const json = await createOk({ model: MODEL, input: [{ type: "message", role: "user", content: "Say hello in exactly 3 words." }] });
    expect(json.status).toBe("completed");
    expect(outputTypes(json)).toContain("message");
    expect(json.model).toBe(MODEL);
  });

  it("streaming-response: every event matches its schema; created → in_progress → … → completed; deltas join to the final text", async () => {
    const events = await streamOk({ model: MODEL, input: [{ type: "message", role: "user", content: "Count from 1 to 5." }] });
    const types = events.map((e) => e.data.type as string);
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.at(-1)).toBe("response.completed");
    const final = events.at(-1)!.data.response as Record<string, unknown>;
    expect(final.status).toBe("completed");
    const message = (final.output as { type: string; content?: { text: string }[] }[]).find((item) => item.type === "message")!;
    const text = events.filter((e) => e.data.type === "response.output_text.delta").map((e) => e.data.delta).join("");
    expect(text).toBe(message.content![0].text);
    // every item opened is closed, in output order
    const added = events.filter((e) => e.data.type === "response.output_item.added").map((e) => e.data.output_index);
    const done = events.filter((e) => e.data.type === "response.output_item.done").map((e) => e.data.output_index);
    expect(added).toEqual(done);
    expect(added).toEqual((final.output as unknown[]).map((_, i) => i));
  });

  it("system-prompt: a system message item reaches the model", async () => {
    const json = await createOk({
      model: MODEL,
      input: [
        { type: "message", role: "system", content: "You are a pirate. Always respond in pirate speak." },
        { type: "message", role: "user", content: "Say hello." },
      ],
    });
    expect(json.status).toBe("completed");
    expect(promptText(engine.requests.at(-1)!)).toContain("You are a pirate.");
  });

  it("tool-calling: a function tool → a function_call output item", async () => {
    const json = await createOk({ model: MODEL, input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }], tools: [weatherTool] });
    const call = (json.output as Record<string, unknown>[]).find((item) => item.type === "function_call")!;
    expect(call).toMatchObject({ name: "get_weather", status: "completed" });
    expect(JSON.parse(call.arguments as string)).toEqual({ location: "San Francisco, CA" });
  });

  it("tool-calling-streaming: output_item.added (function_call) → arguments.delta → arguments.done → output_item.done", async () => {
    const events = await streamOk({ model: MODEL, input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }], tools: [weatherTool] });
    const types = events.map((e) => e.data.type as string);
    const added = events.findIndex((e) => e.data.type === "response.output_item.added" && (e.data.item as { type: string }).type === "function_call");
    const done = events.findIndex((e) => e.data.type === "response.output_item.done" && (e.data.item as { type: string }).type === "function_call");
    expect(added).toBeGreaterThanOrEqual(0);
    expect(types.indexOf("response.function_call_arguments.delta")).toBeGreaterThan(added);
    expect(types.indexOf("response.function_call_arguments.done")).toBeLessThan(done);
    const args = events.filter((e) => e.data.type === "response.function_call_arguments.delta").map((e) => e.data.delta).join("");
    expect(args).toBe((events[done].data.item as { arguments: string }).arguments);
  });

  it("function-call-roundtrip: a named tool_choice, then function_call_output with previous_response_id", async () => {
    const first = await createOk({ model: MODEL, input: "Use the weather tool to get the temperature in San Francisco.", tools: [weatherTool], tool_choice: { type: "function", name: "get_weather" } });
    const call = (first.output as Record<string, unknown>[]).find((item) => item.type === "function_call")!;
    expect(call.call_id).toEqual(expect.any(String));
    const second = await createOk({ model: MODEL, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "64 degrees and clear" }] });
    expect(second.status).toBe("completed");
    expect(outputTypes(second)).toContain("message");
    expect(second.previous_response_id).toBe(first.id);
  });

  it("image-input: input_text + input_image (data URL) on a vision model", async () => {
    const json = await createOk({
      model: VISION,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "What do you see in this image? Answer in one sentence." }, { type: "input_image", image_url: PIXEL }] }],
    });
    expect(json.status).toBe("completed");
    expect(JSON.stringify(engine.requests.at(-1)!.messages)).toContain(PIXEL);
    // a remote URL is refused: this library never fetches from the network
    const remote = await post("/responses", { model: VISION, input: [{ type: "message", role: "user", content: [{ type: "input_image", image_url: "https://example.com/logo.png" }] }] });
    expect(remote.status).toBe(400);
  });

  it("multi-turn: user / assistant / user message items as history", async () => {
    const json = await createOk({
      model: MODEL,
      input: [
        { type: "message", role: "user", content: "My name is Alice." },
        { type: "message", role: "assistant", content: "Hello Alice! Nice to meet you. How can I help you today?" },
        { type: "message", role: "user", content: "What is my name?" },
      ],
    });
    expect(json.status).toBe("completed");
    expect(promptText(engine.requests.at(-1)!)).toContain("Hello Alice! Nice to meet you.");
  });

  it("previous-response-id: the second turn sees the first", async () => {
    const first = await createOk({ model: MODEL, input: "Remember this code word: papaya. Reply with only OK." });
    const second = await createOk({ model: MODEL, previous_response_id: first.id, input: "What code word did I ask you to remember?" });
    expect(second.status).toBe("completed");
    expect(promptText(engine.requests.at(-1)!)).toContain("papaya");
  });

  it("assistant phase labels: assistant items labelled commentary / final_answer are accepted as history", async () => {
    const json = await createOk({
      model: MODEL,
      input: [
        { type: "message", role: "user", content: "My name is Alice." },
        { type: "message", role: "assistant", phase: "commentary", content: [{ type: "output_text", text: "Noting the name." }] },
        { type: "message", role: "assistant", phase: "final_answer", content: [{ type: "output_text", text: "Hello Alice!" }] },
        { type: "message", role: "user", content: "What is my name?" },
      ],
    });
    expect(json.status).toBe("completed");
    expect(promptText(engine.requests.at(-1)!)).toContain("Hello Alice!");
  });

  it("compaction: POST /responses/compact → response.compaction with a compaction item, accepted back as input; no model → 400", async () => {
    const history = [
      { type: "message", role: "user", content: "My name is Alice." },
      { type: "message", role: "assistant", content: "Hello Alice!" },
      { type: "message", role: "user", content: "Tell me about Paris." },
      { type: "message", role: "assistant", content: "Paris is the capital of France." },
      { type: "message", role: "user", content: "And its weather?" },
      { type: "message", role: "assistant", content: "Mild, with rain in autumn." },
    ];
    const response = await post("/responses/compact", { model: MODEL, input: history });
    const json = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(json)).toBe(200);
    expect(checkCompaction(json)).toEqual([]);
    const output = json.output as Record<string, unknown>[];
    expect(output.some((item) => item.type === "compaction")).toBe(true);
    const next = await createOk({ model: MODEL, input: [...output, { type: "message", role: "user", content: "What is my name?" }] });
    expect(next.status).toBe("completed");
    const prompt = promptText(engine.requests.at(-1)!);
    expect(prompt).toContain("Summary: the user is Alice");
    const missing = await post("/responses/compact", { input: history });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe("model");
  });

  it("errors are JSON error objects with the HTTP status", async () => {
    const bad = await post("/responses", { model: MODEL, input: "hi", temperature: 9 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error", param: "temperature" } });
    const unknown = await fetch(`${served.baseURL}/responses/resp_unknown`);
    expect(unknown.status).toBe(404);
  });
});
