/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20, Node), unchanged: its default
 * model speaks the Responses API through an OpenAI v7 client whose `fetch` is
 * `client.fetch`, with the local scripted model underneath.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai-v7";
import { z } from "zod";
import { Agent, run, setOpenAIAPI, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import type { EngineRequest } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

const BASE = "http://localhost.webgpu/v1";
const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

/**
 * The Agents SDK keeps the default client it first resolved, so one SDK client
 * is set once and its fetch goes to the current test's local client.
 */
let current: { client: ReturnType<typeof scriptedClient>["client"]; paths: string[] } | null = null;

beforeAll(() => {
  setTracingDisabled(true); // no trace export over the network
  setOpenAIAPI("responses");
  setDefaultOpenAIClient(
    new OpenAI({
      baseURL: BASE,
      apiKey: "local",
      maxRetries: 0,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        current!.paths.push(`${init?.method ?? "GET"} ${new URL(String(url)).pathname}`);
        return current!.client.fetch(url, init);
      },
    }) as never,
  );
});
afterAll(() => setTracingDisabled(false));

function setup(replies: ScriptedEngineOptions["replies"]) {
  const { client, engine } = scriptedClient(replies);
  const paths: string[] = [];
  current = { client, paths };
  return { client, engine, paths };
}

const getWeather = tool({
  name: "get_weather",
  description: "Current weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: 18°C and sunny`,
});

describe("@openai/agents over client.fetch (Responses API)", () => {
  it("run() of an agent with a function tool: call, tool result, final answer", async () => {
    const { engine, paths } = setup((request) =>
      promptText(request).includes("18°C") ? "It is 18°C and sunny in Paris." : '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    );
    const agent = new Agent({ name: "Weather", instructions: "Answer weather questions with the tool.", model: "Qwen3-0.6B", tools: [getWeather] });
    const result = await run(agent, "What is the weather in Paris?");
    expect(result.finalOutput).toBe("It is 18°C and sunny in Paris.");
    expect(paths).toEqual(["POST /v1/responses", "POST /v1/responses"]);
    expect(engine.requests).toHaveLength(2);
    expect(promptText(engine.requests[0])).toContain("Answer weather questions with the tool.");
    expect(promptText(engine.requests[1])).toContain("Paris: 18°C and sunny");
    const calls = result.newItems.filter((item) => item.type === "tool_call_item");
    expect(calls).toHaveLength(1);
  });

  it("run() streaming: text deltas arrive and the final output matches", async () => {
    setup(["<think>\nA greeting.\n</think>\n\nHello there!"]);
    const agent = new Agent({ name: "Greeter", instructions: "Be brief.", model: "Qwen3-0.6B" });
    const stream = await run(agent, "hi", { stream: true });
    const text: string[] = [];
    for await (const event of stream.toTextStream()) text.push(event);
    await stream.completed;
    expect(text.join("")).toBe("Hello there!");
    expect(stream.finalOutput).toBe("Hello there!");
  });

  it("structured output: an agent with outputType gets the parsed object (text.format json_schema)", async () => {
    const { engine } = setup(['{"city": "Paris", "population": 2100000}']);
    const agent = new Agent({
      name: "Facts",
      instructions: "Answer with JSON.",
      model: "Qwen2.5-0.5B-Instruct",
      outputType: z.object({ city: z.string(), population: z.number() }),
    });
    const result = await run(agent, "Largest city of France?");
    expect(result.finalOutput).toEqual({ city: "Paris", population: 2100000 });
    expect(engine.requests[0].responseFormat?.type).toBe("json_object");
  });
});
