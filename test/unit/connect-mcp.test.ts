/**
 * `connectMcp`: an MCP server's tools for the chat completions tool loop
 * (`tools` and `run(call)`) and the Prompt API (`promptTools` with
 * `execute`), on connections made by the client's host, against the SDK's
 * McpServer on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcp, createClient, type ChatCompletionMessageParam } from "../../src/index.js";
import { createScriptedEngine, type ScriptedEngineOptions } from "../../src/testing.js";
import { createPromptApi } from "../../src/prompt-api/index.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";
import { refusal } from "./support/client.js";

const MODEL = "Qwen3-0.6B";
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

function setup(replies: ScriptedEngineOptions["replies"]) {
  const engine = createScriptedEngine({ replies });
  return { client: createClient({ engine, worker: false, mcp: { callTimeoutMs: 800 } }), engine };
}

let server: McpFixture;
beforeAll(async () => {
  server = await startMcpFixture();
});
afterAll(() => server.close());

describe("connectMcp for chat completions", () => {
  it("the README's tool loop with an MCP server: tools from the listing, run(call) answers each call", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("add", { a: 20, b: 22 }), "The answer is 42."]);
    const mcp = await connectMcp(client, { server_url: server.url });
    expect(mcp.tools.map((t) => t.function.name).sort()).toEqual(["add", "big", "echo", "fail", "hang"]);
    expect(mcp.tools.find((t) => t.function.name === "add")!.function.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" } } });

    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "20 + 22?" }];
    for (;;) {
      const { choices } = await client.chat.completions.create({ model: MODEL, messages, tools: mcp.tools });
      const message = choices[0].message;
      messages.push(message);
      if (!message.tool_calls?.length) break;
      for (const toolCall of message.tool_calls) messages.push(await mcp.run(toolCall));
    }
    expect(messages[2]).toMatchObject({ role: "tool", content: "42" });
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "The answer is 42." });
    expect(server.calls.slice(before)).toEqual(["add"]);
    expect(JSON.stringify(engine.requests[1].messages)).toContain("42");
  });

  it("a failing or hanging tool answers `Error: …` (the loop goes on); a tool the server lacks throws", async () => {
    const { client } = setup([]);
    const mcp = await connectMcp(client, { server_url: server.url });
    const failed = await mcp.run({ id: "c1", type: "function", function: { name: "fail", arguments: "{}" } });
    expect(failed).toEqual({ role: "tool", tool_call_id: "c1", content: expect.stringContaining("Error: ") });
    expect(failed.content).toContain("failed on purpose");
    const hung = await mcp.run({ id: "c2", type: "function", function: { name: "hang", arguments: "{}" } });
    expect(hung.content).toMatch(/^Error: .*longer than 800 ms/);
    await expect(mcp.run({ id: "c3", type: "function", function: { name: "get_weather", arguments: "{}" } })).rejects.toThrow(/no tool `get_weather`/);
    expect(mcp.has("add")).toBe(true);
    expect(mcp.has("get_weather")).toBe(false);
  });

  it("allowed_tools: only those are given, and a call of another is refused by the host", async () => {
    const before = server.calls.length;
    const { client } = setup([]);
    const mcp = await connectMcp(client, { server_url: server.url, allowed_tools: ["echo"] });
    expect(mcp.tools.map((t) => t.function.name)).toEqual(["echo"]);
    const error = await refusal(client.mcp.callTool({ server_url: server.url, allowed_tools: ["echo"], name: "add", arguments: { a: 1, b: 1 } }));
    expect(error.status).toBe(400);
    expect(server.calls.slice(before)).toEqual([]);
  });

  it("headers reach the server; a bad URL is a 400; an unreachable server rejects in seconds with the reason", async () => {
    const guarded = await startMcpFixture({ requireHeader: ["authorization", "Bearer t0ken"] });
    try {
      const { client } = setup([]);
      const mcp = await connectMcp(client, { server_url: guarded.url, authorization: "t0ken" });
      expect(mcp.listing.length).toBe(5);
      await expect(connectMcp(client, { server_url: guarded.url })).rejects.toThrow(/credentials/);
    } finally {
      await guarded.close();
    }
    const { client } = setup([]);
    const bad = await refusal(connectMcp(client, { server_url: "file:///etc/passwd" }));
    expect(bad.status).toBe(400);
    expect(bad.param).toBe("server.server_url");
    const started = Date.now();
    await expect(connectMcp(client, { server_url: "http://127.0.0.1:9/mcp" })).rejects.toThrow(/Could not connect to the MCP server/);
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});

describe("connectMcp for the Prompt API", () => {
  it("promptTools run on the server through execute, and the session answers with the result", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("echo", { text: "ping" }), "It said echo: ping."]);
    const mcp = await connectMcp(client, { server_url: server.url, allowed_tools: ["echo"] });
    const LanguageModel = createPromptApi({ client, model: MODEL });
    const session = await LanguageModel.create({ tools: mcp.promptTools });
    expect(await session.prompt("Echo ping")).toBe("It said echo: ping.");
    expect(server.calls.slice(before)).toEqual(["echo"]);
    expect(JSON.stringify(engine.requests[1].messages)).toContain("echo: ping");
  });
});
