/**
 * One connection to an MCP server, through `@modelcontextprotocol/sdk`'s
 * Client: Streamable HTTP first, the older HTTP+SSE transport when the server
 * answers the Streamable HTTP POST with 400, 404 or 405 (the SDK's documented
 * fallback). Every step is bounded (limits.ts): connect, list, call. Tool
 * results become the text the model reads, cut at `maxOutputChars`.
 *
 * Headers (and the bearer token made from `authorization`) are given to the
 * transport only: nothing here stores, returns or logs them.
 */
import { loadModule } from "../lazy-imports.js";
import { VERSION } from "../version.js";
import type { McpLimits } from "./limits.js";
import type { McpToolInfo } from "../protocol/responses/mcp-items.js";

type Sdk = typeof import("./sdk.js");

/**
 * The SDK's client modules, on first use. Bare `import()`s of the package (as
 * web-llm's): the worker build keeps them external (scripts/build.mjs), so the
 * worker file does not carry the SDK and an app's bundler gives it its own chunk.
 */
function loadSdk(): Promise<Sdk> {
  return loadModule("mcpSdk", async () => {
    const [client, http, sse] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
      import("@modelcontextprotocol/sdk/client/sse.js"),
    ]);
    return { Client: client.Client, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport, StreamableHTTPError: http.StreamableHTTPError, SSEClientTransport: sse.SSEClientTransport };
  });
}
type SdkClient = InstanceType<Sdk["Client"]>;

export interface McpTarget {
  /** An absolute http(s) URL (mcp-url.ts resolves relative ones). */
  url: string;
  /** Sent with every request to the server; never stored or returned. */
  headers: Record<string, string>;
}

export type { McpToolInfo };

export interface McpListing {
  tools: McpToolInfo[];
  /** Set when the server had more tools than `maxToolsPerServer`. */
  note: string | null;
}

/** A call's result as the Responses `mcp_call` item carries it: `output`, or `error` (a failed call, `isError`, a timeout). */
export interface McpCallResult {
  output: string | null;
  error: string | null;
}

/** A connection, list or call that failed: the message says what to fix (CORS, a header, a timeout). */
export class McpConnectionError extends Error {
  override name = "McpConnectionError";
}

/** The SDK's own request timeout is a backstop: ours fires first, with the message that names the bound. */
const SDK_TIMEOUT_MARGIN_MS = 1000;

const BROWSER_NETWORK_ERROR = /Failed to fetch|NetworkError|Load failed/i;

/** Why a connection failed, in words: a browser's bare network error is most often CORS, so the fix is named. */
export function describeConnectError(url: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const status = (error as { code?: unknown }).code;
  if (status === 401 || status === 403 || /\b(401|403)\b/.test(message)) {
    return `The MCP server at ${url} refused the connection (${status ?? "unauthorized"}): it needs credentials; pass them in the tool's \`headers\` or \`authorization\`.`;
  }
  if (error instanceof TypeError && BROWSER_NETWORK_ERROR.test(message)) {
    return `Could not reach the MCP server at ${url} from this page (${message}). Either it is down, or it does not allow this page's origin: a browser connects only to a server that answers with CORS headers — Access-Control-Allow-Origin for this origin, Access-Control-Allow-Headers with Content-Type, Authorization, Mcp-Session-Id and mcp-protocol-version, and Access-Control-Expose-Headers: Mcp-Session-Id, mcp-protocol-version (docs/mcp.md).`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return `Could not connect to the MCP server at ${url}: ${message}${cause?.code ? ` (${cause.code})` : cause?.message ? ` (${cause.message})` : ""}.`;
}

/** `promise`, or a rejection after `ms` (`onTimeout` then cleans up). */
async function bounded<T>(promise: Promise<T>, ms: number, what: string, onTimeout?: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new McpConnectionError(`${what} took longer than ${ms} ms.`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class McpConnection {
  private constructor(
    private readonly client: SdkClient,
    readonly url: string,
    private readonly limits: McpLimits,
    /** Streamable HTTP's: ends the server's session (a DELETE) when the connection closes. */
    private readonly endSession?: () => Promise<void>,
  ) {}

  static async open(target: McpTarget, limits: McpLimits): Promise<McpConnection> {
    const sdk = await loadSdk();
    const url = new URL(target.url);
    const requestInit: RequestInit = { headers: target.headers };
    const attempt = async (transport: InstanceType<Sdk["StreamableHTTPClientTransport"]> | InstanceType<Sdk["SSEClientTransport"]>) => {
      const client = new sdk.Client({ name: "webgpu-openai", version: VERSION });
      try {
        await bounded(client.connect(transport, { timeout: limits.connectTimeoutMs + SDK_TIMEOUT_MARGIN_MS }), limits.connectTimeoutMs, `Connecting to the MCP server at ${target.url}`, () => void client.close().catch(() => undefined));
        return client;
      } catch (error) {
        await client.close().catch(() => undefined);
        throw error;
      }
    };
    try {
      const transport = new sdk.StreamableHTTPClientTransport(url, { requestInit, reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 } });
      const client = await attempt(transport);
      return new McpConnection(client, target.url, limits, () => transport.terminateSession());
    } catch (error) {
      const status = error instanceof sdk.StreamableHTTPError ? error.code : undefined;
      // A server that only speaks the older HTTP+SSE transport answers the Streamable HTTP POST with one of these.
      if (status !== 400 && status !== 404 && status !== 405) throw new McpConnectionError(describeConnectError(target.url, error));
      try {
        const client = await attempt(new sdk.SSEClientTransport(url, { requestInit, eventSourceInit: { fetch: (input: string | URL, init?: RequestInit) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...target.headers } }) } as EventSourceInit }));
        return new McpConnection(client, target.url, limits);
      } catch (sseError) {
        throw new McpConnectionError(describeConnectError(target.url, sseError));
      }
    }
  }

  /** The server's tools, at most `maxToolsPerServer` (following `nextCursor` until then). */
  async listTools(): Promise<McpListing> {
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    let more = false;
    const max = this.limits.maxToolsPerServer;
    const list = async () => {
      do {
        const page = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: this.limits.listTimeoutMs + SDK_TIMEOUT_MARGIN_MS });
        for (const tool of page.tools) {
          if (tools.length >= max) {
            more = true;
            break;
          }
          tools.push({ name: tool.name, description: tool.description ?? null, input_schema: (tool.inputSchema ?? { type: "object" }) as Record<string, unknown>, annotations: (tool.annotations as Record<string, unknown> | undefined) ?? null });
        }
        cursor = page.nextCursor;
      } while (cursor && !more);
    };
    await bounded(list(), this.limits.listTimeoutMs, `Listing the tools of the MCP server at ${this.url}`);
    return { tools, note: more || cursor ? `The server has more than ${max} tools; the first ${max} are offered (createClient({ mcp: { maxToolsPerServer } }) raises the bound).` : null };
  }

  /** Calls `name`: a failure, `isError` or a timeout is an `error`, never a throw. */
  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    const ms = this.limits.callTimeoutMs;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await bounded(this.client.callTool({ name, arguments: args }, undefined, { timeout: ms + SDK_TIMEOUT_MARGIN_MS, signal: controller.signal }), ms, `The MCP tool \`${name}\``, () => controller.abort());
      const text = resultText(result as { content?: unknown[]; structuredContent?: unknown });
      const capped = this.cap(text);
      return result.isError ? { output: null, error: capped || "The tool reported an error." } : { output: capped, error: null };
    } catch (error) {
      if (signal?.aborted) throw error;
      return { output: null, error: error instanceof Error ? error.message : String(error) };
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private cap(text: string): string {
    const max = this.limits.maxOutputChars;
    if (text.length <= max) return text;
    return `${text.slice(0, max)}\n[output truncated: the first ${max} of ${text.length} characters]`;
  }

  /** Ends the server's session where it has one (bounded by connectTimeoutMs), then closes the transport. */
  async close(): Promise<void> {
    if (this.endSession) await bounded(this.endSession(), this.limits.connectTimeoutMs, "Ending the MCP session").catch(() => undefined);
    await this.client.close().catch(() => undefined);
  }
}

/** A tool result's content as text: text parts joined; other parts described; structured content as JSON when there is nothing else. */
function resultText(result: { content?: unknown[]; structuredContent?: unknown }): string {
  const parts = Array.isArray(result.content) ? result.content : [];
  const texts = parts.map((part) => {
    const p = part as { type?: string; text?: string; mimeType?: string; resource?: { uri?: string; text?: string } };
    if (p.type === "text" && typeof p.text === "string") return p.text;
    if (p.type === "resource" && typeof p.resource?.text === "string") return p.resource.text;
    return `[${p.type ?? "content"}${p.mimeType ? ` ${p.mimeType}` : ""}${p.resource?.uri ? ` ${p.resource.uri}` : ""}]`;
  });
  if (texts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return texts.join("\n");
}
