/**
 * Serves a `fetch` function over real HTTP on 127.0.0.1, so HTTP-level test
 * suites (the Open Responses compliance checks) can talk to `client.fetch` as
 * they would to any server: request bodies and SSE streams go over a socket.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ServedFetch {
  /** e.g. http://127.0.0.1:PORT/v1 */
  baseURL: string;
  close(): Promise<void>;
}

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function forward(fetchFn: FetchLike, origin: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  // A client that hangs up mid-stream stops generation, as the SDKs' abort does.
  res.on("close", () => { if (!res.writableFinished) controller.abort(); });
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : new Uint8Array(await readBody(req));
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  const response = await fetchFn(`${origin}${req.url}`, { method: req.method, headers, body, signal: controller.signal });
  const outHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => { outHeaders[name] = value; });
  res.writeHead(response.status, outHeaders);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the stream was aborted: end the socket
  }
  res.end();
}

export async function serveFetch(fetchFn: FetchLike): Promise<ServedFetch> {
  const server = createServer((req, res) => {
    forward(fetchFn, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error), type: "server_error" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
