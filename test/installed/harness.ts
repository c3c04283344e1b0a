/**
 * The library as users get it: `npm pack` of the built dist/, installed with
 * npm into a fresh app folder (test/installed/app copied to a temp dir), then
 * built by the app's bundler and opened in headless Chromium.
 *
 * Bundlers run from this repository's node_modules (vite, webpack, esbuild,
 * rollup) with the app folder as their root; the app's own node_modules holds
 * only the tarball and what npm installs with it (plus `openai`), from the
 * local npm cache.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize, resolve } from "node:path";
import type { Browser } from "playwright";

export const repo = resolve(import.meta.dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

export interface PackInfo {
  tarball: string;
  packedBytes: number;
  unpackedBytes: number;
  files: string[];
}

/**
 * Builds dist/ when it is missing or older than src/, then packs it. Several
 * test files pack at once (vitest runs files in parallel): a lock folder keeps
 * one build from deleting dist/ under another's pack.
 */
export function packLibrary(into: string): PackInfo {
  return withLock(join(repo, "node_modules/.installed-pack.lock"), () => buildAndPack(into));
}

function buildAndPack(into: string): PackInfo {
  const built = ["dist/index.js", "dist/testing.js", "dist/worker.js", "dist/worker/entry.js"].map((f) => join(repo, f));
  if (!built.every((f) => existsSync(f)) || newestIn(join(repo, "src")) > Math.min(...built.map((f) => statSync(f).mtimeMs))) {
    execFileSync(npm, ["run", "build"], { cwd: repo, stdio: "pipe" });
  }
  const out = execFileSync(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", into], { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const [info] = JSON.parse(out) as { filename: string; size: number; unpackedSize: number; files: { path: string }[] }[];
  return { tarball: join(into, info.filename), packedBytes: info.size, unpackedBytes: info.unpackedSize, files: info.files.map((f) => f.path) };
}

/** Runs `work` while holding `lock` (a folder: mkdir is atomic); a lock older than 10 minutes is a crashed run's and is taken over. */
function withLock<T>(lock: string, work: () => T): T {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      else Atomics.wait(pause, 0, 0, 200);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The newest modification time of any file under `dir`. */
function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * A fresh copy of test/installed/<template> with the tarball (and openai)
 * npm-installed into it, plus `packages` (from the registry when the local
 * npm cache lacks them).
 */
export function installApp(tarball: string, template = "app", packages: string[] = []): string {
  const app = mkdtempSync(join(tmpdir(), `webgpu-openai-${template}-`));
  cpSync(join(repo, "test/installed", template), app, { recursive: true });
  const openaiVersion = (JSON.parse(readFileSync(join(repo, "node_modules/openai/package.json"), "utf8")) as { version: string }).version;
  execFileSync(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-package-lock", tarball, `openai@${openaiVersion}`, ...packages], { cwd: app, stdio: "pipe" });
  return app;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `root` as plain files from 127.0.0.1: 404 for what is missing, or with
 * `spaFallback` the root index.html (200 text/html), as single-page-app hosts do.
 */
export async function serveStatic(root: string, { spaFallback = false } = {}): Promise<StaticServer> {
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    const file = normalize(join(root, path.endsWith("/") ? `${path}index.html` : path));
    if (spaFallback && (!existsSync(file) || statSync(file).isDirectory())) {
      response.writeHead(200, { "content-type": TYPES[".html"] }).end(readFileSync(join(root, "index.html")));
      return;
    }
    if (!file.startsWith(root) || !existsSync(file) || statSync(file).isDirectory()) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    response.end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) };
}

/** A model id from web-llm's prebuilt catalog: a string literal, so it stays in any build of web-llm. */
const WEBLLM_MARKER = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

export interface PageRun {
  result: { direct?: string; sdk?: string; error?: string; [key: string]: unknown } | undefined;
  /** Every URL the page and its workers requested. */
  requests: string[];
  /** Scripts that are web-llm (by URL, or by a string of its prebuilt catalog that survives any minifier). */
  webllm: string[];
  /** Bytes of every script the page and its workers loaded. */
  scriptBytes: number;
  errors: string[];
}

/** Opens `url`, waits for the app's `globalThis.__result`, and records every request (workers' included). */
export async function runPage(browser: Browser, url: string, timeoutMs = 30_000): Promise<PageRun> {
  const context = await browser.newContext();
  const requests: string[] = [];
  const errors: string[] = [];
  const webllm: string[] = [];
  let scriptBytes = 0;
  const bodies: Promise<void>[] = [];
  context.on("request", (request) => void requests.push(request.url()));
  context.on("response", (response) => {
    if (!/javascript/.test(response.headers()["content-type"] ?? "")) return;
    bodies.push(
      response.body().then(
        (body) => {
          scriptBytes += body.length;
          // A file named after web-llm counts when it is big enough to be web-llm: Turbopack's dev server loads small stubs named after modules.
          if (body.includes(WEBLLM_MARKER) || (/web-llm/.test(response.url()) && body.length > 100_000)) webllm.push(response.url());
        },
        () => undefined,
      ),
    );
  });
  const page = await context.newPage();
  page.on("pageerror", (error) => void errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  try {
    await page.goto(url, { timeout: timeoutMs }); // a dev server compiles the page on this first request
    await page.waitForFunction(() => (globalThis as { __result?: unknown }).__result !== undefined, undefined, { timeout: timeoutMs }).catch(() => undefined);
    const result = (await page.evaluate(() => (globalThis as { __result?: unknown }).__result)) as PageRun["result"];
    await Promise.all(bodies);
    return { result, requests, errors, webllm, scriptBytes };
  } finally {
    await context.close();
  }
}
