/**
 * A real MCP server for the tests: the SDK's McpServer behind its
 * StreamableHTTPServerTransport, on 127.0.0.1 (an ephemeral port), as an app's
 * tool server would run. Its tools cover what a client must handle: calls that
 * succeed (`add`, `echo`), one that throws (`fail`), one that never answers
 * (`hang`), one with a large output (`big`). Options: a header it requires
 * (401 without it), stateful (sessions) or stateless, CORS headers or none.
 * `sseOnly` serves the older HTTP+SSE transport instead (SSEServerTransport).
 * It records what it saw (requests' headers, the tools called), so tests can
 * assert a tool outside `allowed_tools` was never called.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";

export interface McpFixtureOptions {
  /** Sessions (`Mcp-Session-Id`), as most servers run; false: a fresh server per request. Default true. */
  stateful?: boolean;
  /** A header every request must carry, e.g. ["authorization", "Bearer s3cret"]: 401 without it. */
  requireHeader?: [name: string, value: string];
  /** Answer with CORS headers (allow any origin, expose the session headers). Default false. */
  cors?: boolean;
  /** Characters of the `big` tool's output. Default 200 000. */
  bigSize?: number;
  /** Only the older HTTP+SSE transport (GET /mcp opens the stream, POST /messages carries calls): a POST to /mcp is 405. */
  sseOnly?: boolean;
}

export interface McpFixture {
  url: string;
  /** Tool names called, in order. */
  calls: string[];
  /** Headers of each HTTP request received (lower-case names). */
  headers: Array<Record<string, string | string[] | undefined>>;
  /** JSON-RPC methods received, in order (`initialize`, `tools/list`, `tools/call`, ...). */
  methods: string[];
  /** HTTP requests answered 401 for a missing header. */
  refused: number;
  /** DELETE requests (a client ending its session). */
  deletes: number;
  close(): Promise<void>;
}

function buildServer(calls: string[], bigSize: number): McpServer {
  const server = new McpServer({ name: "fixture", version: "1.0.0" });
  const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } }, async ({ a, b }) => {
    calls.push("add");
    return text(String(a + b));
  });
  server.registerTool("echo", { description: "Echoes the text.", inputSchema: { text: z.string() } }, async ({ text: t }) => {
    calls.push("echo");
    return text(`echo: ${t}`);
  });
  server.registerTool("fail", { description: "Always throws.", inputSchema: {} }, async () => {
    calls.push("fail");
    throw new Error("the fail tool failed on purpose");
  });
  server.registerTool("hang", { description: "Never answers.", inputSchema: {} }, async (_args, extra) => {
    calls.push("hang");
    // Ends when the client cancels (or the server closes), never on its own.
    await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
    return text("too late");
  });
  server.registerTool("big", { description: "A large output.", inputSchema: {} }, async () => {
    calls.push("big");
    return text("x".repeat(bigSize));
  });
  return server;
}

function corsHeaders(res: ServerResponse): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
  res.setHeader("Access-Control-Allow-Headers", "Content-Type, Authorization, Mcp-Session-Id, mcp-protocol-version, Last-Event-ID, X-Api-Key");
  res.setHeader("Access-Control-Expose-Headers", "Mcp-Session-Id, mcp-protocol-version");
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

export async function startMcpFixture(options: McpFixtureOptions = {}): Promise<McpFixture> {
  const stateful = options.stateful ?? true;
  const calls: string[] = [];
  const headers: McpFixture["headers"] = [];
  const methods: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const sseSessions = new Map<string, SSEServerTransport>();
  const open = new Set<McpServer>();
  let refused = 0;
  let deletes = 0;

  const http = createServer(async (req, res) => {
    try {
      headers.push({ ...req.headers });
      if (req.method === "DELETE") deletes++;
      if (options.cors) corsHeaders(res);
      if (req.method === "OPTIONS") {
        res.writeHead(options.cors ? 204 : 405).end();
        return;
      }
      if (options.requireHeader) {
        const [name, value] = options.requireHeader;
        if (req.headers[name.toLowerCase()] !== value) {
          refused++;
          res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "missing credentials" }));
          return;
        }
      }
      const body = req.method === "POST" ? await readJson(req) : undefined;
      for (const message of Array.isArray(body) ? body : [body]) {
        if (message && typeof (message as { method?: unknown }).method === "string") methods.push((message as { method: string }).method);
      }
      if (options.sseOnly) {
        const path = new URL(req.url ?? "/", "http://x").pathname;
        if (req.method === "GET" && path === "/mcp") {
          const server = buildServer(calls, options.bigSize ?? 200_000);
          open.add(server);
          const transport = new SSEServerTransport("/messages", res);
          sseSessions.set(transport.sessionId, transport);
          res.on("close", () => {
            sseSessions.delete(transport.sessionId);
            open.delete(server);
          });
          await server.connect(transport);
          return;
        }
        const transport = sseSessions.get(new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "");
        if (req.method === "POST" && path === "/messages" && transport) {
          await transport.handlePostMessage(req, res, body);
          return;
        }
        res.writeHead(405, { allow: "GET" }).end();
        return;
      }
      if (!stateful) {
        const server = buildServer(calls, options.bigSize ?? 200_000);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        open.add(server);
        res.on("close", () => {
          void transport.close();
          void server.close();
          open.delete(server);
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (typeof sessionId === "string") {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
          return;
        }
        const server = buildServer(calls, options.bigSize ?? 200_000);
        open.add(server);
        const fresh = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, fresh) });
        fresh.onclose = () => {
          if (fresh.sessionId) sessions.delete(fresh.sessionId);
          open.delete(server);
        };
        await server.connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    headers,
    methods,
    get refused() {
      return refused;
    },
    get deletes() {
      return deletes;
    },
    async close() {
      for (const server of open) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
