/**
 * The MCP connection pool (src/mcp/pool.ts): one connection per (client,
 * server_url, headers), reused while in use and shortly after, closed after
 * idleCloseMs unused; a failed connection is not kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPool } from "../../src/mcp/pool.js";
import { mcpLimits } from "../../src/mcp/limits.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let server: McpFixture;
beforeAll(async () => {
  server = await startMcpFixture();
});
afterAll(() => server.close());

const inits = () => server.methods.filter((m) => m === "initialize").length;

describe("McpPool", () => {
  it("reuses one connection per (client, url, headers); other headers or another client connect again", async () => {
    const pool = new McpPool(mcpLimits({ idleCloseMs: 60_000 }));
    const before = inits();
    const target = { url: server.url, headers: { "X-Api-Key": "a" } };
    await pool.use(target, "tab-1", (c) => c.listTools());
    await pool.use(target, "tab-1", (c) => c.callTool("add", { a: 1, b: 1 }));
    expect(inits() - before).toBe(1);
    await pool.use({ url: server.url, headers: { "X-Api-Key": "b" } }, "tab-1", (c) => c.listTools());
    await pool.use(target, "tab-2", (c) => c.listTools());
    expect(inits() - before).toBe(3);
    expect(pool.size).toBe(3);
    await pool.closeAll();
    expect(pool.size).toBe(0);
  });

  it("closes a connection after idleCloseMs unused (the session is ended on the server), and connects again after", async () => {
    const pool = new McpPool(mcpLimits({ idleCloseMs: 100 }));
    const before = inits();
    const deletes = server.deletes;
    const target = { url: server.url, headers: {} };
    await pool.use(target, undefined, (c) => c.listTools());
    expect(pool.size).toBe(1);
    await sleep(400);
    expect(pool.size).toBe(0);
    expect(server.deletes - deletes).toBe(1);
    await pool.use(target, undefined, (c) => c.listTools());
    expect(inits() - before).toBe(2);
    await pool.closeAll();
  });

  it("a connection that failed is not kept: the next use tries again", async () => {
    const pool = new McpPool(mcpLimits({}));
    const target = { url: "http://127.0.0.1:9/mcp", headers: {} };
    await expect(pool.use(target, undefined, (c) => c.listTools())).rejects.toThrow(/Could not connect/);
    await sleep(0);
    expect(pool.size).toBe(0);
  });
});
