/**
 * A local HTTP server (127.0.0.1 only) for the wllama engine's browser tests:
 * `/tiny.gguf`, the tiny random-weight model our GGUF writer makes
 * (gguf-writer.ts), the same file at `/m/<folder>/<name>.gguf` (a folder per
 * test, so each counts its own requests), and `/wllama/…`, files of the `@wllama/wllama` package
 * (its `esm/wasm/wllama.wasm`). CORS is open and resources are
 * cross-origin readable, so a worker of the page under test may fetch them.
 * `GET /__stats` counts requests per path.
 */
import { createServer, type Server } from "node:http";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, normalize } from "node:path";
import type { AddressInfo } from "node:net";
import { writeTinyGguf } from "./gguf-writer.js";
import { wllamaPackageDir } from "./wllama-package.js";

export interface GgufServer {
  url: string;
  close(): Promise<void>;
}

export async function startGgufServer(): Promise<GgufServer> {
  const gguf = writeTinyGguf();
  const packageDir = wllamaPackageDir();
  const counts: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    counts[path] = (counts[path] ?? 0) + 1;
    const headers = { "access-control-allow-origin": "*", "cross-origin-resource-policy": "cross-origin" };
    if (path === "/__stats") {
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      return res.end(JSON.stringify(counts));
    }
    if (path === "/tiny.gguf" || (path.startsWith("/m/") && path.endsWith(".gguf"))) {
      res.writeHead(200, { ...headers, "content-type": "application/octet-stream", "content-length": String(gguf.length) });
      return res.end(gguf);
    }
    if (path.startsWith("/wllama/") && packageDir) {
      const file = normalize(join(packageDir, path.slice("/wllama/".length)));
      if (file.startsWith(packageDir) && existsSync(file) && statSync(file).isFile()) {
        res.writeHead(200, { ...headers, "content-type": file.endsWith(".wasm") ? "application/wasm" : "application/octet-stream" });
        return res.end(readFileSync(file));
      }
    }
    res.writeHead(404, headers);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
