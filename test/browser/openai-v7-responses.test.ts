/**
 * The unchanged OpenAI SDK v7 in the page speaking the Responses API to
 * `client.fetch` of a client whose host runs in the default worker (scripted
 * engine: no download, no GPU work).
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai-v7";
import { BASE, setup } from "./support/openai-v7-client.js";

const MODEL = "Qwen3-0.6B";


const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

describe("openai v7 responses in the page, host in the worker", () => {
  it("create() plain and streaming; output_text; deltas join to the final text", async () => {
    const { openai } = setup(["Hello from the worker.", "<think>\nCounting.\n</think>\n\nOne two three."]);
    const response = await openai.responses.create({ model: MODEL, input: "hi" });
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Hello from the worker.");
    const stream = await openai.responses.create({ model: MODEL, input: "count", stream: true });
    const types: string[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") final = event.response;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.reasoning_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("One two three.");
    expect(final?.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
  });

  it("responses.stream() helper: finalResponse()", async () => {
    const { openai } = setup(["Final response here."]);
    const final = await openai.responses.stream({ model: MODEL, input: "hi" }).finalResponse();
    const message = final.output.find((item) => item.type === "message") as OpenAI.Responses.ResponseOutputMessage;
    expect(message.content).toMatchObject([{ type: "output_text", text: "Final response here." }]);
  });

  it("function tool round trip with function_call_output and previous_response_id", async () => {
    const { openai } = setup(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', "It is 18°C in Paris."]);
    const first = await openai.responses.create({ model: MODEL, input: "Weather in Paris?", tools: [weatherTool] });
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(call.arguments)).toEqual({ city: "Paris" });
    const second = await openai.responses.create({
      model: MODEL,
      tools: [weatherTool],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "18°C and sunny" }],
    });
    expect(second.output_text).toBe("It is 18°C in Paris.");
    expect(second.previous_response_id).toBe(first.id);
    const retrieved = await openai.responses.retrieve(second.id);
    expect(retrieved.output_text).toBe("It is 18°C in Paris.");
  });

  it("structured output with text.format json_schema: responses.parse()", async () => {
    const { openai } = setup(['{"city": "Paris"}']);
    const parsed = await openai.responses.parse({
      model: "Qwen2.5-0.5B-Instruct",
      input: "Capital of France?",
      text: { format: { type: "json_schema", name: "city", strict: true, schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } } },
    });
    expect(parsed.output_parsed).toEqual({ city: "Paris" });
  });

  it("compaction through the worker: POST /responses/compact, the item sent back as input", async () => {
    const { client, openai } = setup(["Alice asked about Paris.", "Your name is Alice."]);
    const history = [
      { role: "user" as const, content: "My name is Alice." },
      { role: "assistant" as const, content: "Hello Alice!" },
      { role: "user" as const, content: "Tell me about Paris." },
      { role: "assistant" as const, content: "Paris is the capital of France." },
    ];
    const response = await client.fetch(`${BASE}/responses/compact`, { method: "POST", body: JSON.stringify({ model: MODEL, input: history }) });
    expect(response.status).toBe(200);
    const compacted = (await response.json()) as { object: string; output: OpenAI.Responses.ResponseInputItem[] };
    expect(compacted.object).toBe("response.compaction");
    const next = await openai.responses.create({ model: MODEL, input: [...compacted.output, { role: "user", content: "What is my name?" }] });
    expect(next.output_text).toBe("Your name is Alice.");
    const direct = await client.responses.compact({ model: MODEL, input: "hi" });
    expect(direct.output[0].type).toBe("compaction");
  });

  it("unknown previous_response_id → BadRequestError previous_response_not_found", async () => {
    const { openai } = setup([]);
    const error = await openai.responses.create({ model: MODEL, input: "hi", previous_response_id: "resp_nope" }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe("previous_response_not_found");
  });
});
