/**
 * The package in a Chrome MV3 extension, as users build one: the packed
 * tarball npm-installed into a fresh extension project (test/installed/extension),
 * bundled by esbuild with code splitting (and by Vite), loaded into headless Chromium with
 * --load-extension, and driven from its popup with a scripted model record:
 *
 * - the offscreen recipe: popup → service worker → offscreen document hosting
 *   createClient, with the extension's own engine worker (webgpu-openai/worker),
 *   and with the default worker (which esbuild does not emit: a 503 that says
 *   what is knowable about a chrome-extension:// worker URL);
 * - createClient() inside the service worker itself, from webgpu-openai/static
 *   (a service worker may not call import(), which a code-split bundle of the
 *   default entry does);
 * - the manifest's CSP: WebAssembly (web-llm's model library) compiles in the
 *   service worker, the offscreen document and its worker only with
 *   'wasm-unsafe-eval' in `extension_pages`.
 *
 * About 40 s: a pack, an npm install from the local cache, an esbuild and a
 * Vite build, three browser launches.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { installApp, packLibrary } from "../installed/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
/** The README's line for extensions: web-llm compiles its model library with WebAssembly. */
const CSP = "script-src 'self' 'wasm-unsafe-eval'; object-src 'self'";
const reply = { direct: "Hello from the extension.", sdk: "Hello through the SDK." };

interface Extension {
  context: BrowserContext;
  id: string;
  /** Opens the popup with these query parameters and returns what the service worker answered. */
  ask(query: string): Promise<Record<string, unknown>>;
}

const cleanup: string[] = [];
let project: string;
const open: Extension[] = [];

/** The esbuild output with the manifest (`csp`: its extension_pages policy, or none). */
function extensionFolder(built: string, csp: string | undefined): string {
  const folder = mkdtempSync(join(tmpdir(), "webgpu-openai-ext-"));
  cleanup.push(folder);
  cpSync(built, folder, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(project, "manifest.json"), "utf8")) as Record<string, unknown>;
  if (csp) manifest.content_security_policy = { extension_pages: csp };
  else delete manifest.content_security_policy;
  writeFileSync(join(folder, "manifest.json"), JSON.stringify(manifest, null, 2));
  return folder;
}

/** Headless Chromium (its new headless mode, which loads extensions) with only this extension. */
async function launch(folder: string): Promise<Extension> {
  const profile = mkdtempSync(join(tmpdir(), "webgpu-openai-ext-profile-"));
  cleanup.push(profile);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...chromiumArgs, `--disable-extensions-except=${folder}`, `--load-extension=${folder}`],
  });
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker", { timeout: 30_000 }));
  const id = new URL(worker.url()).host;
  const extension: Extension = {
    context,
    id,
    async ask(query) {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => void errors.push(error.message));
      try {
        await page.goto(`chrome-extension://${id}/popup.html?${query}`);
        await page.waitForFunction(() => (globalThis as { __result?: unknown }).__result !== undefined, undefined, { timeout: 60_000 });
        const result = (await page.evaluate(() => (globalThis as { __result?: unknown }).__result)) as Record<string, unknown>;
        return errors.length ? { ...result, pageErrors: errors } : result;
      } finally {
        await page.close();
      }
    },
  };
  open.push(extension);
  return extension;
}

describe.skipIf(!haveChromium)("the installed package in an MV3 extension", { timeout: 120_000 }, () => {
  let built: string;

  beforeAll(async () => {
    const packDir = mkdtempSync(join(tmpdir(), "webgpu-openai-pack-"));
    cleanup.push(packDir);
    project = installApp(packLibrary(packDir).tarball, "extension");
    cleanup.push(project);
    const { build } = await import("esbuild");
    built = join(project, "build");
    const entryPoints = ["background.js", "popup.js", "offscreen.js", "engine-worker.js", "wasm-probe-worker.js"];
    await build({ absWorkingDir: project, entryPoints, outdir: built, bundle: true, splitting: true, format: "esm", platform: "browser", logLevel: "error" });
    for (const page of ["popup.html", "offscreen.html"]) cpSync(join(project, page), join(built, page));
  }, 240_000);

  afterAll(async () => {
    for (const extension of open) await extension.context.close();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  describe("with the README's content_security_policy", () => {
    let extension: Extension;
    beforeAll(async () => {
      extension = await launch(extensionFolder(built, CSP));
    }, 60_000);

    it("popup → service worker → offscreen document hosting createClient with the extension's own worker", async () => {
      expect(await extension.ask("mode=offscreen&worker=hosted")).toEqual({ ...reply, worker: "dedicated", wasm: { document: "ok", worker: "ok" } });
    });

    it("createClient() in the service worker itself, from webgpu-openai/static, in a code-split bundle", async () => {
      const result = await extension.ask("mode=service-worker");
      expect(result).toMatchObject({ ...reply, worker: "none", wasm: "ok" });
      // web-llm's own prebuilt catalog: web-llm was imported statically and runs in the service worker.
      expect(result.catalog).toBeGreaterThan(100);
    });

    it("the default worker, which esbuild does not emit: a 503 that says the file is not in the extension", async () => {
      const result = await extension.ask("mode=offscreen&worker=default");
      expect(result).toMatchObject({ status: 503, code: "worker_unavailable" });
      const url = `chrome-extension://${extension.id}/worker/entry.js`;
      expect(result.error).toContain(`The engine worker ${url} failed to start: ${url} is not in the extension's package`);
      expect(result.error).toMatch(/host the worker yourself/i);
    });
  });

  it("Vite (worker format es): the default worker is emitted into the extension and serves the offscreen document unchanged", async () => {
    const { build } = await import("vite");
    const outDir = join(project, "build-vite");
    await build({
      configFile: false,
      root: project,
      logLevel: "error",
      worker: { format: "es" },
      cacheDir: join(project, "node_modules/.vite"),
      build: {
        outDir,
        emptyOutDir: true,
        minify: false,
        rollupOptions: { input: { popup: join(project, "popup.html"), offscreen: join(project, "offscreen.html"), background: join(project, "background.js") }, output: { entryFileNames: "[name].js" } },
      },
    });
    const extension = await launch(extensionFolder(outDir, CSP));
    expect(await extension.ask("mode=offscreen&worker=default")).toEqual({ ...reply, worker: "dedicated", wasm: { document: "ok", worker: "ok" } });
    expect(await extension.ask("mode=service-worker")).toMatchObject({ ...reply, worker: "none", wasm: "ok" });
  });

  it("without it, WebAssembly does not compile in the service worker, the offscreen document or its worker", async () => {
    const extension = await launch(extensionFolder(built, undefined));
    const offscreen = await extension.ask("mode=offscreen&worker=hosted");
    expect(offscreen).toMatchObject({ ...reply, worker: "dedicated" });
    const wasm = offscreen.wasm as { document: string; worker: string };
    expect(wasm.document).toMatch(/CompileError: .*Content Security Policy/);
    expect(wasm.worker).toMatch(/CompileError: .*Content Security Policy/);
    expect((await extension.ask("mode=service-worker")).wasm).toMatch(/CompileError: .*Content Security Policy/);
  });
});
