/**
 * MCP in real Chromium, where the engine runs in a dedicated or a shared
 * worker: the Responses `mcp` tool and `connectMcp` reach an MCP server on
 * 127.0.0.1 (another origin) that sends CORS headers, with a header it
 * requires; a server without CORS gives the error that names CORS.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectMcp, createClient, type Client, type ResponseObject } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const headers = { "X-Api-Key": "browser-k3y" };
/** One script per worker kind, used in the order the requests below make them (a shared worker takes one engine for the origin, so one client serves both tests). */
const REPLIES = [call("add", { a: 2, b: 3 }), "Five.", call("echo", { text: "hi" }), "Echoed.", "No tools here."];

for (const [kind, worker] of [["dedicated", true], ["shared", "shared"]] as const) {
  describe(`MCP through the ${kind} worker`, () => {
    let client: Client;
    beforeAll(() => {
      client = createClient({ engine: createScriptedEngine({ replies: REPLIES }), worker, responsesStore: { kind: "memory" } });
    });
    afterAll(() => client.terminate());

    it("the Responses mcp tool lists, calls and answers; an approval round trip runs the call", async () => {
      expect((await client.workerInfo()).worker).toBe(kind);
      const tool = { type: "mcp", server_label: "fixture", server_url: inject("mcpCors"), headers, require_approval: "never" };
      const response = await client.responses.create({ model: MODEL, input: "2+3", tools: [tool] });
      expect(response.output.map((item) => item.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      expect(response.output[1]).toMatchObject({ name: "add", output: "5", error: null });
      expect(JSON.stringify(response)).not.toContain("browser-k3y");

      const asked = await client.responses.create({ model: MODEL, input: "echo hi", tools: [{ ...tool, require_approval: "always" }] });
      const request = asked.output.find((item) => item.type === "mcp_approval_request") as { id: string };
      const approved: ResponseObject = await client.responses.create({ model: MODEL, previous_response_id: asked.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }], tools: [{ ...tool, require_approval: "always" }] });
      expect(approved.output[0]).toMatchObject({ type: "mcp_call", output: "echo: hi", approval_request_id: request.id });
    });

    it("connectMcp runs a call; a server without CORS is an error that names CORS", async () => {
      const mcp = await connectMcp(client, { server_url: inject("mcpCors"), headers });
      expect(await mcp.run({ id: "c1", type: "function", function: { name: "add", arguments: '{"a":1,"b":1}' } })).toEqual({ role: "tool", tool_call_id: "c1", content: "2" });
      await expect(connectMcp(client, { server_url: inject("mcpNoCors") })).rejects.toThrow(/does not allow this page's origin.*Access-Control-Expose-Headers: Mcp-Session-Id, mcp-protocol-version/);
      const response = await client.responses.create({ model: MODEL, input: "x", tools: [{ type: "mcp", server_label: "bare", server_url: inject("mcpNoCors") }] });
      expect((response.output[0] as { error: string }).error).toMatch(/CORS/);
    });
  });
}

describe("a pending approval in IndexedDB survives a new worker (a reload)", () => {
  it("asked by one worker, approved through the next, the call runs; the stored record holds no header", async () => {
    const databaseName = `mcp-approval-${crypto.randomUUID()}`;
    const tool = { type: "mcp", server_label: "fixture", server_url: inject("mcpCors"), headers };
    const first = createClient({ engine: createScriptedEngine({ replies: [call("add", { a: 20, b: 1 })] }), responsesStore: { databaseName } });
    const asked = await first.responses.create({ model: MODEL, input: "20+1", tools: [tool] });
    const request = asked.output.find((item) => item.type === "mcp_approval_request") as { id: string };
    expect(request.id).toMatch(/^mcpr_/);
    first.terminate();

    const next = createClient({ engine: createScriptedEngine({ replies: ["21."] }), responsesStore: { databaseName } });
    try {
      const approved = await next.responses.create({ model: MODEL, previous_response_id: asked.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }], tools: [tool] });
      expect(approved.output.map((item) => item.type)).toEqual(["mcp_call", "message"]);
      expect(approved.output[0]).toMatchObject({ output: "21", approval_request_id: request.id });
      // What IndexedDB holds, read back raw: no header value in either response's record.
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open(databaseName);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const names = [...db.objectStoreNames];
      const everything: unknown[] = [];
      for (const name of names) {
        everything.push(await new Promise((resolve) => {
          const all = db.transaction(name, "readonly").objectStore(name).getAll();
          all.onsuccess = () => resolve(all.result);
        }));
      }
      db.close();
      const raw = JSON.stringify(everything);
      expect(raw).toContain(request.id);
      expect(raw).not.toContain("browser-k3y");
    } finally {
      next.terminate();
    }
  });
});
