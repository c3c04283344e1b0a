/**
 * createClient({ worker: "shared" }) with several pages of one origin, in
 * headless Chromium (WebGPU on SwiftShader inside the SharedWorker): one
 * engine for every tab (the model loads once), one FIFO queue, a closed or
 * crashed tab's requests stopped or dropped while the others go on, error
 * fields across the shared port, and the dedicated-worker fallback where
 * SharedWorker is missing. The pages are test/shared-tabs/index.html served
 * by a Vite dev server on 127.0.0.1 (a secure context); each test uses its own
 * browser context, so its pages share one SharedWorker and no other test's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import { createServer, type ViteDevServer } from "vite";
import { chromiumArgs } from "../../vite.config.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`shared-worker tab tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const repo = resolve(import.meta.dirname, "../..");
const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");

interface StreamLog {
  sent: number;
  first: number | null;
  end: number | null;
  text: string;
  chunks: number;
  error: { name: string; status?: number; code?: string | null; param?: string | null; apiError: boolean } | null;
}

type TabApi = {
  connect(options: Record<string, unknown>): boolean;
  stream(id: string, body?: Record<string, unknown>): number;
  log(id: string): StreamLog | null;
  complete(body: Record<string, unknown>): Promise<{ sent: number; done: number; completion: { choices: Array<{ message: { content: string } }> } | null; error: Record<string, unknown> | null }>;
  fetchStatus(body: Record<string, unknown>): Promise<{ status: number; body: { error: Record<string, unknown> } }>;
  workerInfo(): Promise<{ worker: string; tabs: number; fallback?: string }>;
  gpuInfo(): Promise<{ available: boolean; worker: string }>;
  queueState(): Promise<{ waiting: number; running: boolean }>;
  engineReport(): Promise<{ loads: string[]; prompts: string[][] }>;
  progress: Array<{ phase: string; fraction: number; at: number }>;
  info: string[];
};

describe.skipIf(!hasChromium)("one engine for every tab: createClient({ worker: \"shared\" })", { timeout: 120_000 }, () => {
  let server: ViteDevServer;
  let base: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await createServer({
      root: repo,
      configFile: resolve(repo, "vite.config.ts"),
      cacheDir: resolve(repo, "node_modules/.vite-shared-tabs"),
      logLevel: "warn",
      clearScreen: false,
      server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false },
      optimizeDeps: { entries: ["test/shared-tabs/*.ts"], include: ["comlink", "idb-keyval"] },
    });
    await server.listen();
    base = server.resolvedUrls!.local[0].replace(/\/$/, "");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function context(): Promise<BrowserContext> {
    const created = await browser.newContext();
    contexts.push(created);
    return created;
  }

  async function tab(ctx: BrowserContext, options: Record<string, unknown>, init?: () => void): Promise<Page> {
    const page = await ctx.newPage();
    page.on("pageerror", (error) => console.error("page error:", error.message));
    if (init) await page.addInitScript(init);
    await page.goto(`${base}/test/shared-tabs/index.html`);
    await page.waitForFunction(() => (window as unknown as { tab?: { ready: boolean } }).tab?.ready === true, null, { timeout: 60_000 });
    await page.evaluate((o) => (window as unknown as { tab: TabApi }).tab.connect(o), options);
    return page;
  }

  const call = <T>(page: Page, fn: (tab: TabApi, arg: any) => T | Promise<T>, arg?: unknown): Promise<T> =>
    page.evaluate(([source, a]) => new Function("tab", "arg", `return (${source})(tab, arg)`)((window as unknown as { tab: TabApi }).tab, a), [fn.toString(), arg] as const) as Promise<T>;

  const logOf = (page: Page, id: string) => call(page, (t, a) => t.log(a), id) as Promise<StreamLog>;
  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting; last value: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const ended = (page: Page, id: string) => until(() => logOf(page, id), (log) => log?.end !== null);

  it("two tabs, one engine: the second tab's first request starts without the load delay, and the model loaded once", async () => {
    const ctx = await context();
    const options = { replies: Array.from({ length: 8 }, (_, i) => words(`r${i}-`, 5)), loadDelayMs: 1500 };
    const a = await tab(ctx, options);
    const first = await call(a, (t) => t.complete({}));
    expect(first.error).toBeNull();
    expect(first.done - first.sent).toBeGreaterThanOrEqual(1400); // it loaded the model
    const b = await tab(ctx, options);
    const second = await call(b, (t) => t.complete({}));
    expect(second.error).toBeNull();
    expect(second.done - second.sent).toBeLessThan(1000); // it did not
    // One engine: the scripted replies are taken in order by both tabs.
    expect(first.completion!.choices[0].message.content).toBe(words("r0-", 5));
    expect(second.completion!.choices[0].message.content).toBe(words("r1-", 5));
    // One load, reported to tab A (four progress steps, one of them complete); none for tab B.
    const progressA = await call(a, (t) => t.progress);
    expect(progressA.filter((p) => p.fraction === 1)).toHaveLength(1);
    expect(await call(b, (t) => t.progress)).toEqual([]);
    expect(await call(b, (t) => t.workerInfo())).toEqual({ worker: "shared", tabs: 2 });
    expect(await call(a, (t) => t.gpuInfo())).toMatchObject({ available: true, worker: "shared" });
    await ctx.close();
  });

  it("an app's own SharedWorker: three tabs asking at once, the engine loads the model once", async () => {
    const ctx = await context();
    const pages = [await tab(ctx, { custom: true }), await tab(ctx, { custom: true }), await tab(ctx, { custom: true })];
    const results = await Promise.all(pages.map((page) => call(page, (t) => t.complete({}))));
    for (const result of results) expect(result.error).toBeNull();
    const report = await call(pages[0], (t) => t.engineReport());
    expect(report.loads).toEqual(["Qwen3-0.6B-q4f32_1-MLC"]); // the f32 variant: SwiftShader has no shader-f16
    expect(report.prompts).toHaveLength(3);
    expect(await call(pages[2], (t) => t.workerInfo())).toEqual({ worker: "shared", tabs: 3 });
    await ctx.close();
  });
});
