/**
 * The Responses `mcp` tool streamed, and through the unchanged SDKs on
 * `client.fetch`: the hosted API's events in its order (each listing and call
 * between its output_item events), the openai SDK v6 and v7 (`create`,
 * streaming, an approval round trip), and the Agents SDK's `hostedMcpTool`
 * with and without approvals. The server is the SDK's McpServer on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI6 from "openai";
import OpenAI7 from "openai-v7";
import { Agent, hostedMcpTool, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import type { ResponseStreamEvent } from "../../src/index.js";
import type { ScriptedEngineOptions } from "../../src/testing.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";
import { scriptedClient } from "./support/client.js";

const MODEL = "Qwen3-0.6B";
const BASE = "http://localhost.webgpu/v1";
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const answered = (request: { messages: Array<{ content: unknown }> }) => JSON.stringify(request.messages).includes("tool_response");

let server: McpFixture;
beforeAll(async () => {
  server = await startMcpFixture();
});
afterAll(() => server.close());

const mcp = (extra: Record<string, unknown> = {}) => ({ type: "mcp" as const, server_label: "fixture", server_url: server.url, ...extra });

/** The event types, with each output item's type after its output_item events. */
const sequence = (events: Array<{ type: string; item?: { type: string } }>) => events.map((e) => (e.item ? `${e.type}:${e.item.type}` : e.type)).filter((t) => !t.endsWith(".delta"));

const EXPECTED_CALL_FLOW = [
  "response.created",
  "response.in_progress",
  "response.output_item.added:mcp_list_tools",
  "response.mcp_list_tools.in_progress",
  "response.mcp_list_tools.completed",
  "response.output_item.done:mcp_list_tools",
  "response.output_item.added:mcp_call",
  "response.mcp_call.in_progress",
  "response.mcp_call_arguments.done",
  "response.mcp_call.completed",
  "response.output_item.done:mcp_call",
  "response.output_item.added:message",
  "response.content_part.added",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done:message",
  "response.completed",
];

describe("streaming: the hosted API's events", () => {
  it("a listing and a call, each between its output_item events, then the answer", async () => {
    const { client } = scriptedClient([call("add", { a: 2, b: 3 }), "Five."]);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: MODEL, input: "2+3", tools: [mcp({ require_approval: "never" })], stream: true })) events.push(event);
    expect(sequence(events)).toEqual(EXPECTED_CALL_FLOW);
    const deltas = events.filter((e) => e.type === "response.mcp_call_arguments.delta").map((e) => (e as { delta: string }).delta).join("");
    expect(deltas).toBe('{"a":2,"b":3}');
    const done = events.find((e) => e.type === "response.output_item.done" && e.item.type === "mcp_call") as { item: { output: string }; output_index: number };
    expect(done.item.output).toBe("5");
    expect(done.output_index).toBe(1);
    // Sequence numbers run without a gap, and the final response holds the same items.
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const completed = events.at(-1) as { response: { output: Array<{ type: string }> } };
    expect(completed.response.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
  });

  it("a failing call gives response.mcp_call.failed; a failed listing response.mcp_list_tools.failed", async () => {
    const { client } = scriptedClient([call("fail", {}), "It failed.", "No tools."]);
    const failing: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: MODEL, input: "x", tools: [mcp({ require_approval: "never" })], stream: true })) failing.push(event);
    expect(sequence(failing)).toContain("response.mcp_call.failed");
    const unreachable: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: MODEL, input: "x", tools: [mcp({ server_url: "http://127.0.0.1:9/mcp" })], stream: true })) unreachable.push(event);
    expect(sequence(unreachable).slice(2, 6)).toEqual(["response.output_item.added:mcp_list_tools", "response.mcp_list_tools.in_progress", "response.mcp_list_tools.failed", "response.output_item.done:mcp_list_tools"]);
  });

  it("an approval request is an output item of its own, and ends the stream", async () => {
    const { client } = scriptedClient([call("add", { a: 1, b: 1 })]);
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: MODEL, input: "x", tools: [mcp()], stream: true })) events.push(event);
    expect(sequence(events).slice(6)).toEqual(["response.output_item.added:mcp_approval_request", "response.output_item.done:mcp_approval_request", "response.completed"]);
  });
});

for (const [label, OpenAI] of [["v6", OpenAI6], ["v7", OpenAI7]] as const) {
  describe(`openai ${label} on client.fetch`, () => {
    /** Typed as v6 (the calls used here have the same shapes in both majors); each major runs its own code. */
    function sdk(replies: ScriptedEngineOptions["replies"]): OpenAI6 {
      const { client } = scriptedClient(replies);
      return new OpenAI({ baseURL: BASE, apiKey: "local", maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => client.fetch(url, init) }) as unknown as OpenAI6;
    }

    it("responses.create with an mcp tool: listing, call, answer", async () => {
      const openai = sdk([call("echo", { text: "hey" }), "Echoed."]);
      const response = await openai.responses.create({ model: MODEL, input: "echo hey", tools: [mcp({ require_approval: "never", headers: { "X-Api-Key": "k3y" } })] });
      expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      expect(response.output[1]).toMatchObject({ type: "mcp_call", name: "echo", output: "echo: hey" });
      expect(response.output_text).toBe("Echoed.");
      expect(JSON.stringify(response)).not.toContain("k3y");
    });

    it("streaming with the SDK's stream helper: the final response has the mcp items", async () => {
      const openai = sdk([call("add", { a: 4, b: 5 }), "Nine."]);
      const stream = openai.responses.stream({ model: MODEL, input: "4+5", tools: [mcp({ require_approval: "never" })] });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const final = await stream.finalResponse();
      expect(types).toContain("response.mcp_call.completed");
      expect(final.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      expect(final.output[1]).toMatchObject({ output: "9" });
      // (v6's helper sets output_text only for parsed formats: the message is read from its item.)
      expect(final.output[2]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "Nine." }] });
    });

    it("an approval round trip: approve, then decline", async () => {
      const openai = sdk((request) => (answered(request) || JSON.stringify(request.messages).includes("declined") ? "Done." : call("add", { a: 1, b: 2 })));
      const asked = await openai.responses.create({ model: MODEL, input: "1+2", tools: [mcp()] });
      const request = asked.output.find((item) => item.type === "mcp_approval_request")!;
      const approved = await openai.responses.create({ model: MODEL, previous_response_id: asked.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }], tools: [mcp()] });
      expect(approved.output[0]).toMatchObject({ type: "mcp_call", output: "3", approval_request_id: request.id });
      const calls = server.calls.length;
      const again = await openai.responses.create({ model: MODEL, input: "1+2 again", tools: [mcp()] });
      const second = again.output.find((item) => item.type === "mcp_approval_request")!;
      const declined = await openai.responses.create({ model: MODEL, previous_response_id: again.id, input: [{ type: "mcp_approval_response", approval_request_id: second.id, approve: false }], tools: [mcp()] });
      expect(declined.output.map((item) => item.type)).toEqual(["message"]);
      expect(server.calls.length).toBe(calls);
    });
  });
}

describe("@openai/agents hostedMcpTool", () => {
  let current: ReturnType<typeof scriptedClient>["client"] | null = null;
  beforeAll(() => {
    setTracingDisabled(true);
    setOpenAIAPI("responses");
    setDefaultOpenAIClient(new OpenAI7({ baseURL: BASE, apiKey: "local", maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => current!.fetch(url, init) }) as never);
  });
  afterAll(() => setTracingDisabled(false));

  it("without approvals: the agent's run uses the server's tool and answers", async () => {
    const before = server.calls.length;
    current = scriptedClient((request) => (answered(request) ? "It is 10." : call("add", { a: 4, b: 6 }))).client;
    const agent = new Agent({ name: "Calc", instructions: "Use the tools.", model: MODEL, tools: [hostedMcpTool({ serverLabel: "fixture", serverUrl: server.url, requireApproval: "never" })] });
    const result = await run(agent, "4+6?");
    expect(result.finalOutput).toBe("It is 10.");
    expect(server.calls.slice(before)).toEqual(["add"]);
  });

  it("with approvals: the run is interrupted, approved through its state, and goes on", async () => {
    const before = server.calls.length;
    current = scriptedClient((request) => (answered(request) ? "It is 12." : call("add", { a: 6, b: 6 }))).client;
    const agent = new Agent({ name: "Calc", instructions: "Use the tools.", model: MODEL, tools: [hostedMcpTool({ serverLabel: "fixture", serverUrl: server.url, requireApproval: "always" })] });
    const first = await run(agent, "6+6?");
    expect(first.interruptions).toHaveLength(1);
    expect(server.calls.length).toBe(before);
    first.state.approve(first.interruptions[0]);
    const resumed = await run(agent, first.state);
    expect(resumed.finalOutput).toBe("It is 12.");
    expect(server.calls.slice(before)).toEqual(["add"]);
  });
});
