/**
 * The Vercel AI SDK (`ai` 6 + `@ai-sdk/openai` 3), unchanged: its `openai()`
 * provider speaks the Responses API by default. Over `client.fetch` with the
 * local scripted model: generateText / streamText, tools over several steps,
 * reasoning (read from `summary_text` parts), structured output.
 */
import { describe, expect, it } from "vitest";
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import type { EngineRequest } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

function setup(replies: ScriptedEngineOptions["replies"]) {
  const { client, engine } = scriptedClient(replies);
  const bodies: Record<string, unknown>[] = [];
  const paths: string[] = [];
  const openai = createOpenAI({
    baseURL: "http://localhost.webgpu/v1",
    apiKey: "local",
    fetch: async (url, init) => {
      paths.push(new URL(String(url)).pathname);
      if (typeof init?.body === "string") bodies.push(JSON.parse(init.body));
      return client.fetch(url, init);
    },
  });
  return { client, engine, openai, bodies, paths };
}

const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
const hasToolResult = (request: EngineRequest) => promptText(request).includes("18°C");
const weatherCall = '<tool_call>\n{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>';

const weatherTool = tool({
  description: "Current weather in a city.",
  inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }),
  execute: async ({ city }) => ({ city, forecast: "18°C and sunny" }),
});

describe("ai SDK openai() (Responses): generateText", () => {
  it("text, finish reason and usage, over POST /responses", async () => {
    const { openai, paths } = setup(["Paris is the capital of France."]);
    const result = await generateText({ model: openai("Qwen3-0.6B"), prompt: "Capital of France?" });
    expect(result.text).toBe("Paris is the capital of France.");
    expect(result.finishReason).toBe("stop");
    expect(result.usage.outputTokens).toBe(7);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(paths).toEqual(["/v1/responses"]);
  });

  it("reasoning: with reasoningSummary asked for, reasoningText is the model's thinking", async () => {
    const { openai, bodies } = setup(["<think>\nThe user greets me.\n</think>\n\nHello!"]);
    const result = await generateText({
      model: openai.responses("Qwen3-0.6B"),
      prompt: "hi",
      providerOptions: { openai: { reasoningSummary: "auto", forceReasoning: true } },
    });
    expect(result.text).toBe("Hello!");
    expect(result.reasoningText?.trim()).toBe("The user greets me.");
    expect(bodies[0].reasoning).toMatchObject({ summary: "auto" });
  });

  it("a tool over two steps: call, result sent back, final text", async () => {
    const { openai, engine } = setup((request) => (hasToolResult(request) ? "It is 18°C and sunny in Paris." : weatherCall));
    const result = await generateText({ model: openai("Qwen3-0.6B"), prompt: "Weather in Paris?", tools: { weather: weatherTool }, stopWhen: stepCountIs(3) });
    expect(result.text).toBe("It is 18°C and sunny in Paris.");
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: "weather", input: { city: "Paris" } });
    expect(result.steps[0].finishReason).toBe("tool-calls");
    expect(engine.requests).toHaveLength(2);
    expect(hasToolResult(engine.requests[1])).toBe(true);
  });

  it("reasoning + a tool call over two steps: the reasoning item goes back (item_reference) and the answer follows", async () => {
    const { openai, bodies } = setup((request) => (hasToolResult(request) ? "It is 18°C." : `<think>\nI need the weather tool.\n</think>\n\n${weatherCall}`));
    const result = await generateText({
      model: openai("Qwen3-0.6B"),
      prompt: "Weather in Paris?",
      tools: { weather: weatherTool },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { reasoningSummary: "auto", forceReasoning: true } },
    });
    expect(result.text).toBe("It is 18°C.");
    expect(result.steps[0].reasoningText?.trim()).toBe("I need the weather tool.");
    const secondInput = JSON.stringify(bodies[1].input);
    expect(secondInput).toMatch(/item_reference|"type":"reasoning"/);
  });

  it("structured output: Output.object sends text.format json_schema; the object is parsed", async () => {
    const { openai, engine, bodies } = setup(['{"city": "Paris", "population": 2100000}']);
    const schema = jsonSchema<{ city: string; population: number }>({ type: "object", properties: { city: { type: "string" }, population: { type: "number" } }, required: ["city", "population"], additionalProperties: false });
    const result = await generateText({ model: openai("Qwen2.5-0.5B-Instruct"), prompt: "Largest city of France?", output: Output.object({ schema }) });
    expect(result.output).toEqual({ city: "Paris", population: 2100000 });
    expect((bodies[0].text as { format: { type: string } }).format.type).toBe("json_schema");
    expect(engine.requests[0].responseFormat?.type).toBe("json_object");
  });
});

describe("ai SDK openai() (Responses): streamText", () => {
  it("streams text deltas that join to the reply", async () => {
    const { openai } = setup(["One two three four."]);
    const result = streamText({ model: openai("Qwen3-0.6B"), prompt: "count" });
    const parts: string[] = [];
    for await (const delta of result.textStream) parts.push(delta);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe("One two three four.");
    expect(await result.finishReason).toBe("stop");
    expect((await result.usage).outputTokens).toBe(5);
  });

  it("streams reasoning (summary parts) and text separately", async () => {
    const { openai } = setup(["<think>\nThinking hard.\n</think>\n\nDone."]);
    const result = streamText({ model: openai("Qwen3-0.6B"), prompt: "hi", providerOptions: { openai: { reasoningSummary: "auto", forceReasoning: true } } });
    const reasoning: string[] = [];
    const text: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === "reasoning-delta") reasoning.push(part.text);
      if (part.type === "text-delta") text.push(part.text);
      if (part.type === "error") throw part.error;
    }
    expect(reasoning.join("").trim()).toBe("Thinking hard.");
    expect(text.join("")).toBe("Done.");
  });

  it("streams a tool call over two steps", async () => {
    const { openai } = setup((request) => (hasToolResult(request) ? "18°C and sunny." : weatherCall));
    const result = streamText({ model: openai("Qwen3-0.6B"), prompt: "Weather in Paris?", tools: { weather: weatherTool }, stopWhen: stepCountIs(3) });
    const events: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === "error") throw part.error;
      events.push(part.type);
    }
    expect(events).toContain("tool-call");
    expect(events).toContain("tool-result");
    expect(await result.text).toBe("18°C and sunny.");
  });
});
