/**
 * `connectMcp(client, server)`: an MCP server's tools for the chat
 * completions tool loop and for the Prompt API. The connection is made where
 * the engine runs (the worker), pooled and closed when idle, as for the
 * Responses `mcp` tool; headers and `authorization` go to the connection only.
 *
 *   const mcp = await connectMcp(client, { server_url: "https://example.com/mcp" });
 *   const { choices } = await client.chat.completions.create({ model, messages, tools: mcp.tools });
 *   for (const call of choices[0].message.tool_calls ?? []) messages.push(await mcp.run(call));
 *
 *   const session = await LanguageModel.create({ tools: mcp.promptTools });
 */
import type { FunctionTool, ToolCall } from "../protocol/types.js";
import type { McpServerParams, McpToolInfo } from "../protocol/responses/mcp-items.js";
import type { Client, RequestOptions } from "./types.js";

export interface McpTools {
  /** The server's tools as listed (name, description, input_schema, annotations). */
  listing: McpToolInfo[];
  /** The same tools as chat completions `tools`. */
  tools: FunctionTool[];
  /** Whether a call names one of this server's tools (a loop with tools of its own asks before `run`). */
  has(name: string): boolean;
  /**
   * Runs one of the model's `tool_calls` on the server: the `role: "tool"`
   * message that answers it. A failing tool answers `Error: …` (the model
   * reads it and goes on); a call of a tool this server does not offer throws.
   */
  run(call: ToolCall, options?: RequestOptions): Promise<{ role: "tool"; tool_call_id: string; content: string }>;
  /** The same tools for the Prompt API (`LanguageModel.create({ tools })`): `execute` calls the server. */
  promptTools: Array<{ name: string; description: string; inputSchema: object; execute: (args: Record<string, unknown>) => Promise<string> }>;
}

/** Lists `server`'s tools through `client` (where its engine runs) and gives them in the forms a tool loop takes. */
export async function connectMcp(client: Client, server: McpServerParams, options: RequestOptions = {}): Promise<McpTools> {
  const listing = await client.mcp.listTools(server, options);
  const names = new Set(listing.map((tool) => tool.name));
  const call = async (name: string, args: Record<string, unknown>, callOptions?: RequestOptions): Promise<string> => {
    const result = await client.mcp.callTool({ ...server, name, arguments: args }, callOptions);
    return result.error !== null ? `Error: ${result.error}` : (result.output ?? "");
  };
  return {
    listing,
    tools: listing.map((tool) => ({ type: "function", function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.input_schema } })),
    has: (name) => names.has(name),
    async run(toolCall, callOptions) {
      const name = toolCall.function.name;
      if (!names.has(name)) throw new Error(`connectMcp: the MCP server at ${server.server_url} has no tool \`${name}\` (its tools: ${[...names].join(", ") || "none"}); answer this call with your own code.`);
      let args: unknown;
      try {
        args = JSON.parse(toolCall.function.arguments || "{}");
      } catch {
        return { role: "tool", tool_call_id: toolCall.id, content: `Error: the arguments are not valid JSON: ${toolCall.function.arguments.slice(0, 200)}` };
      }
      const content = typeof args === "object" && args !== null && !Array.isArray(args)
        ? await call(name, args as Record<string, unknown>, callOptions)
        : "Error: the arguments must be a JSON object.";
      return { role: "tool", tool_call_id: toolCall.id, content };
    },
    promptTools: listing.map((tool) => ({
      name: tool.name,
      description: tool.description ?? tool.name,
      inputSchema: tool.input_schema,
      execute: (args: Record<string, unknown>) => call(tool.name, args ?? {}),
    })),
  };
}
