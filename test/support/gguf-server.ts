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
import { R1_STYLE_TEMPLATE, THINKING_SWITCH_TEMPLATE, writeTinyGguf } from "./gguf-writer.js";
import { wllamaPackageDir } from "./wllama-package.js";

export interface GgufServer {
  url: string;
  close(): Promise<void>;
}

export async function startGgufServer(): Promise<GgufServer> {
  const tiny = writeTinyGguf();
  /**
   * Files by name: `tiny-r1.gguf` is the same model with a reasoning chat template (R1_STYLE_TEMPLATE),
   * `tiny-embed.gguf` declares mean pooling (an embedding GGUF), `tiny-switch.gguf` has Qwen3's
   * `enable_thinking` switch (THINKING_SWITCH_TEMPLATE); any other name is `tiny.gguf`.
   */
  const variants: Record<string, Uint8Array> = {
    "tiny-r1.gguf": writeTinyGguf({ chatTemplate: R1_STYLE_TEMPLATE }),
    "tiny-embed.gguf": writeTinyGguf({ poolingType: 1 }),
    "tiny-switch.gguf": writeTinyGguf({ chatTemplate: THINKING_SWITCH_TEMPLATE }),
  };
  const packageDir = wllamaPackageDir();
  const counts: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    counts[path] = (counts[path] ?? 0) + 1;
    const headers = { "access-control-allow-origin": "*", "access-control-expose-headers": "content-range, content-length", "cross-origin-resource-policy": "cross-origin" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...headers, "access-control-allow-headers": "range" });
      return res.end();
    }
    if (path === "/__stats") {
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      return res.end(JSON.stringify(counts));
    }
    if (path === "/tiny.gguf" || (path.startsWith("/m/") && path.endsWith(".gguf"))) {
      const gguf = variants[path.slice(path.lastIndexOf("/") + 1)] ?? tiny;
      // `bytes=a-b` as servers like the hub's answer it (206 with Content-Range); `/m/norange/…` ignores Range (200, the whole file).
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
      if (range && !path.startsWith("/m/norange/")) {
        const start = Number(range[1]);
        const end = Math.min(range[2] === "" ? gguf.length - 1 : Number(range[2]), gguf.length - 1);
        counts[`${path} range`] = (counts[`${path} range`] ?? 0) + 1;
        res.writeHead(206, { ...headers, "content-type": "application/octet-stream", "content-range": `bytes ${start}-${end}/${gguf.length}`, "content-length": String(end - start + 1) });
        return res.end(gguf.subarray(start, end + 1));
      }
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
