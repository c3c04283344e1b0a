/**
 * A local HTTP server (127.0.0.1 only) for the wllama engine's browser tests:
 * `/tiny.gguf`, the tiny random-weight model our GGUF writer makes
 * (gguf-writer.ts), the same file at `/m/<folder>/<name>.gguf` (a folder per
 * test, so each counts its own requests), and `/wllama/…`, files of the `@wllama/wllama` package
 * (its `esm/wasm/wllama.wasm`). CORS is open and resources are
 * cross-origin readable, so a worker of the page under test may fetch them.
 * `GET /__stats` counts requests per path, and per GGUF path the bytes sent
 * (`<path> bytes`), the Range requests (`<path> range asked`), those answered
 * 206 (`<path> range`), the last one's first byte (`<path> range from`), and
 * the `hang<N>` responses whose client closed the connection (`<path> hang closed`).
 * A GGUF's folder may ask for faults, for the resume tests: `hang<N>` (the
 * first response stops after N bytes), `cut<N>` (it drops the connection
 * after N bytes), `norange` (Range ignored), `changes` (another version of
 * the file from the second request on), `big…` (a 40 MiB file, not a model). Files carry an ETag and Last-Modified.
 */
import { createServer, type Server } from "node:http";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, normalize } from "node:path";
import type { AddressInfo } from "node:net";
import { BOS_EOS_TEMPLATE, FLOOR_DIVISION_TEMPLATE, MIN_FILTER_TEMPLATE, R1_STYLE_TEMPLATE, THINKING_SWITCH_TEMPLATE, writeTinyGguf } from "./gguf-writer.js";
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
   * `enable_thinking` switch (THINKING_SWITCH_TEMPLATE), `tiny-boseos.gguf` writes BOS/EOS (BOS_EOS_TEMPLATE),
   * `tiny-min.gguf` a filter our Jinja lacks (MIN_FILTER_TEMPLATE), `tiny-floordiv.gguf` an operator llama.cpp's
   * lacks (FLOOR_DIVISION_TEMPLATE); any other name is `tiny.gguf`.
   */
  const variants: Record<string, Uint8Array> = {
    "tiny-r1.gguf": writeTinyGguf({ chatTemplate: R1_STYLE_TEMPLATE }),
    "tiny-embed.gguf": writeTinyGguf({ poolingType: 1 }),
    "tiny-switch.gguf": writeTinyGguf({ chatTemplate: THINKING_SWITCH_TEMPLATE }),
    "tiny-boseos.gguf": writeTinyGguf({ chatTemplate: BOS_EOS_TEMPLATE }),
    "tiny-min.gguf": writeTinyGguf({ chatTemplate: MIN_FILTER_TEMPLATE }),
    "tiny-floordiv.gguf": writeTinyGguf({ chatTemplate: FLOOR_DIVISION_TEMPLATE }),
  };
  /** The file of a folder `big…`: 40 MiB of patterned bytes (more than two of the downloader's 16 MiB pieces; not a model). */
  let bigFile: Uint8Array | null = null;
  const big = () => (bigFile ??= new Uint8Array(40 * 1024 * 1024).map((_, i) => (i * 31 + (i >>> 16)) & 0xff));
  /** The file of a folder `…changes…` from its second request on: the same size, other weights. */
  const changedTiny = writeTinyGguf({ seed: 8 });
  const packageDir = wllamaPackageDir();
  const counts: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    counts[path] = (counts[path] ?? 0) + 1;
    const headers = { "access-control-allow-origin": "*", "access-control-expose-headers": "content-range, content-length, etag", "cross-origin-resource-policy": "cross-origin" };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { ...headers, "access-control-allow-headers": "range" });
      return res.end();
    }
    if (path === "/__stats") {
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      return res.end(JSON.stringify(counts));
    }
    if (path === "/tiny.gguf" || (path.startsWith("/m/") && path.endsWith(".gguf"))) {
      const folder = path.split("/")[2] ?? "";
      const served = (counts[`${path} served`] = (counts[`${path} served`] ?? 0) + 1);
      // A folder containing `changes`: the file on the server is another version (other weights, same size) from its second request on.
      const name = path.slice(path.lastIndexOf("/") + 1);
      const changed = folder.includes("changes") && served > 1;
      const gguf = folder.startsWith("big") ? big() : changed ? changedTiny : (variants[name] ?? tiny);
      const version = { etag: changed ? '"tiny-v2"' : '"tiny-v1"', "last-modified": changed ? "Sat, 05 Dec 2026 12:00:00 GMT" : "Sat, 05 Dec 2026 10:00:00 GMT" };
      const sent = (n: number) => (counts[`${path} bytes`] = (counts[`${path} bytes`] ?? 0) + n);
      if (req.headers.range) counts[`${path} range asked`] = (counts[`${path} range asked`] ?? 0) + 1;
      // `bytes=a-b` as servers like the hub's answer it (206 with Content-Range); a folder `norange…` ignores Range (200, the whole file).
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
      let start = 0;
      let end = gguf.length - 1;
      if (range && !folder.startsWith("norange") && !folder.includes(".norange")) {
        start = Number(range[1]);
        end = Math.min(range[2] === "" ? gguf.length - 1 : Number(range[2]), gguf.length - 1);
        counts[`${path} range`] = (counts[`${path} range`] ?? 0) + 1;
        counts[`${path} range from`] = start;
        res.writeHead(206, { ...headers, ...version, "content-type": "application/octet-stream", "content-range": `bytes ${start}-${end}/${gguf.length}`, "content-length": String(end - start + 1) });
      } else {
        res.writeHead(200, { ...headers, ...version, "content-type": "application/octet-stream", "content-length": String(gguf.length) });
      }
      const body = gguf.subarray(start, end + 1);
      // A folder `hang<N>…` sends the first N bytes of its first response, then nothing (the client aborts);
      // `cut<N>…` sends them, then drops the connection.
      const hang = /hang(\d+)/.exec(folder);
      const cut = /cut(\d+)/.exec(folder);
      if ((hang || cut) && served === 1) {
        const n = Number((hang ?? cut)![1]);
        sent(n);
        res.write(body.subarray(0, n), () => {
          if (cut) setTimeout(() => res.destroy(), 50);
        });
        if (hang)
          req.on("close", () => {
            counts[`${path} hang closed`] = (counts[`${path} hang closed`] ?? 0) + 1;
            res.destroy();
          });
        return;
      }
      sent(body.length);
      return res.end(body);
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
  return {
    url: `http://127.0.0.1:${port}`,
    // Connections first: `close()` alone waits for every response to end, and a `hang<N>` one ends only when its client goes.
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
