/**
 * What the library takes from `@modelcontextprotocol/sdk`: the shape
 * connection.ts loads on first use, and what the `webgpu-openai/static` entry
 * provides up front (lazy-imports.ts). An app that never connects to an MCP
 * server never loads the SDK.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
