/**
 * LangChain's ChatOpenAI with `useResponsesApi: true` (`@langchain/openai`,
 * on openai v6) over `client.fetch`: invoke, stream, bindTools with a tool
 * result sent back, reasoning.
 */
import { describe, expect, it } from "vitest";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage, type AIMessageChunk } from "@langchain/core/messages";
import type { EngineRequest } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { scriptedClient } from "./support/client.js";

function setup(replies: ScriptedEngineOptions["replies"], model = "Qwen3-0.6B") {
  const { client, engine } = scriptedClient(replies);
  const paths: string[] = [];
  const chat = new ChatOpenAI({
    model,
    apiKey: "local",
    maxRetries: 0,
    useResponsesApi: true,
    configuration: {
      baseURL: "http://localhost.webgpu/v1",
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        paths.push(new URL(String(url)).pathname);
        return client.fetch(url, init);
      },
    },
  });
  return { chat, engine, paths };
}

const promptText = (request: EngineRequest) => request.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Current weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("@langchain/openai ChatOpenAI({ useResponsesApi: true })", () => {
  it("invoke() goes to POST /responses and returns the text", async () => {
    const { chat, paths } = setup(["Hello from the Responses face."]);
    const message = await chat.invoke("hi");
    expect(message.text).toBe("Hello from the Responses face.");
    expect(message.usage_metadata?.output_tokens).toBe(6);
    expect(paths).toEqual(["/v1/responses"]);
  });

  it("stream() yields text chunks that join to the reply", async () => {
    const { chat } = setup(["One two three."]);
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await chat.stream("count")) chunks.push(chunk);
    expect(chunks.map((c) => c.text).join("")).toBe("One two three.");
  });

  it("bindTools: a tool call, then the ToolMessage sent back gives the answer", async () => {
    const { chat, engine } = setup((request) =>
      promptText(request).includes("18°C") ? "It is 18°C in Paris." : '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    );
    const withTools = chat.bindTools([weatherTool]);
    const question = new HumanMessage("Weather in Paris?");
    const first = await withTools.invoke([question]);
    expect(first.tool_calls).toHaveLength(1);
    expect(first.tool_calls![0]).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
    const second = await withTools.invoke([question, first, new ToolMessage({ tool_call_id: first.tool_calls![0].id!, content: "18°C and sunny" })]);
    expect(second.text).toBe("It is 18°C in Paris.");
    expect(promptText(engine.requests[1])).toContain("18°C and sunny");
  });

  it("reasoning stays out of the text", async () => {
    const { chat } = setup(["<think>\nA greeting.\n</think>\n\nHello!"]);
    const message = await chat.invoke("hi");
    expect(message.text).toBe("Hello!");
  });
});
