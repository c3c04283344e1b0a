/**
 * The package as users install it: `npm pack`, `npm install` of the tarball
 * into a fresh app, the app built by its bundler and opened in headless
 * Chromium with the DEFAULT worker (no `worker:` option). Each app streams a
 * reply from a scripted model record through the worker, directly and through
 * the OpenAI SDK over `client.fetch`, and loads no web-llm for it.
 *
 * Slow (a pack, an npm install from the local cache, five builds): about a
 * minute. Needs `npm run build` (it builds dist/ itself when missing or stale).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright";
import { build as viteBuild, createServer as viteServer } from "vite";
import { chromiumArgs } from "../../vite.config.js";
import { installApp, packLibrary, repo, runPage, serveStatic, type PackInfo, type PageRun } from "../installed/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
const expected = { direct: "Hello from the worker.", sdk: "Hello through the SDK.", worker: "dedicated" };

let pack: PackInfo;
let app: string;
let browser: Browser;
const cleanup: string[] = [];

/** Sizes the README reports: printed, so a run shows them. */
const measured: Record<string, string> = {};
const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

function expectServed(run: PageRun, worker: "dedicated" | "shared" = "dedicated"): void {
  expect(run.result, `page errors: ${run.errors.join(" | ")}`).toEqual({ ...expected, worker });
  expect(run.webllm, "a page that only uses a scripted model loads no web-llm").toEqual([]);
}

describe.skipIf(!haveChromium)("the installed package", { timeout: 240_000 }, () => {
  beforeAll(async () => {
    const packDir = mkdtempSync(join(tmpdir(), "webgpu-openai-pack-"));
    cleanup.push(packDir);
    pack = packLibrary(packDir);
    app = installApp(pack.tarball);
    cleanup.push(app);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
    measured.packed = kB(pack.packedBytes);
    measured.unpacked = kB(pack.unpackedBytes);
    measured.worker = kB(statSync(join(app, "node_modules/webgpu-openai/dist/worker/entry.js")).size);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
    console.log(`installed-package sizes: ${JSON.stringify(measured)}`);
  }, 60_000);

  it("is a lean tarball: dist without source maps, the LICENSE, no tests or sources", () => {
    expect(pack.files).toContain("LICENSE");
    expect(pack.files).toContain("dist/worker/entry.js");
    expect(pack.files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(pack.files.filter((f) => !/^(dist\/|LICENSE$|README\.md$|package\.json$)/.test(f))).toEqual([]);
    expect(pack.packedBytes).toBeLessThan(1_000_000);
    // The default workers (dedicated and shared) start with the literal patterns bundlers rewrite, relative to the file that holds them.
    const link = readFileSync(join(app, "node_modules/webgpu-openai/dist/client/worker-link.js"), "utf8");
    expect(link).toContain('new Worker(new URL("../worker/entry.js", import.meta.url), { type: "module"');
    expect(link).toContain('new SharedWorker(new URL("../worker/entry.js", import.meta.url), { type: "module"');
    // The worker files have no bare import but web-llm's, wllama's, @huggingface/jinja's and the MCP SDK's (a module worker
    // gets no import map), and those only dynamically: loaded when a web-llm model, a GGUF model (its own chat template) or
    // an mcp tool is first used, resolved by the app's bundler.
    const worker = readFileSync(join(app, "node_modules/webgpu-openai/dist/worker/entry.js"), "utf8");
    const bare = [...worker.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"'./][^"']*)["']/g)].map((m) => m[0]);
    expect(bare.filter((b) => !/^import\s*\(\s*"@modelcontextprotocol\/sdk\/client\/(index|streamableHttp|sse)\.js"$/.test(b))).toEqual([
      expect.stringMatching(/^import\s*\(\s*"@mlc-ai\/web-llm"$/),
      expect.stringMatching(/^import\s*\(\s*"@wllama\/wllama\/esm\/index\.js"$/),
      expect.stringMatching(/^import\s*\(\s*"@huggingface\/jinja"$/),
    ]);
  });

  it("imports in plain Node (index, testing and static) and streams a scripted reply", () => {
    const out = execFileSync(process.execPath, ["node-import.mjs"], { cwd: app, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ text: "Hello from Node.", static: "Hello from Node." });
  });

  it.each(["bundler", "node16", "node10"])("every subpath resolves with types under moduleResolution %s", (resolution) => {
    const module = resolution === "node16" ? "node16" : resolution === "node10" ? "commonjs" : "esnext";
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    const args = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--lib", "es2022,dom", "--module", module, "--moduleResolution", resolution, "types-check.ts"];
    expect(() => execFileSync(process.execPath, [tsc, ...args], { cwd: app, encoding: "utf8", stdio: "pipe" })).not.toThrow();
  });

  it("(a) Vite dev server, default dedicated and shared worker", async () => {
    const server = await viteServer({ configFile: false, root: app, logLevel: "error", server: { host: "127.0.0.1", port: 0 }, cacheDir: join(app, "node_modules/.vite-dev") });
    await server.listen();
    try {
      expectServed(await runPage(browser, server.resolvedUrls!.local[0]));
      expectServed(await runPage(browser, `${server.resolvedUrls!.local[0]}?worker=shared`), "shared");
    } finally {
      await server.close();
    }
  });

  it("(b) Vite production build, served as static files (dedicated and shared worker)", async () => {
    // `worker.format: "es"` (the README's Vite note): Vite's default builds workers as one classic script, web-llm inlined.
    const outDir = join(app, "out-vite");
    await viteBuild({ configFile: false, root: app, logLevel: "error", worker: { format: "es" }, build: { outDir, emptyOutDir: true }, cacheDir: join(app, "node_modules/.vite-build") });
    const assets = readdirSync(join(outDir, "assets"));
    const main = assets.filter((f) => f.startsWith("index-") && f.endsWith(".js")).map((f) => statSync(join(outDir, "assets", f)).size);
    measured.viteAppMainWithOpenAiSdk = kB(main.reduce((a, b) => a + b, 0));
    const server = await serveStatic(outDir);
    try {
      expectServed(await runPage(browser, `${server.url}/`));
      expectServed(await runPage(browser, `${server.url}/?worker=shared`), "shared");
    } finally {
      await server.close();
    }

    // The failure users met: the worker file missing and the host answering index.html in its place → a 503 that says so, fast.
    const workers = assets.filter((f) => /entry-[^/]*\.js$/.test(f));
    // One file serves as the dedicated and as the shared worker: the app's output holds one worker build.
    expect(workers, `the build emits the worker once: ${assets.join(", ")}`).toHaveLength(1);
    const worker = workers[0];
    rmSync(join(outDir, "assets", worker!));
    const broken = await serveStatic(outDir, { spaFallback: true });
    try {
      const started = Date.now();
      const run = await runPage(browser, `${broken.url}/`, 10_000);
      expect(run.result?.error).toMatch(new RegExp(`ApiError: The engine worker ${broken.url}/assets/${worker!.replace(/[.]/g, "\\.")} failed to start: .*answered HTTP 200 with text/html`));
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await broken.close();
    }
  });

  it("(b') Vite production build with Vite's default worker format still answers (web-llm inlined in the worker)", async () => {
    const outDir = join(app, "out-vite-iife");
    await viteBuild({ configFile: false, root: app, logLevel: "error", build: { outDir, emptyOutDir: true, minify: false }, cacheDir: join(app, "node_modules/.vite-build") });
    const server = await serveStatic(outDir);
    try {
      const run = await runPage(browser, `${server.url}/`);
      expect(run.result, `page errors: ${run.errors.join(" | ")}`).toEqual(expected);
    } finally {
      await server.close();
    }
  });

  it("(c) webpack 5 production build (dedicated and shared worker)", async () => {
    const { default: webpack } = await import("webpack");
    const outDir = join(app, "out-webpack");
    const stats = await new Promise<import("webpack").Stats>((done, fail) =>
      webpack(
        {
          mode: "production",
          context: app,
          entry: "./main.js",
          output: { path: outDir, filename: "main.js", clean: true },
          resolve: { modules: [join(app, "node_modules")] },
          performance: { hints: false },
          // Minifying web-llm's 6 MB chunk takes minutes on a shared CI core and proves nothing here.
          optimization: { minimize: false },
          infrastructureLogging: { level: "error" },
        },
        (error, result) => (error || !result ? fail(error) : done(result)),
      ),
    );
    expect(stats.hasErrors(), stats.toString("errors-only")).toBe(false);
    writeFileSync(join(outDir, "index.html"), '<!doctype html><meta charset="utf-8"><script src="./main.js"></script>');
    const server = await serveStatic(outDir);
    try {
      expectServed(await runPage(browser, `${server.url}/`));
      expectServed(await runPage(browser, `${server.url}/?worker=shared`), "shared");
    } finally {
      await server.close();
    }
  });

  it("(d) a static folder, no bundler: <script type=module> and an import map (dedicated and shared worker)", async () => {
    const server = await serveStatic(app);
    try {
      expectServed(await runPage(browser, `${server.url}/static.html`));
      expectServed(await runPage(browser, `${server.url}/static.html?worker=shared`), "shared");
    } finally {
      await server.close();
    }
  });

  it("(d') a static folder asked for a web-llm model: 503 webllm_unavailable saying how to fix it", async () => {
    const server = await serveStatic(app);
    try {
      const run = await runPage(browser, `${server.url}/static-webllm.html`);
      expect(run.result).toMatchObject({ status: 503, code: "webllm_unavailable", message: expect.stringMatching(/@mlc-ai\/web-llm could not be loaded.*Using it in your app/) });
    } finally {
      await server.close();
    }
  });

  it("(e) esbuild, the app hosting its worker with webgpu-openai/worker", async () => {
    const { build } = await import("esbuild");
    const outdir = join(app, "out-esbuild");
    await build({ absWorkingDir: app, entryPoints: ["main-hosted.js", "engine-worker.js"], outdir, bundle: true, splitting: true, format: "esm", platform: "browser", logLevel: "error" });
    writeFileSync(join(outdir, "index.html"), '<!doctype html><meta charset="utf-8"><script type="module" src="./main-hosted.js"></script>');
    const server = await serveStatic(outdir);
    try {
      expectServed(await runPage(browser, `${server.url}/`));
    } finally {
      await server.close();
    }
  });

  it("(f) Rollup, the app hosting its worker with webgpu-openai/worker", async () => {
    const { rollup } = await import("rollup");
    const { nodeResolve } = await import("@rollup/plugin-node-resolve");
    // The MCP SDK (loaded by the worker on first use of an mcp tool) depends on CommonJS packages (ajv) that import JSON.
    const { default: commonjs } = await import("@rollup/plugin-commonjs");
    const { default: json } = await import("@rollup/plugin-json");
    const outdir = join(app, "out-rollup");
    const bundle = await rollup({ input: [join(app, "main-hosted.js"), join(app, "engine-worker.js")], plugins: [nodeResolve({ browser: true, rootDir: app }), commonjs(), json()], logLevel: "silent" });
    await bundle.write({ dir: outdir, format: "es", entryFileNames: "[name].js" });
    await bundle.close();
    writeFileSync(join(outdir, "index.html"), '<!doctype html><meta charset="utf-8"><script type="module" src="./main-hosted.js"></script>');
    const server = await serveStatic(outdir);
    try {
      expectServed(await runPage(browser, `${server.url}/`));
    } finally {
      await server.close();
    }
  });
});
