/**
 * MCP servers' tools for chat completions and the Prompt API (`connectMcp`,
 * client/connect-mcp.ts): listing a server's tools and calling one, where the
 * engine runs, on the same pooled connections as the Responses `mcp` tool
 * (mcp/pool.ts; per client, server_url and headers).
 */
import { invalidParam } from "../protocol/api-error.js";
import { isObject } from "../protocol/params.js";
import { validateMcpServerParams, type McpToolInfo } from "../protocol/responses/mcp-items.js";
import type { McpCallResult } from "../mcp/connection.js";
import type { McpPool } from "../mcp/pool.js";

/** The server's tools (`allowed_tools` applied). A failed connection is the error that says why (CORS, credentials, timeout). */
export async function listMcpTools(pool: McpPool, body: unknown, client: string | undefined): Promise<McpToolInfo[]> {
  const server = validateMcpServerParams(body);
  const listing = await pool.use({ url: server.url, headers: server.headers }, client, (connection) => connection.listTools());
  return server.allowed ? listing.tools.filter((tool) => server.allowed!.includes(tool.name)) : listing.tools;
}

/** One call: its output, or its error (a failing tool, `isError`, a timeout) as the Responses `mcp_call` carries it. */
export async function callMcpTool(pool: McpPool, body: unknown, signal: AbortSignal | undefined, client: string | undefined): Promise<McpCallResult> {
  const server = validateMcpServerParams(body);
  const { name, arguments: args } = body as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string" || name === "") throw invalidParam("name", "`name` is required: the tool to call.", "missing_required_parameter");
  if (server.allowed && !server.allowed.includes(name)) throw invalidParam("name", `The tool \`${name}\` is not in \`allowed_tools\`: it is never called.`, "tool_not_allowed");
  if (args !== undefined && !isObject(args)) throw invalidParam("arguments", "`arguments` must be an object (the parsed JSON of the call's arguments).", "invalid_type");
  return pool.use({ url: server.url, headers: server.headers }, client, (connection) => connection.callTool(name, (args ?? {}) as Record<string, unknown>, signal));
}
