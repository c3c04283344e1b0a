/**
 * The Vercel AI SDK (`ai` 6 + `@ai-sdk/openai-compatible` 2) on `client.fetch`:
 * generateText, streamText with tools and reasoning, structured output, errors.
 */
import { describe, expect, it } from "vitest";
import { APICallError, generateText, jsonSchema, Output, stepCountIs, streamText, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { EngineRequest } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

// The json_object fallback warns on purpose (schema not sent); keep the test output clean.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

function setup(replies: ScriptedEngineOptions["replies"], options: { supportsStructuredOutputs?: boolean } = {}) {
  const { client, engine } = scriptedClient(replies);
  const bodies: Record<string, unknown>[] = [];
  const provider = createOpenAICompatible({
    name: "local",
    baseURL: "http://localhost.webgpu/v1",
    includeUsage: true,
    supportsStructuredOutputs: options.supportsStructuredOutputs,
    fetch: async (url, init) => {
      if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
      return client.fetch(url, init);
    },
  });
  return { client, engine, provider, bodies };
}

const hasToolResult = (request: EngineRequest) => request.messages.some((m) => m.role === "tool" || JSON.stringify(m.content).includes("18°C"));

const weatherTool = tool({
  description: "Current weather in a city.",
  inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }),
  execute: async ({ city }) => ({ city, forecast: "18°C and sunny" }),
});

describe("ai SDK: generateText", () => {
  it("returns the text, finish reason and usage", async () => {
    const { provider } = setup(["Paris is the capital of France."]);
    const result = await generateText({ model: provider("Qwen2.5-0.5B-Instruct"), prompt: "Capital of France?" });
    expect(result.text).toBe("Paris is the capital of France.");
    expect(result.finishReason).toBe("stop");
    expect(result.usage.outputTokens).toBe(7);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it("surfaces reasoning as reasoningText", async () => {
    const { provider } = setup(["<think>\nThe user greets me.\n</think>\n\nHello!"]);
    const result = await generateText({ model: provider("Qwen3-0.6B"), prompt: "hi" });
    expect(result.reasoningText?.trim()).toBe("The user greets me.");
    expect(result.text).toBe("Hello!");
  });

  it("a local 400 becomes an APICallError that is not retried", async () => {
    const { provider, bodies } = setup([]);
    const error = await generateText({ model: provider("Qwen3-0.6B"), prompt: "hi", temperature: 9 }).catch((e) => e);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 400, isRetryable: false });
    expect(error.message).toContain("temperature");
    expect(bodies).toHaveLength(1);
  });
});

describe("ai SDK: streamText", () => {
  it("streams text deltas and finishes", async () => {
    const { provider } = setup(["One two three."]);
    const result = streamText({ model: provider("Qwen2.5-0.5B-Instruct"), prompt: "count" });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("One two three.");
    expect(await result.finishReason).toBe("stop");
    expect((await result.usage).outputTokens).toBe(4);
  });

  it("streams reasoning parts, a tool call, the tool result and the final text across two steps", async () => {
    const { provider, engine, bodies } = setup((request) =>
      hasToolResult(request)
        ? "<think>\nI have the forecast.\n</think>\n\nIt is 18°C and sunny in Paris."
        : '<think>\nNeed the weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    );
    const result = streamText({ model: provider("Qwen3-0.6B"), prompt: "Weather in Paris?", tools: { get_weather: weatherTool }, stopWhen: stepCountIs(3) });
    const parts: string[] = [];
    let reasoning = "";
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === "reasoning-delta") reasoning += part.text;
      if (part.type === "error") throw part.error;
    }
    expect(reasoning).toContain("Need the weather.");
    expect(parts.indexOf("reasoning-start")).toBeLessThan(parts.indexOf("tool-input-start"));
    const calls = (await result.steps)[0].toolCalls;
    expect(calls).toEqual([expect.objectContaining({ toolName: "get_weather", input: { city: "Paris" } })]);
    expect(parts).toContain("tool-result");
    expect(await result.text).toBe("It is 18°C and sunny in Paris.");
    expect(engine.requests).toHaveLength(2);
    // step 2 replays the assistant tool call and the tool result, with the declared tool
    const second = bodies[1] as { messages: { role: string; tool_call_id?: string }[]; tools: unknown[] };
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(second.tools).toHaveLength(1);
  });

  it("an error after the stream started becomes an error part", async () => {
    const { ApiError } = await import("../../src/index.js");
    const { provider } = setup([{ text: "a b c d", error: new ApiError({ status: 503, code: "device_lost", message: "GPU lost" }), errorAfterTokens: 2 }]);
    const result = streamText({ model: provider("Qwen2.5-0.5B-Instruct"), prompt: "hi", onError: () => undefined });
    const errors: unknown[] = [];
    let text = "";
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") text += part.text;
      if (part.type === "error") errors.push(part.error);
    }
    expect(text).toBe("a b");
    expect(JSON.stringify(errors)).toContain("GPU lost");
  });
});

describe("ai SDK: structured output", () => {
  const schema = jsonSchema<{ city: string; population: number }>({
    type: "object",
    properties: { city: { type: "string" }, population: { type: "number" } },
    required: ["city", "population"],
    additionalProperties: false,
  });

  it("sends the schema as response_format json_schema; the host constrains decoding with it", async () => {
    const { provider, engine, bodies } = setup(['{"city": "Paris", "population": 2100000}'], { supportsStructuredOutputs: true });
    const result = await generateText({ model: provider("Qwen2.5-0.5B-Instruct"), prompt: "Largest city of France?", output: Output.object({ schema }) });
    expect(result.output).toEqual({ city: "Paris", population: 2100000 });
    expect(bodies[0].response_format).toMatchObject({ type: "json_schema", json_schema: { name: "response" } });
    const constraint = engine.requests[0].responseFormat;
    expect(constraint?.type).toBe("json_object");
    expect(JSON.parse((constraint as { schema: string }).schema)).toMatchObject({ required: ["city", "population"] });
  });

  it("without supportsStructuredOutputs, json_object mode still yields the object", async () => {
    const { provider, engine } = setup(['{"city": "Lyon", "population": 520000}']);
    const result = await generateText({ model: provider("Qwen2.5-0.5B-Instruct"), prompt: "Another city?", output: Output.object({ schema }) });
    expect(result.output).toEqual({ city: "Lyon", population: 520000 });
    expect(engine.requests[0].responseFormat?.type).toBe("json_object");
  });
});
