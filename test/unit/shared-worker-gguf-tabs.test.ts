/**
 * A GGUF model (the real @wllama/wllama) in the shared worker when the tab
 * that hosts llama.cpp's Worker is really closed (Playwright closes the page):
 * a stream another tab has in flight fails with a 503 that says so, and that
 * tab's next request loads the model again in itself and answers. Pages are
 * test/shared-tabs/index.html on a Vite dev server (as in
 * shared-worker-tabs.test.ts); the tiny GGUF and wllama's wasm come from the
 * GGUF server (test/support/gguf-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import { createServer, type ViteDevServer } from "vite";
import { chromiumArgs } from "../../vite.config.js";
import type { StreamLog } from "../shared-tabs/tab.js";
import { startGgufServer, type GgufServer } from "../support/gguf-server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`shared-worker GGUF tab test skipped: no Chromium at ${CHROMIUM}.`);

const repo = resolve(import.meta.dirname, "../..");

type Completion = { choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number; completion_tokens: number } };
type TabApi = {
  connect(options: Record<string, unknown>): boolean;
  stream(id: string, body?: Record<string, unknown>): number;
  log(id: string): StreamLog | null;
  complete(body: Record<string, unknown>): Promise<{ completion: Completion | null; error: Record<string, unknown> | null }>;
};

describe.skipIf(!hasChromium)("a GGUF model in the shared worker: the tab hosting llama.cpp's Worker closes", { timeout: 180_000 }, () => {
  let server: ViteDevServer;
  let gguf: GgufServer;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    gguf = await startGgufServer();
    server = await createServer({
      root: repo,
      configFile: resolve(repo, "vite.config.ts"),
      // Its own optimizer cache (its deps differ from shared-worker-tabs.test.ts's), outside the shared node_modules.
      cacheDir: join(tmpdir(), "webgpu-openai-vite-gguf-tabs"),
      logLevel: "warn",
      clearScreen: false,
      server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false },
      // wllama and Jinja load in the shared worker on first use: optimized up front, so no page reloads for them.
      optimizeDeps: { entries: ["test/shared-tabs/*.ts"], include: ["comlink", "idb-keyval", "@wllama/wllama/esm/index.js", "@huggingface/jinja"] },
    });
    await server.listen();
    base = server.resolvedUrls!.local[0].replace(/\/$/, "");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await gguf?.close();
  });

  async function tab(ctx: BrowserContext, options: Record<string, unknown>): Promise<Page> {
    const page = await ctx.newPage();
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${base}/test/shared-tabs/index.html`);
    await page.waitForFunction(() => (window as unknown as { tab?: { ready: boolean } }).tab?.ready === true, null, { timeout: 60_000 });
    await page.evaluate((o) => (window as unknown as { tab: TabApi }).tab.connect(o), options);
    return page;
  }

  const call = <T>(page: Page, fn: (tab: TabApi, arg: any) => T | Promise<T>, arg?: unknown): Promise<T> =>
    page.evaluate(([source, a]) => new Function("tab", "arg", `return (${source})(tab, arg)`)((window as unknown as { tab: TabApi }).tab, a), [fn.toString(), arg] as const) as Promise<T>;
  const logOf = (page: Page, id: string) => call(page, (t, a) => t.log(a), id) as Promise<StreamLog | null>;
  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting; last value: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it("another tab's stream in flight fails with 503 gguf_host_tab_closed; its next request is hosted by it and answers as before", async () => {
    const ctx = await browser.newContext();
    const model = "tiny-gguf-tabs";
    const record = { model: `${gguf.url}/m/${model}/tiny.gguf`, model_id: model, model_lib: "", overrides: { context_window_size: 2048 }, engine: { kind: "wllama", wasm: `${gguf.url}/wllama/esm/wasm/wllama.wasm` } };
    const options = { models: [record] };
    const greedy = { model, messages: [{ role: "user", content: "hello world" }], max_tokens: 16, temperature: 0 };
    // Tab A is the only tab when the model loads: llama.cpp's Worker runs in it.
    const a = await tab(ctx, options);
    const first = await call(a, (t, body) => t.complete(body), greedy);
    expect(first.error).toBeNull();
    const b = await tab(ctx, options);
    // A sampled reply that runs far past the moment A closes (1500 tokens at most).
    await call(b, (t, body) => t.stream("hello world", body), { model, max_tokens: 1500, temperature: 1, seed: 3 });
    await until(() => logOf(b, "hello world"), (log) => (log?.chunks ?? 0) >= 3);
    const closed = Date.now();
    await a.close();
    const cut = await until(() => logOf(b, "hello world"), (log) => log?.end !== null);
    expect(cut?.error).toMatchObject({ status: 503, code: "gguf_host_tab_closed" });
    expect(cut!.chunks).toBeLessThan(1500);
    // It failed once the tab was gone (the worker hears of it through the tab's Web Lock), not after a timeout.
    expect(cut!.end! - closed).toBeLessThan(5000);
    // The next request loads the model again in tab B, the one left, from the cache (no request for the GGUF), and answers as llama.cpp did in A.
    const served = async () => ((await (await fetch(`${gguf.url}/__stats`)).json()) as Record<string, number>)[`/m/${model}/tiny.gguf`];
    const before = await served();
    expect(before).toBeGreaterThan(0);
    const again = await call(b, (t, body) => t.complete(body), greedy);
    expect(await served()).toBe(before);
    expect(again.error).toBeNull();
    expect(again.completion!.choices[0].message.content).toBe(first.completion!.choices[0].message.content);
    expect(again.completion!.usage).toMatchObject({ prompt_tokens: first.completion!.usage.prompt_tokens, completion_tokens: first.completion!.usage.completion_tokens });
    await ctx.close();
  });
});
