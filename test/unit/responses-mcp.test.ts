/**
 * The Responses `mcp` tool against a real MCP server (the SDK's McpServer on
 * 127.0.0.1, test/support/mcp-server.ts), with the scripted model making the
 * calls: listing, calls and their results fed back, errors as `mcp_call.error`,
 * `allowed_tools`, the listing reused on later turns, bounded rounds, bounds on
 * hanging and flooding servers, URLs, and headers never stored or returned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine, EngineHost, type ScriptedEngineOptions } from "../../src/testing.js";
import { MemoryResponseStore } from "../../src/store/memory-response-store.js";
import type { McpOptions } from "../../src/mcp/limits.js";
import { MAX_MCP_ROUNDS } from "../../src/host/responses-mcp.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";
import { refusal } from "./support/client.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

function setup(replies: ScriptedEngineOptions["replies"], mcp?: McpOptions): { client: Client; engine: ReturnType<typeof createScriptedEngine> } {
  const engine = createScriptedEngine({ replies });
  return { client: createClient({ engine, worker: false, mcp }), engine };
}

const prompt = (engine: ReturnType<typeof createScriptedEngine>, i: number) => JSON.stringify(engine.requests[i].messages);

let server: McpFixture;
beforeAll(async () => {
  server = await startMcpFixture({ bigSize: 50_000 });
});
afterAll(() => server.close());

const tool = (extra: Record<string, unknown> = {}) => ({ type: "mcp", server_label: "fixture", server_url: server.url, require_approval: "never", ...extra });

describe("the mcp tool: listing, calls, results fed back", () => {
  it("lists the server's tools, runs the model's call and gives the result to the model, which answers", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("add", { a: 2, b: 3 }), "The sum is 5."]);
    const response = await client.responses.create({ model: MODEL, input: "What is 2+3?", tools: [tool()] });

    expect(response.status).toBe("completed");
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const listing = response.output[0] as unknown as { server_label: string; tools: Array<{ name: string; input_schema: { properties: Record<string, unknown> }; annotations: unknown }> };
    expect(listing.server_label).toBe("fixture");
    expect(listing.tools.map((t) => t.name).sort()).toEqual(["add", "big", "echo", "fail", "hang"]);
    expect(Object.keys(listing.tools.find((t) => t.name === "add")!.input_schema.properties)).toEqual(["a", "b"]);
    expect(listing.tools.find((t) => t.name === "add")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(response.output[1]).toMatchObject({ type: "mcp_call", server_label: "fixture", name: "add", arguments: '{"a":2,"b":3}', output: "5", error: null });
    expect(server.calls.slice(before)).toEqual(["add"]);
    // Two generations: the second prompt carries the tool's result; the first offered the server's tools.
    expect(engine.requests).toHaveLength(2);
    expect(prompt(engine, 0)).toContain("Adds two numbers.");
    // Qwen3 reads a result as a user turn of <tool_response> blocks (families/styles/hermes.ts).
    expect(engine.requests[1].messages.at(-1)).toMatchObject({ role: "user", content: "<tool_response>\n5\n</tool_response>" });
    expect(response.output_text).toBe("The sum is 5.");
    // Both generations count.
    expect(response.usage!.output_tokens).toBeGreaterThan(engine.requests.length);
  });

  it("a tool that throws gives an mcp_call with error, and the response goes on", async () => {
    const { client, engine } = setup([call("fail", {}), "It failed."]);
    const response = await client.responses.create({ model: MODEL, input: "Try it", tools: [tool()] });
    const failed = response.output.find((item) => item.type === "mcp_call") as { output: unknown; error: string };
    expect(failed.output).toBeNull();
    expect(failed.error).toContain("failed on purpose");
    expect(response.output.at(-1)).toMatchObject({ type: "message" });
    expect(String(engine.requests[1].messages.at(-1)!.content)).toContain("failed on purpose");
  });

  it("a tool that hangs is an mcp_call error after callTimeoutMs, not a hung response", async () => {
    const { client } = setup([call("hang", {}), "Gave up."], { callTimeoutMs: 800 });
    const started = Date.now();
    const response = await client.responses.create({ model: MODEL, input: "Wait", tools: [tool()] });
    const hung = response.output.find((item) => item.type === "mcp_call") as { error: string };
    expect(hung.error).toBe("The MCP tool `hang` took longer than 800 ms.");
    expect(response.status).toBe("completed");
    // Bounded by the timeout, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("a large output is cut at maxOutputChars with a note, for the model and in the item", async () => {
    const { client, engine } = setup([call("big", {}), "Long."], { maxOutputChars: 1000 });
    const response = await client.responses.create({ model: MODEL, input: "Big", tools: [tool()] });
    const big = response.output.find((item) => item.type === "mcp_call") as { output: string };
    expect(big.output.startsWith("x".repeat(1000))).toBe(true);
    expect(big.output).toContain("[output truncated: the first 1000 of 50000 characters]");
    expect(big.output.length).toBeLessThan(1100);
    expect(String(engine.requests[1].messages.at(-1)!.content).length).toBeLessThan(1100);
  });

  it("the number of tools per server is capped", async () => {
    const { client, engine } = setup(["No tools needed."], { maxToolsPerServer: 2 });
    const response = await client.responses.create({ model: MODEL, input: "Hi", tools: [tool()] });
    expect((response.output[0] as { tools: unknown[] }).tools).toHaveLength(2);
    expect(engine.requests[0].messages.length).toBeGreaterThan(0);
  });

  it("rounds are bounded: a model that keeps calling stops after MAX_MCP_ROUNDS generations", async () => {
    const before = server.calls.length;
    const { client, engine } = setup(() => call("add", { a: 1, b: 1 }));
    const response = await client.responses.create({ model: MODEL, input: "Loop", tools: [tool()] });
    expect(engine.requests).toHaveLength(MAX_MCP_ROUNDS);
    expect(server.calls.length - before).toBe(MAX_MCP_ROUNDS);
    expect(response.output.filter((item) => item.type === "mcp_call")).toHaveLength(MAX_MCP_ROUNDS);
  });

  it("max_tool_calls bounds the calls of a response; once spent, the model answers without tools", async () => {
    const before = server.calls.length;
    // The model calls `add` whenever the tools are in its prompt.
    const { client, engine } = setup((request) => (JSON.stringify(request.messages).includes("Adds two numbers.") ? call("add", { a: 1, b: 1 }) : "Done after 2 calls."));
    const response = await client.responses.create({ model: MODEL, input: "Loop", tools: [tool()], max_tool_calls: 2 });
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "mcp_call", "message"]);
    expect(server.calls.length - before).toBe(2);
    expect(engine.requests).toHaveLength(3);
    expect(response.output_text).toBe("Done after 2 calls.");
  });

  it("mcp tools mix with function tools: a function call ends the response for the app", async () => {
    const { client } = setup([call("add", { a: 1, b: 2 }) + call("get_time", {})]);
    const response = await client.responses.create({
      model: MODEL,
      input: "Both",
      tools: [tool(), { type: "function", name: "get_time", parameters: { type: "object", properties: {} } }],
    });
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "function_call"]);
    expect(response.output[1]).toMatchObject({ output: "3" });
  });

  it("a server with only the older HTTP+SSE transport: the Streamable HTTP POST's 405 falls back to SSE", async () => {
    const sse = await startMcpFixture({ sseOnly: true });
    try {
      const { client } = setup([call("add", { a: 6, b: 7 }), "13."]);
      const response = await client.responses.create({ model: MODEL, input: "6+7", tools: [tool({ server_url: sse.url })] });
      expect(response.output[1]).toMatchObject({ type: "mcp_call", output: "13", error: null });
      expect(sse.calls).toEqual(["add"]);
      expect(sse.headers.some((h) => String(h.accept).includes("text/event-stream"))).toBe(true);
    } finally {
      await sse.close();
    }
  });

  it("a stateless server (no sessions) works the same", async () => {
    const stateless = await startMcpFixture({ stateful: false });
    try {
      const { client } = setup([call("echo", { text: "hi" }), "Done."]);
      const response = await client.responses.create({ model: MODEL, input: "Echo", tools: [tool({ server_url: stateless.url })] });
      expect(response.output[1]).toMatchObject({ type: "mcp_call", output: "echo: hi" });
      expect(stateless.calls).toEqual(["echo"]);
    } finally {
      await stateless.close();
    }
  });
});

describe("allowed_tools", () => {
  it("a list of names: only those are listed and offered; a call of another tool is never made", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("echo", { text: "sneaky" })]);
    const response = await client.responses.create({ model: MODEL, input: "Echo", tools: [tool({ allowed_tools: ["add"] })] });
    expect((response.output[0] as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(["add"]);
    expect(prompt(engine, 0)).not.toContain("Echoes the text.");
    expect(response.output.some((item) => item.type === "mcp_call")).toBe(false);
    expect(server.calls.slice(before)).toEqual([]);
  });

  it("the filter form: read_only keeps the tools annotated readOnlyHint", async () => {
    const { client } = setup(["ok"]);
    const response = await client.responses.create({ model: MODEL, input: "x", tools: [tool({ allowed_tools: { read_only: true } })] });
    expect((response.output[0] as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toEqual(["add"]);
  });
});

describe("the listing is reused on later turns, as the hosted API does", () => {
  it("through previous_response_id: no second tools/list, no new mcp_list_tools item", async () => {
    const { client } = setup([call("add", { a: 1, b: 1 }), "2.", call("add", { a: 2, b: 2 }), "4.", "Still 4."]);
    const first = await client.responses.create({ model: MODEL, input: "1+1", tools: [tool()] });
    const lists = server.methods.filter((m) => m === "tools/list").length;
    const second = await client.responses.create({ model: MODEL, input: "2+2", previous_response_id: first.id, tools: [tool()] });
    expect(second.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
    expect(second.output[0]).toMatchObject({ output: "4" });
    expect(server.methods.filter((m) => m === "tools/list").length).toBe(lists);
    // And a third turn, two responses after the listing.
    const third = await client.responses.create({ model: MODEL, input: "again", previous_response_id: second.id, tools: [tool()] });
    expect(third.output.some((item) => item.type === "mcp_list_tools")).toBe(false);
  });

  it("through the listing passed back in input (store: false)", async () => {
    const { client } = setup([call("add", { a: 1, b: 1 }), "2.", "Yes."]);
    const first = await client.responses.create({ model: MODEL, input: "1+1", tools: [tool()], store: false });
    const lists = server.methods.filter((m) => m === "tools/list").length;
    const second = await client.responses.create({ model: MODEL, input: [{ role: "user", content: "1+1" }, ...first.output, { role: "user", content: "sure?" }], tools: [tool()], store: false });
    expect(second.output.map((item) => item.type)).toEqual(["message"]);
    expect(server.methods.filter((m) => m === "tools/list").length).toBe(lists);
  });
});

describe("tool_choice and names", () => {
  it("{ type: \"mcp\", server_label, name } forces that tool: the model's output is constrained to its call", async () => {
    const { client, engine } = setup([call("add", { a: 1, b: 2 }), "3."]);
    const response = await client.responses.create({ model: MODEL, input: "1+2", tools: [tool()], tool_choice: { type: "mcp", server_label: "fixture", name: "add" } });
    expect(response.tool_choice).toEqual({ type: "mcp", server_label: "fixture", name: "add" });
    expect(response.output[1]).toMatchObject({ type: "mcp_call", name: "add", output: "3" });
    // The first generation carries the tool grammar naming only `add` (as a forced function tool would).
    const grammar = JSON.stringify(engine.requests[0].responseFormat);
    expect(grammar).toContain("add");
    expect(grammar).not.toContain("echo");
    // The forced call was made: the next round chooses freely (forced again, a model would call `add` every round until the bound).
    expect(engine.requests).toHaveLength(2);
    expect(engine.requests[1].responseFormat).not.toEqual(engine.requests[0].responseFormat);
    const unknown = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [tool()], tool_choice: { type: "mcp", server_label: "fixture", name: "nope" } }));
    expect(unknown.param).toBe("tool_choice.name");
  });

  it("an MCP tool named like a function tool of the request is a 400 naming the server", async () => {
    const { client } = setup(["x"]);
    const error = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [{ type: "function", name: "add", parameters: { type: "object" } }, tool()] }));
    expect(error).toMatchObject({ status: 400, param: "tools[1].server_label", code: "duplicate_tool_name" });
    expect(error.message).toMatch(/allowed_tools/);
  });
});

describe("refusals and failures", () => {
  it("connector_id and tunnel_id are 400s naming the field", async () => {
    const { client } = setup(["x"]);
    const connector = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [{ type: "mcp", server_label: "g", connector_id: "connector_gmail" }] }));
    expect(connector.status).toBe(400);
    expect(connector.param).toBe("tools[0].connector_id");
    const tunnel = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [{ ...tool(), tunnel_id: "t" }] }));
    expect(tunnel.param).toBe("tools[0].tunnel_id");
  });

  it("a server_url that is not http(s) is a 400 naming the tool", async () => {
    const { client } = setup(["x"]);
    for (const url of ["ftp://example.com/mcp", "javascript:alert(1)", "ws://127.0.0.1/mcp"]) {
      const error = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [tool({ server_url: url })] }));
      expect(error.status).toBe(400);
      expect(error.param).toBe("tools[0].server_url");
    }
    // Relative: no page origin in Node.
    const relative = await refusal(client.responses.create({ model: MODEL, input: "x", tools: [tool({ server_url: "/mcp" })] }));
    expect(relative.message).toMatch(/page origin/);
  });

  it("an unreachable server fails cleanly in seconds: a failed listing, and the model answers without its tools", async () => {
    const { client, engine } = setup(["I cannot reach it."]);
    const started = Date.now();
    const response = await client.responses.create({ model: MODEL, input: "x", tools: [tool({ server_url: "http://127.0.0.1:9/mcp" })] });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(response.output[0]).toMatchObject({ type: "mcp_list_tools", tools: [] });
    expect((response.output[0] as { error: string }).error).toMatch(/Could not connect to the MCP server at http:\/\/127\.0\.0\.1:9\/mcp/);
    expect(response.status).toBe("completed");
    expect(prompt(engine, 0)).not.toContain("Adds two numbers.");
  });
});

describe("headers: used for the connection, never stored or returned", () => {
  it("a server that needs a header is reached with `authorization`; the secret appears nowhere the app can read", async () => {
    const guarded = await startMcpFixture({ requireHeader: ["authorization", "Bearer s3cret-token"] });
    try {
      const { client } = setup([call("add", { a: 4, b: 4 }), "8."]);
      const response = await client.responses.create({ model: MODEL, input: "4+4", tools: [tool({ server_url: guarded.url, authorization: "s3cret-token", headers: { "X-Api-Key": "k3y-value" } })] });
      expect(response.output[1]).toMatchObject({ type: "mcp_call", output: "8" });
      expect(guarded.headers.some((h) => h["x-api-key"] === "k3y-value")).toBe(true);
      const retrieved = await client.responses.retrieve(response.id);
      const items = await client.responses.inputItems.list(response.id);
      for (const shown of [response, retrieved, items]) {
        expect(JSON.stringify(shown)).not.toContain("s3cret-token");
        expect(JSON.stringify(shown)).not.toContain("k3y-value");
      }
      expect(response.tools[0]).toEqual({ type: "mcp", server_label: "fixture", server_url: guarded.url, allowed_tools: null, require_approval: "never" });

      // Without it: the server's 401 is a failed listing that says what to fix.
      const { client: bare } = setup(["no"]);
      const refused = await bare.responses.create({ model: MODEL, input: "x", tools: [tool({ server_url: guarded.url })] });
      expect((refused.output[0] as { error: string }).error).toMatch(/credentials|401/);
    } finally {
      await guarded.close();
    }
  });

  it("a background response's journal (what resuming it would read) keeps the request without them", async () => {
    const store = new MemoryResponseStore();
    const host = new EngineHost({ engine: createScriptedEngine({ replies: ["ok"], tokenDelayMs: 5 }), responseStore: store });
    const queued = await host.createResponse({ model: MODEL, input: "x", background: true, tools: [tool({ authorization: "s3cret-token", headers: { "X-Api-Key": "k3y-value" } })] });
    const entry = await store.get(queued.id);
    expect(entry?.journal?.body).toMatchObject({ tools: [{ type: "mcp", server_label: "fixture" }] });
    expect(JSON.stringify(entry)).not.toMatch(/s3cret-token|k3y-value/);
  });
});
