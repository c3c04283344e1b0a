/**
 * LangChain's ChatOpenAI (`@langchain/openai` 1.5.9, on openai v6) with
 * `configuration.fetch = client.fetch`: invoke, stream, bindTools, reasoning.
 */
import { describe, expect, it } from "vitest";
import { ChatOpenAI } from "@langchain/openai";
import type { AIMessageChunk } from "@langchain/core/messages";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

function setup(replies: ScriptedEngineOptions["replies"], model = "Qwen2.5-0.5B-Instruct") {
  const { client, engine } = scriptedClient(replies);
  let attempts = 0;
  const chat = new ChatOpenAI({
    model,
    apiKey: "local", // the openai SDK underneath insists on one; the local server ignores it
    maxRetries: 2,
    configuration: {
      baseURL: "http://localhost.webgpu/v1",
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        attempts++;
        return client.fetch(url, init);
      },
    },
  });
  return { chat, engine, attempts: () => attempts };
}

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

async function collect(stream: AsyncIterable<AIMessageChunk>): Promise<{ chunks: AIMessageChunk[]; merged: AIMessageChunk }> {
  const chunks: AIMessageChunk[] = [];
  let merged: AIMessageChunk | undefined;
  for await (const chunk of stream) {
    chunks.push(chunk);
    merged = merged ? merged.concat(chunk) : chunk;
  }
  return { chunks, merged: merged as AIMessageChunk };
}

describe("LangChain ChatOpenAI", () => {
  it("invoke() returns an AIMessage with content and usage", async () => {
    const { chat } = setup(["Bonjour tout le monde."]);
    const message = await chat.invoke("Say hello in French.");
    expect(message.content).toBe("Bonjour tout le monde.");
    expect(message.usage_metadata).toMatchObject({ output_tokens: 5 });
    expect(message.response_metadata).toMatchObject({ finish_reason: "stop" });
  });

  it("stream() yields content chunks that merge into the reply, with usage", async () => {
    const { chat } = setup(["One two three."]);
    const { chunks, merged } = await collect(await chat.stream("count"));
    expect(chunks.length).toBeGreaterThan(2);
    expect(merged.content).toBe("One two three.");
    expect(merged.usage_metadata).toMatchObject({ output_tokens: 4 });
  });

  it("a 400 and a 404 pass through with their status and code, not retried", async () => {
    const { chat, attempts } = setup([]);
    const bad = await chat.invoke("hi", { response_format: { type: "xml" } } as never).catch((e) => e);
    expect(bad).toMatchObject({ status: 400, param: "response_format.type" });
    expect(bad.constructor.name).toBe("BadRequestError");
    expect(attempts()).toBe(1);
    const { chat: unknown, attempts: unknownAttempts } = setup([], "no-such-model");
    const notFound = await unknown.invoke("hi").catch((e) => e);
    expect(notFound).toMatchObject({ status: 404, code: "model_not_found" });
    expect(unknownAttempts()).toBe(1);
  });

  it("withStructuredOutput (json_schema): the schema reaches the host's constrained decoding", async () => {
    const { chat, engine } = setup(['{"city": "Paris", "population": 2100000}']);
    const schema = { title: "city", type: "object", properties: { city: { type: "string" }, population: { type: "number" } }, required: ["city", "population"], additionalProperties: false };
    const result = await chat.withStructuredOutput(schema, { method: "jsonSchema" }).invoke("Largest city of France?");
    expect(result).toEqual({ city: "Paris", population: 2100000 });
    expect(JSON.parse((engine.requests[0].responseFormat as { schema: string }).schema)).toMatchObject({ required: ["city", "population"] });
  });

  it("bindTools: streamed tool_call_chunks merge into one tool call", async () => {
    const { chat } = setup(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>']);
    const { chunks, merged } = await collect(await chat.bindTools([weatherTool]).stream("Weather in Paris?"));
    const toolChunks = chunks.flatMap((c) => c.tool_call_chunks ?? []);
    expect(toolChunks.length).toBeGreaterThan(0);
    expect(toolChunks[0]).toMatchObject({ name: "get_weather", index: 0, id: expect.any(String) });
    expect(merged.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Paris" }, type: "tool_call" })]);
    expect(merged.response_metadata).toMatchObject({ finish_reason: "tool_calls" });
  });

  it("bindTools: invoke returns parsed tool_calls", async () => {
    const { chat } = setup(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>']);
    const message = await chat.bindTools([weatherTool]).invoke("Weather in Oslo?");
    expect(message.tool_calls).toEqual([expect.objectContaining({ name: "get_weather", args: { city: "Oslo" } })]);
  });

  it("reasoning arrives in additional_kwargs.reasoning_content (invoke and stream)", async () => {
    const reply = "<think>\nThe user wants a greeting.\n</think>\n\nHello!";
    const { chat } = setup([reply, reply], "Qwen3-0.6B");
    const message = await chat.invoke("hi");
    expect(String(message.additional_kwargs.reasoning_content).trim()).toBe("The user wants a greeting.");
    expect(message.content).toBe("Hello!");
    const { chunks, merged } = await collect(await chat.stream("hi"));
    expect(chunks.filter((c) => c.additional_kwargs.reasoning_content !== undefined).length).toBeGreaterThan(1);
    expect(String(merged.additional_kwargs.reasoning_content).trim()).toBe("The user wants a greeting.");
    expect(merged.content).toBe("Hello!");
  });
});
