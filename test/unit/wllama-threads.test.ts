/**
 * wllama's threads in real Chromium, on the real engine: a small page
 * (support/threads-page/) built with Vite and served twice from 127.0.0.1,
 * once with the two cross-origin isolation headers
 * (`Cross-Origin-Opener-Policy: same-origin`,
 * `Cross-Origin-Embedder-Policy: require-corp`) and once without. The
 * vitest browser page is not isolated, hence this Node-side test.
 *
 * Isolated, createClient's worker loads the tiny GGUF with the threads its
 * record asks for and wllama itself says so (`isMultithread()`,
 * `getNumThreads()`, reported by models.status and gpu.info); not isolated,
 * it says single; by default, half the logical cores (single on 2 cores). Greedy decoding
 * gives the same reply either way. `WLLAMA_THREADS_BENCH=1` also prints the
 * decode rate of both on a bigger generated GGUF (no speed is asserted: the
 * machine is shared).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { extname, join, normalize, resolve } from "node:path";
import { build } from "vite";
import { chromium, type Browser } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { writeTinyGguf } from "../support/gguf-writer.js";
import { wllamaPackageDir } from "../support/wllama-package.js";
import { wllamaThreadCount } from "../../src/engine/wllama/wllama-threads.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM) && wllamaPackageDir() !== null;
const pageRoot = resolve(import.meta.dirname, "../support/threads-page");
const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm" };
const ISOLATION = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp", "cross-origin-resource-policy": "same-origin" };

/** The built page, wllama's package files (`/wllama/…`) and the GGUFs, every response with the isolation headers or none. */
async function serve(root: string, ggufs: Record<string, () => Uint8Array>, isolated: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const packageDir = wllamaPackageDir()!;
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const headers = isolated ? ISOLATION : {};
    const gguf = ggufs[path];
    if (gguf) {
      const body = gguf();
      response.writeHead(200, { ...headers, "content-type": "application/octet-stream", "content-length": String(body.length), etag: `"${path}"` });
      return response.end(body);
    }
    const file = path.startsWith("/wllama/") ? normalize(join(packageDir, path.slice("/wllama/".length))) : normalize(join(root, path === "/" ? "index.html" : path));
    if ((file.startsWith(root) || file.startsWith(packageDir)) && existsSync(file) && statSync(file).isFile()) {
      response.writeHead(200, { ...headers, "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      return response.end(readFileSync(file));
    }
    response.writeHead(404, headers).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((done) => server.close(() => done())) };
}

interface ThreadsReport {
  threads: "multi" | "single";
  n_threads: number;
}
interface RunResult {
  isolated: boolean;
  hardwareConcurrency: number;
  before: { status: { engine: ThreadsReport & { threads_source: string } }; info: ThreadsReport & { source: string; cross_origin_isolated: boolean; model?: string } };
  after: { status: { engine: ThreadsReport & { threads_source: string } }; info: ThreadsReport & { source: string; cross_origin_isolated: boolean; model?: string } };
  content: string;
  finish: string;
  completionTokens: number;
  tokensPerS: number;
}

describe.skipIf(!hasChromium)("wllama's threads under cross-origin isolation, in Chromium", { timeout: 240_000 }, () => {
  let outDir: string;
  let browser: Browser;
  const servers: Array<{ url: string; close(): Promise<void> }> = [];
  let isolatedUrl = "";
  let plainUrl = "";
  let wide: Uint8Array | null = null;
  const ggufs = {
    "/tiny.gguf": (() => {
      const tiny = writeTinyGguf();
      return () => tiny;
    })(),
    // About 39 MB of f32 weights: enough work per token for threads to show (the tiny one is mostly overhead).
    "/wide.gguf": () => (wide ??= writeTinyGguf({ shape: { embedding: 384, feedForward: 1024, layers: 6 } })),
  };

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), "webgpu-openai-threads-"));
    await build({ configFile: false, root: pageRoot, base: "./", logLevel: "warn", worker: { format: "es" }, build: { outDir, emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 8000 } });
    const isolated = await serve(outDir, ggufs, true);
    const plain = await serve(outDir, ggufs, false);
    servers.push(isolated, plain);
    isolatedUrl = isolated.url;
    plainUrl = plain.url;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    for (const server of servers) await server.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  async function runIn(origin: string, gguf: string, maxTokens: number, threads?: number): Promise<RunResult> {
    const page = await browser.newPage();
    page.on("pageerror", (error) => console.error("page error:", error.message));
    try {
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => "threadsPage" in globalThis);
      return (await page.evaluate(
        (options) => (globalThis as unknown as { threadsPage: { run(o: unknown): Promise<unknown> } }).threadsPage.run(options),
        { gguf: `${origin}${gguf}`, wasm: `${origin}/wllama/esm/wasm/wllama.wasm`, maxTokens, threads },
      )) as RunResult;
    } finally {
      await page.close();
    }
  }

  it("isolated: wllama runs llama.cpp on the threads asked for and says so; not isolated: one thread; the greedy reply is the same", async () => {
    const multi = await runIn(isolatedUrl, "/tiny.gguf", 24, 2);
    const single = await runIn(plainUrl, "/tiny.gguf", 24, 2);
    expect(multi.isolated).toBe(true);
    expect(single.isolated).toBe(false);
    expect(multi.hardwareConcurrency).toBeGreaterThanOrEqual(2);

    // Before the load: what the load will ask for. After: what wllama itself reports (isMultithread, getNumThreads).
    expect(multi.before.status.engine).toMatchObject({ threads: "multi", n_threads: 2, threads_source: "planned" });
    expect(multi.after.status.engine).toMatchObject({ threads: "multi", n_threads: 2, threads_source: "wllama" });
    expect(multi.after.info).toMatchObject({ threads: "multi", n_threads: 2, source: "wllama", cross_origin_isolated: true, model: "m" });
    // Not isolated, the same record gets one thread: SharedArrayBuffer cannot reach wllama's pthreads.
    expect(single.before.status.engine).toMatchObject({ threads: "single", n_threads: 1, threads_source: "planned" });
    expect(single.after.status.engine).toMatchObject({ threads: "single", n_threads: 1, threads_source: "wllama" });
    expect(single.after.info).toMatchObject({ threads: "single", n_threads: 1, source: "wllama", cross_origin_isolated: false });

    // Threads split llama.cpp's work, not its arithmetic: greedy decoding gives the same tokens.
    expect(multi.completionTokens).toBeGreaterThan(5);
    expect(multi.content).toBe(single.content);
    expect(multi.finish).toBe(single.finish);
    expect(multi.completionTokens).toBe(single.completionTokens);
  });

  it("isolated, by default: half the logical cores (at most 8), as wllama reports it", async () => {
    const run = await runIn(isolatedUrl, "/tiny.gguf", 8);
    const wanted = wllamaThreadCount(true, run.hardwareConcurrency);
    const threads = wanted > 1 ? "multi" : "single";
    expect(run.before.status.engine).toMatchObject({ threads, n_threads: wanted, threads_source: "planned" });
    expect(run.after.status.engine).toMatchObject({ threads, n_threads: wanted, threads_source: "wllama" });
    expect(run.after.info).toMatchObject({ threads, n_threads: wanted, source: "wllama", cross_origin_isolated: true });
  });

  it.runIf(process.env.WLLAMA_THREADS_BENCH === "1")("prints the decode rate, single vs multi (no assertion on speed)", async () => {
    // wllama alone in the isolated page, with its own default n_threads (floor(hardwareConcurrency / 2)).
    const page = await browser.newPage();
    await page.goto(`${isolatedUrl}/`);
    await page.waitForFunction(() => "threadsPage" in globalThis);
    const alone = await page.evaluate(
      (options) => (globalThis as unknown as { threadsPage: { direct(o: unknown): Promise<unknown> } }).threadsPage.direct(options),
      { gguf: `${isolatedUrl}/tiny.gguf`, wasm: `${isolatedUrl}/wllama/esm/wasm/wllama.wasm`, maxTokens: 0 },
    );
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    await page.close();
    console.log(`wllama alone, isolated, its default n_threads, hardwareConcurrency ${cores}: ${JSON.stringify(alone)}`);
    for (const gguf of ["/tiny.gguf", "/wide.gguf"]) {
      const single = await runIn(plainUrl, gguf, 64);
      const isolatedDefault = await runIn(isolatedUrl, gguf, 64);
      const multi = await runIn(isolatedUrl, gguf, 64, 2);
      expect(multi.content).toBe(single.content);
      const rate = (run: RunResult) => `${run.tokensPerS.toFixed(1)} tok/s (${run.after.info.threads} x${run.after.info.n_threads})`;
      console.log(`${gguf}, ${single.completionTokens} tokens: not isolated ${rate(single)}; isolated, default ${rate(isolatedDefault)}; isolated, threads: 2 ${rate(multi)}; loadavg ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    }
  });
});
