/**
 * Builds the demo with its Vite config and serves the result from
 * http://127.0.0.1 (a secure context, so the page has `navigator.gpu`),
 * plus any extra files a test adds (a catalog, model artifacts).
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve } from "node:path";
import { build } from "vite";

const repo = resolve(import.meta.dirname, "../..");

/** Builds into a fresh temporary folder (so parallel test runs never share one) and returns it. */
export async function buildDemo(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), "webgpu-openai-demo-"));
  await build({ configFile: join(repo, "demo/vite.config.ts"), logLevel: "warn", build: { outDir, emptyOutDir: true } });
  return outDir;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
};

export interface DemoServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the built demo in `root`; `extra` maps a path (e.g. `/catalog.json`) to a body served before the files. */
export async function serveDemo(root: string, extra: Record<string, string> = {}): Promise<DemoServer> {
  const server: Server = createServer(async (request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    if (path in extra) {
      response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream", "access-control-allow-origin": "*" });
      response.end(extra[path]);
      return;
    }
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(root)) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      response.end(body);
    } catch {
      response.writeHead(404).end("not found");
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
