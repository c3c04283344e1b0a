/**
 * The bounds of MCP connections (docs/security.md, "MCP"): a server that
 * hangs or floods gives an error or a truncated result, never a hung response
 * or a prompt larger than the model's window. `createClient({ mcp })` may
 * lower or raise them.
 */
export interface McpLimits {
  /** Connecting (the initialize handshake, the SSE fallback included). Default 10 000 ms. */
  connectTimeoutMs: number;
  /** Listing a server's tools. Default 10 000 ms. */
  listTimeoutMs: number;
  /** One tool call. Default 60 000 ms. */
  callTimeoutMs: number;
  /** A pooled connection unused this long is closed. Default 60 000 ms. */
  idleCloseMs: number;
  /** Characters of a tool's output given to the model and returned; more is cut, with a note. Default 16 000. */
  maxOutputChars: number;
  /** Tools taken from one server's listing (the rest are left out, with a note in the listing's error). Default 64. */
  maxToolsPerServer: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  connectTimeoutMs: 10_000,
  listTimeoutMs: 10_000,
  callTimeoutMs: 60_000,
  idleCloseMs: 60_000,
  maxOutputChars: 16_000,
  maxToolsPerServer: 64,
};

export type McpOptions = Partial<McpLimits>;

export function mcpLimits(options: McpOptions | undefined): McpLimits {
  const limits = { ...DEFAULT_MCP_LIMITS };
  for (const key of Object.keys(limits) as (keyof McpLimits)[]) {
    const value = options?.[key];
    if (typeof value === "number" && Number.isFinite(value) && value > 0) limits[key] = value;
  }
  return limits;
}
