/**
 * Approvals of the Responses `mcp` tool, as the hosted API does them: unless
 * `require_approval` says otherwise, a call the model makes ends the response
 * with an `mcp_approval_request` and nothing reaches the server; the next
 * request's `mcp_approval_response` runs it (approve) or tells the model it
 * was declined. With `previous_response_id` or the items, in the background,
 * and after a "reload" (a new host over the same response store).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type ResponseObject } from "../../src/index.js";
import { createScriptedEngine, EngineHost, type ScriptedEngineOptions } from "../../src/testing.js";
import { MemoryResponseStore } from "../../src/store/memory-response-store.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";
import { refusal } from "./support/client.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup(replies: ScriptedEngineOptions["replies"]) {
  const engine = createScriptedEngine({ replies });
  return { client: createClient({ engine, worker: false }), engine };
}

let server: McpFixture;
beforeAll(async () => {
  server = await startMcpFixture();
});
afterAll(() => server.close());

const tool = (extra: Record<string, unknown> = {}) => ({ type: "mcp", server_label: "fixture", server_url: server.url, ...extra });
const approval = (response: ResponseObject) => response.output.find((item) => item.type === "mcp_approval_request") as { id: string; name: string; arguments: string; server_label: string };
const answer = (id: string, approve: boolean, reason?: string) => ({ type: "mcp_approval_response", approval_request_id: id, approve, ...(reason ? { reason } : {}) });

describe("require_approval (default \"always\")", () => {
  it("a call ends the response with an mcp_approval_request; nothing is sent to the server", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("add", { a: 2, b: 3 })]);
    const response = await client.responses.create({ model: MODEL, input: "2+3?", tools: [tool()] });
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    expect(approval(response)).toMatchObject({ server_label: "fixture", name: "add", arguments: '{"a":2,"b":3}' });
    expect(approval(response).id).toMatch(/^mcpr_/);
    expect(response.status).toBe("completed");
    expect(engine.requests).toHaveLength(1);
    expect(server.calls.length).toBe(before);
  });

  it("approved with previous_response_id: the call runs, its mcp_call names the request, and the model answers", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("add", { a: 2, b: 3 }), "It is 5."]);
    const asked = await client.responses.create({ model: MODEL, input: "2+3?", tools: [tool()] });
    const lists = server.methods.filter((m) => m === "tools/list").length;
    const approved = await client.responses.create({ model: MODEL, previous_response_id: asked.id, input: [answer(approval(asked).id, true)], tools: [tool()] });
    expect(approved.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
    expect(approved.output[0]).toMatchObject({ name: "add", output: "5", error: null, approval_request_id: approval(asked).id });
    expect(server.calls.slice(before)).toEqual(["add"]);
    expect(server.methods.filter((m) => m === "tools/list").length).toBe(lists);
    expect(approved.output_text).toBe("It is 5.");
    expect(JSON.stringify(engine.requests[1].messages)).toContain("<tool_response>\\n5\\n</tool_response>");
  });

  it("declined: the call is never made, and the model is told why", async () => {
    const before = server.calls.length;
    const { client, engine } = setup([call("echo", { text: "x" }), "Understood, I will not."]);
    const asked = await client.responses.create({ model: MODEL, input: "echo x", tools: [tool()] });
    const declined = await client.responses.create({ model: MODEL, previous_response_id: asked.id, input: [answer(approval(asked).id, false, "not now")], tools: [tool()] });
    expect(declined.output.map((item) => item.type)).toEqual(["message"]);
    expect(server.calls.length).toBe(before);
    const prompt = JSON.stringify(engine.requests[1].messages);
    expect(prompt).toContain("declined this call: not now");
  });

  it("with the items instead of previous_response_id (store: false)", async () => {
    const { client } = setup([call("add", { a: 1, b: 1 }), "2."]);
    const asked = await client.responses.create({ model: MODEL, input: "1+1", tools: [tool()], store: false });
    const approved = await client.responses.create({ model: MODEL, input: [{ role: "user", content: "1+1" }, ...asked.output, answer(approval(asked).id, true)], tools: [tool()], store: false });
    expect(approved.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
    expect(approved.output[0]).toMatchObject({ output: "2" });
  });

  it("an answer to no request is a 400 naming it", async () => {
    const { client } = setup(["x"]);
    const error = await refusal(client.responses.create({ model: MODEL, input: [{ role: "user", content: "hi" }, answer("mcpr_nope", true)], tools: [tool()] }));
    expect(error.status).toBe(400);
    expect(error.param).toBe("input[1].approval_request_id");
  });
});

describe("require_approval: \"never\" and the filter form", () => {
  it("\"never\": the call runs at once", async () => {
    const { client } = setup([call("add", { a: 1, b: 2 }), "3."]);
    const response = await client.responses.create({ model: MODEL, input: "1+2", tools: [tool({ require_approval: "never" })] });
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
  });

  it("{ never: { tool_names } }: those run; any other tool asks", async () => {
    const before = server.calls.length;
    const { client } = setup([call("add", { a: 1, b: 2 }), call("echo", { text: "y" })]);
    const response = await client.responses.create({ model: MODEL, input: "go", tools: [tool({ require_approval: { never: { tool_names: ["add"] } } })] });
    expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "mcp_approval_request"]);
    expect(approval(response).name).toBe("echo");
    expect(server.calls.slice(before)).toEqual(["add"]);
  });
});

describe("approvals with the store: background, and a reload", () => {
  it("in the background: the pending approval is retrieved, and the approved run completes", async () => {
    const { client } = setup([call("add", { a: 3, b: 4 }), "7."]);
    const queued = await client.responses.create({ model: MODEL, input: "3+4", tools: [tool()], background: true });
    let asked = queued;
    for (let i = 0; i < 200 && (asked.status === "queued" || asked.status === "in_progress"); i++) {
      await sleep(10);
      asked = await client.responses.retrieve(queued.id);
    }
    expect(asked.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    let done = await client.responses.create({ model: MODEL, previous_response_id: asked.id, input: [answer(approval(asked).id, true)], tools: [tool()], background: true });
    for (let i = 0; i < 200 && (done.status === "queued" || done.status === "in_progress"); i++) {
      await sleep(10);
      done = await client.responses.retrieve(done.id);
    }
    expect(done.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
    expect(done.output[0]).toMatchObject({ output: "7" });
  });

  it("a pending approval survives a reload: a new host over the same store runs the approved call", async () => {
    const store = new MemoryResponseStore();
    const before = new EngineHost({ engine: createScriptedEngine({ replies: [call("add", { a: 5, b: 5 })] }), responseStore: store });
    const asked = await before.createResponse({ model: MODEL, input: "5+5", tools: [tool({ headers: { "X-Api-Key": "k3y-secret" } })] });
    // Stored without its headers.
    expect(JSON.stringify(await store.get(asked.id))).not.toContain("k3y-secret");

    const after = new EngineHost({ engine: createScriptedEngine({ replies: ["10."] }), responseStore: store });
    const approved = await after.createResponse({ model: MODEL, previous_response_id: asked.id, input: [answer(approval(asked).id, true)], tools: [tool({ headers: { "X-Api-Key": "k3y-secret" } })] });
    expect(approved.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
    expect(approved.output[0]).toMatchObject({ output: "10" });
    expect(JSON.stringify(await store.get(approved.id))).not.toContain("k3y-secret");
  });
});
