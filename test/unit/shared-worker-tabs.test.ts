/**
 * createClient({ worker: "shared" }) with several pages of one origin, in
 * headless Chromium (WebGPU on SwiftShader inside the SharedWorker): one
 * engine for every tab (the model loads once), one FIFO queue, a closed or
 * crashed tab's requests stopped or dropped while the others go on, error
 * fields across the shared port, and the dedicated-worker fallback where
 * SharedWorker is missing. The pages are test/shared-tabs/index.html served
 * by a Vite dev server on 127.0.0.1 (a secure context; as insecure.test, mapped
 * to it, an insecure one without Web Locks); each test uses its own
 * browser context, so its pages share one SharedWorker and no other test's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import { createServer, type ViteDevServer } from "vite";
import { chromiumArgs } from "../../vite.config.js";
import type { StreamLog } from "../shared-tabs/tab.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`shared-worker tab tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const repo = resolve(import.meta.dirname, "../..");
const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(" ");

type TabApi = {
  connect(options: Record<string, unknown>): boolean;
  stream(id: string, body?: Record<string, unknown>): number;
  log(id: string): StreamLog | null;
  complete(body: Record<string, unknown>): Promise<{ sent: number; done: number; completion: { choices: Array<{ message: { content: string } }>; usage: { prompt_tokens_details: { cached_tokens: number } } } | null; error: Record<string, unknown> | null }>;
  fetchStatus(body: Record<string, unknown>): Promise<{ status: number; body: { error: Record<string, unknown> } }>;
  workerInfo(): Promise<{ worker: string; tabs: number; fallback?: string }>;
  gpuInfo(): Promise<{ available: boolean; worker: string }>;
  queueState(): Promise<{ waiting: number; running: boolean }>;
  stats(): Promise<{ forward_passes: number; generated_tokens: number; prefill_tokens: number; max_rows: number; batching: { available: boolean } }>;
  modelIds(): Promise<string[]>;
  respond(body: Record<string, unknown>): Promise<{ id?: string; text?: string; events?: string[]; error: unknown }>;
  retrieveResponse(id: string): Promise<string>;
  embed(input: string[]): Promise<number[]>;
  cacheUsage(): Promise<Record<string, unknown>>;
  engineReport(): Promise<{ loads: string[]; prompts: string[][] }>;
  terminate(): void;
  progress: Array<{ phase: string; fraction: number; at: number }>;
  info: string[];
  warnings: string[];
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
      // insecure.test: the same server as an insecure origin (no Web Locks there), mapped to 127.0.0.1 below.
      server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false, allowedHosts: ["insecure.test"] },
      optimizeDeps: { entries: ["test/shared-tabs/*.ts"], include: ["comlink", "idb-keyval"] },
    });
    await server.listen();
    base = server.resolvedUrls!.local[0].replace(/\/$/, "");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...chromiumArgs, "--host-resolver-rules=MAP insecure.test 127.0.0.1"] });
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

  async function tab(ctx: BrowserContext, options: Record<string, unknown>, init?: () => void, origin = base): Promise<Page> {
    const page = await ctx.newPage();
    page.on("pageerror", (error) => console.error("page error:", error.message));
    if (init) await page.addInitScript(init);
    await page.goto(`${origin}/test/shared-tabs/index.html`);
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
    // One generation at a time: the stats below are the one-at-a-time counts (max_rows 1).
    const options = { replies: Array.from({ length: 8 }, (_, i) => words(`r${i}-`, 5)), loadDelayMs: 1500, batch: false };
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
    // client.stats() counts the one engine: both tabs' requests, the same from either tab.
    const stats = await call(b, (t) => t.stats());
    expect(await call(a, (t) => t.stats())).toEqual(stats);
    const completionTokens = [first, second].reduce((n, r) => n + (r.completion as unknown as { usage: { completion_tokens: number } }).usage.completion_tokens, 0);
    expect(stats.generated_tokens).toBeGreaterThanOrEqual(completionTokens);
    expect(stats).toMatchObject({ max_rows: 1, batching: { available: false } });
    expect(await call(a, (t) => t.gpuInfo())).toMatchObject({ available: true, worker: "shared" });
    // The rest of the API crosses the shared port too.
    expect(await call(b, (t) => t.modelIds())).toContain("Qwen3-0.6B-q4f32_1-MLC");
    expect(await call(b, (t) => t.cacheUsage())).toMatchObject({ models: expect.any(Array) });
    await ctx.close();
  });

  it("the Responses API and embeddings cross the shared port; a response one tab stored is retrievable from another (one store)", async () => {
    const ctx = await context();
    const options = { replies: ["Hello from A.", "Streamed to B."] };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    const created = await call(a, (t) => t.respond({}));
    expect(created).toMatchObject({ text: "Hello from A.", error: null });
    expect(await call(b, (t, id) => t.retrieveResponse(id), created.id!)).toBe("Hello from A.");
    const streamed = await call(b, (t) => t.respond({ stream: true }));
    expect(streamed.error).toBeNull();
    expect(streamed.text).toBe("Streamed to B.");
    expect(streamed.events![0]).toBe("response.created");
    expect(streamed.events!.at(-1)).toBe("response.completed");
    expect(await call(b, (t) => t.embed(["one", "two"]))).toEqual([384, 384]);
    await ctx.close();
  });

  it("load progress goes to every connected tab: the model one tab loads is the one all of them use", async () => {
    const ctx = await context();
    const options = { replies: replies(2, 3), loadDelayMs: 600 };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    // A client connects on its first call: both join before the load.
    await call(a, (t) => t.workerInfo());
    expect((await call(b, (t) => t.workerInfo())).tabs).toBe(2);
    expect((await call(a, (t) => t.complete({}))).error).toBeNull();
    for (const page of [a, b]) {
      const progress = await call(page, (t) => t.progress);
      expect(progress.map((p) => p.fraction)).toEqual([0.25, 0.5, 0.75, 1]);
    }
    await ctx.close();
  });

  it("when the last tab closes the worker ends (and with it the engine): the next tab starts a fresh one that loads again", async () => {
    const ctx = await context();
    const options = { replies: replies(3, 3), loadDelayMs: 800 };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    expect((await call(a, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("r0-", 3));
    expect((await call(b, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("r1-", 3));
    await a.close();
    await b.close();
    const c = await tab(ctx, options);
    const fresh = await call(c, (t) => t.complete({}));
    // Replies start over and the model loads again: a new worker, not the old one.
    expect(fresh.completion!.choices[0].message.content).toBe(words("r0-", 3));
    expect(fresh.done - fresh.sent).toBeGreaterThanOrEqual(700);
    expect(await call(c, (t) => t.workerInfo())).toEqual({ worker: "shared", tabs: 1 });
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

  /** Replies r0…, r1…, …: which reply a request got tells in which order the engine ran the requests. */
  const replies = (n: number, tokens: number) => Array.from({ length: n }, (_, i) => words(`r${i}-`, tokens));
  const waiting = (page: Page, n: number) => until(() => call(page, (t) => t.queueState()), (q) => q.waiting === n);
  const chunksOf = (page: Page, id: string, n: number) => until(() => logOf(page, id), (log) => (log?.chunks ?? 0) >= n);

  it("requests of two tabs share one FIFO queue: their streams run in the order they were sent", async () => {
    const ctx = await context();
    // One generation at a time: the FIFO queue is what is checked.
    const options = { replies: replies(4, 20), tokenDelayMs: 10, batch: false };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    await call(a, (t) => t.stream("s1"));
    await chunksOf(a, "s1", 1);
    await call(b, (t) => t.stream("s2"));
    await waiting(a, 1); // tab A sees tab B's request waiting: one queue
    await call(a, (t) => t.stream("s3"));
    await waiting(b, 2);
    await call(b, (t) => t.stream("s4"));
    const [s1, s2, s3, s4] = [await ended(a, "s1"), await ended(b, "s2"), await ended(a, "s3"), await ended(b, "s4")];
    expect([s1.text, s2.text, s3.text, s4.text]).toEqual(replies(4, 20));
    for (const log of [s1, s2, s3, s4]) expect(log.error).toBeNull();
    // Each starts after the one before it ended (one generation at a time, across tabs).
    expect(s2.first!).toBeGreaterThanOrEqual(s1.end! - 50);
    expect(s3.first!).toBeGreaterThanOrEqual(s2.end! - 50);
    expect(s4.first!).toBeGreaterThanOrEqual(s3.end! - 50);
    await ctx.close();
  });

  /**
   * Tab a streams a long reply, tab b's request waits behind it (one generation at a time); a closes. Returns
   * b's request and the ms from the close to b's first token.
   */
  async function closeMidStream(ctx: BrowserContext, longTokens: number, origin = base, checkPage?: (page: Page) => Promise<void>) {
    const options = { replies: [words("long-", longTokens), words("r1-", 30)], tokenDelayMs: 10, batch: false };
    const a = await tab(ctx, options, undefined, origin);
    await checkPage?.(a);
    const b = await tab(ctx, options, undefined, origin);
    await call(a, (t) => t.stream("long"));
    await chunksOf(a, "long", 3);
    await call(b, (t) => t.stream("next"));
    await waiting(b, 1);
    const closed = Date.now();
    await a.close();
    const next = await ended(b, "next");
    return { b, next, afterClose: next.first! - closed };
  }

  it("closing a tab mid-stream stops its request within a second; the other tab's stream completes untouched", async () => {
    const ctx = await context();
    const { b, next, afterClose } = await closeMidStream(ctx, 400);
    expect(next.error).toBeNull();
    expect(next.text).toBe(words("r1-", 30));
    // The long reply alone would have held the engine for 4 s more.
    expect(afterClose).toBeLessThan(1000);
    expect(await until(() => call(b, (t) => t.workerInfo()), (info) => info.tabs === 1)).toEqual({ worker: "shared", tabs: 1 });
    await ctx.close();
  });

  it("where Web Locks are missing (an insecure origin), closing a tab mid-stream still stops its request at once (its goodbye on pagehide)", async () => {
    const ctx = await context();
    const insecure = base.replace("127.0.0.1", "insecure.test");
    // A long reply (3 000 tokens, ~30 s) that only the tab's leaving can cut short: the bound below holds on a loaded machine.
    const { b, next, afterClose } = await closeMidStream(ctx, 3000, insecure, async (a) => {
      expect(await a.evaluate(() => [isSecureContext, "locks" in navigator, typeof SharedWorker])).toEqual([false, false, "function"]);
    });
    expect(next.error).toBeNull();
    expect(next.text).toBe(words("r1-", 30));
    // The long reply alone would have held the engine for ~30 s more.
    expect(afterClose).toBeLessThan(10_000);
    expect(await until(() => call(b, (t) => t.workerInfo()), (info) => info.tabs === 1)).toEqual({ worker: "shared", tabs: 1 });
    await ctx.close();
  });

  it("a batching engine: three tabs streaming at once share its forward passes, each reply whole", async () => {
    const ctx = await context();
    const options = { replies: ["warm", words("a-", 60), words("b-", 60), words("c-", 60)], tokenDelayMs: 10, batch: { maxRows: 4 } };
    const tabs = [await tab(ctx, options), await tab(ctx, options), await tab(ctx, options)];
    // the model loaded first, so the three streams start together
    expect((await call(tabs[0], (t) => t.complete({}))).error).toBeNull();
    const before = await call(tabs[0], (t) => t.stats());
    await Promise.all(tabs.map((page, i) => call(page, (t, id) => t.stream(id), `s${i}`)));
    const logs = await Promise.all(tabs.map((page, i) => ended(page, `s${i}`)));
    // each tab got one of the three replies, whole (arrival order decides which)
    expect(logs.map((l) => l.error)).toEqual([null, null, null]);
    expect(logs.map((l) => l.text).sort()).toEqual([words("a-", 60), words("b-", 60), words("c-", 60)]);
    const stats = await call(tabs[0], (t) => t.stats());
    expect(stats.max_rows).toBe(3);
    expect(stats.batching.available).toBe(true);
    // one at a time they would take a pass per token; together about one stream's tokens
    const tokens = stats.generated_tokens - before.generated_tokens;
    expect(stats.forward_passes - before.forward_passes).toBeLessThanOrEqual(1.25 * (tokens / 3) + 8);
    await ctx.close();
  });

  it("a batching engine: a tab closed mid-stream frees its row at once for a waiting tab, while the other row goes on", async () => {
    const ctx = await context();
    const options = { replies: [words("long-", 400), words("other-", 200), words("r1-", 20)], tokenDelayMs: 10, batch: { maxRows: 2 } };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    const c = await tab(ctx, options);
    await call(a, (t) => t.stream("long"));
    await chunksOf(a, "long", 3);
    await call(b, (t) => t.stream("other"));
    await chunksOf(b, "other", 3);
    // both rows are taken: the third tab's request waits
    await call(c, (t) => t.stream("next"));
    await waiting(c, 1);
    const closed = Date.now();
    await a.close();
    const next = await ended(c, "next");
    expect(next.error).toBeNull();
    expect(next.text).toBe(words("r1-", 20));
    expect(next.first! - closed).toBeLessThan(1000);
    const other = await ended(b, "other");
    expect(other.text).toBe(words("other-", 200));
    // the waiting tab finished inside the other row's stream: they ran side by side
    expect(next.end!).toBeLessThan(other.end!);
    await ctx.close();
  });

  it("a queued request of a closed tab never starts; the running stream of another tab is not disturbed", async () => {
    const ctx = await context();
    // One generation at a time: B's request waits in the queue.
    const options = { replies: [words("a-", 60), words("r1-", 5), words("r2-", 5)], tokenDelayMs: 10, batch: false };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    const c = await tab(ctx, options);
    await call(a, (t) => t.stream("a"));
    await chunksOf(a, "a", 1);
    await call(b, (t) => t.stream("b"));
    await waiting(a, 1);
    await call(c, (t) => t.stream("c"));
    await waiting(a, 2);
    await b.close();
    await waiting(a, 1); // B's request left the queue
    const [logA, logC] = [await ended(a, "a"), await ended(c, "c")];
    expect(logA).toMatchObject({ error: null, text: words("a-", 60) });
    // C got the next reply: B's request never reached the engine.
    expect(logC).toMatchObject({ error: null, text: words("r1-", 5) });
    await ctx.close();
  });

  it("a tab that crashes or reloads mid-stream stops its request within a second", async () => {
    const ctx = await context();
    // One generation at a time: the other tabs' requests wait in the queue.
    const options = { replies: [words("w-", 3), words("b-", 400), words("c-", 400), words("a-", 10)], tokenDelayMs: 10, batch: false };
    const a = await tab(ctx, options);
    expect((await call(a, (t) => t.complete({}))).error).toBeNull(); // tab A starts the worker
    const b = await tab(ctx, options);
    const c = await tab(ctx, options);
    await call(b, (t) => t.stream("b"));
    await chunksOf(b, "b", 2);
    await call(c, (t) => t.stream("c"));
    await waiting(a, 1);
    await call(a, (t) => t.stream("a"));
    await waiting(a, 2);
    const crashed = Date.now();
    const cdp = await ctx.newCDPSession(b);
    void cdp.send("Page.crash").catch(() => undefined);
    const logC = await chunksOf(c, "c", 1);
    expect(logC.first! - crashed).toBeLessThan(1000);
    await chunksOf(c, "c", 3);
    const reloaded = Date.now();
    // the reload only has to end tab C's request; under load it may still be loading when the context closes
    void c.reload().catch(() => undefined);
    const logA = await ended(a, "a");
    expect(logA).toMatchObject({ error: null, text: words("a-", 10) });
    expect(logA.first! - reloaded).toBeLessThan(1000);
    expect(await until(() => call(a, (t) => t.workerInfo()), (info) => info.tabs === 1)).toEqual({ worker: "shared", tabs: 1 });
    await ctx.close();
  });

  it("when the worker dies with the process of the tab it ran in, the other tabs' requests fail fast with 503 worker_lost and the next one starts a fresh worker", async () => {
    const ctx = await context();
    const options = { replies: [words("w-", 3), words("long-", 400), words("q-", 3), words("fresh-", 3)], tokenDelayMs: 10 };
    const a = await tab(ctx, options);
    expect((await call(a, (t) => t.complete({}))).error).toBeNull(); // Chromium runs the worker in tab A's process
    const b = await tab(ctx, options);
    await call(b, (t) => t.stream("long"));
    await chunksOf(b, "long", 2);
    const crashed = Date.now();
    const cdp = await ctx.newCDPSession(a);
    void cdp.send("Page.crash").catch(() => undefined);
    const log = await ended(b, "long");
    expect(log.error).toMatchObject({ apiError: true, status: 503, code: "worker_lost" });
    expect(log.end! - crashed).toBeLessThan(1000);
    // The fresh worker is configured from tab B's options: its replies start over.
    const again = await call(b, (t) => t.complete({}));
    expect(again.completion!.choices[0].message.content).toBe(words("w-", 3));
    expect(await call(b, (t) => t.workerInfo())).toEqual({ worker: "shared", tabs: 1 });
    await ctx.close();
  });

  it("errors keep status, type, code and param across the shared port", async () => {
    const ctx = await context();
    // One generation at a time, one waiting: a third request is a 429.
    const options = { replies: [words("long-", 300)], tokenDelayMs: 10, maxQueue: 1, batch: false };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    expect((await call(b, (t) => t.complete({ temperature: 9 }))).error).toMatchObject({ apiError: true, status: 400, type: "invalid_request_error", param: "temperature" });
    expect((await call(b, (t) => t.complete({ model: "no-such-model" }))).error).toMatchObject({ apiError: true, status: 404, code: "model_not_found" });
    await call(b, (t) => t.stream("bad", { temperature: 9 }));
    expect((await ended(b, "bad")).error).toMatchObject({ apiError: true, status: 400, param: "temperature" });
    const http = await call(b, (t) => t.fetchStatus({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "x" }], temperature: 9 }));
    expect(http.status).toBe(400);
    expect(http.body.error).toMatchObject({ param: "temperature", type: "invalid_request_error" });
    // One queue for all tabs (the first tab's maxQueue: 1): tab A runs, tab B waits, tab B's next is refused.
    await call(a, (t) => t.stream("long"));
    await chunksOf(a, "long", 1);
    await call(b, (t) => t.stream("queued"));
    await waiting(a, 1);
    expect((await call(b, (t) => t.complete({}))).error).toMatchObject({ apiError: true, status: 429, code: "queue_full" });
    await ctx.close();
  });

  it("client.terminate() leaves the shared worker: its requests stop, the other tab's go on, and its next request joins again", async () => {
    const ctx = await context();
    // One generation at a time: the other tab's request waits in the queue.
    const options = { replies: [words("a-", 400), words("b-", 5), words("again-", 3)], tokenDelayMs: 10, batch: false };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    await call(a, (t) => t.stream("a"));
    await chunksOf(a, "a", 2);
    await call(b, (t) => t.stream("b"));
    await waiting(b, 1);
    const left = Date.now();
    await call(a, (t) => t.terminate());
    expect((await ended(a, "a")).error).toMatchObject({ apiError: true, status: 503, code: "worker_lost" });
    const logB = await ended(b, "b");
    expect(logB).toMatchObject({ error: null, text: words("b-", 5) });
    expect(logB.first! - left).toBeLessThan(1000);
    // Same worker, same engine: the next reply in its list.
    expect((await call(a, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("again-", 3));
    expect(await call(a, (t) => t.workerInfo())).toEqual({ worker: "shared", tabs: 2 });
    await ctx.close();
  });

  it("a later tab whose options differ joins the running engine and is told which of its options were not applied", async () => {
    const ctx = await context();
    const a = await tab(ctx, { replies: replies(3, 3), maxQueue: 4 });
    expect((await call(a, (t) => t.complete({}))).error).toBeNull();
    const b = await tab(ctx, { replies: replies(3, 3), maxQueue: 9 });
    expect((await call(b, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("r1-", 3));
    expect(await call(b, (t) => t.warnings)).toEqual([expect.stringMatching(/configured by another tab; this tab's options maxQueue differ from its and were not applied/)]);
    expect(await call(a, (t) => t.warnings)).toEqual([]);
    await ctx.close();
  });

  it("a tab that asks for another engine than the one the shared worker runs gets a 409 naming `engine`", async () => {
    const ctx = await context();
    const a = await tab(ctx, { replies: replies(2, 3) });
    expect((await call(a, (t) => t.complete({}))).error).toBeNull();
    const b = await tab(ctx, { replies: [words("mine-", 3)] }); // another scripted engine
    expect((await call(b, (t) => t.complete({}))).error).toMatchObject({ apiError: true, status: 409, code: "shared_worker_config_conflict", param: "engine" });
    const c = await tab(ctx, {}); // the web-llm engine
    expect((await call(c, (t) => t.complete({}))).error).toMatchObject({ apiError: true, status: 409, code: "shared_worker_config_conflict", param: "engine" });
    expect((await call(c, (t) => t.complete({}))).error).toMatchObject({ type: "invalid_request_error", message: expect.stringMatching(/runs .*a scripted engine.*asked for web-llm/) });
    // Tab A is served on as before.
    expect((await call(a, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("r1-", 3));
    await ctx.close();
  });

  it("two tabs' conversations stay apart: KV reuse follows the conversation, and no prompt holds another tab's text", async () => {
    const ctx = await context();
    const a = await tab(ctx, { custom: true });
    const b = await tab(ctx, { custom: true });
    const turn = async (page: Page, messages: unknown[]) => {
      const result = await call(page, (t, m) => t.complete({ messages: m }), messages);
      return { completion: result.completion! };
    };
    const first = [{ role: "user", content: "secret of tab A" }];
    const a1 = await turn(a, first);
    const a2 = await turn(a, [...first, a1.completion.choices[0].message, { role: "user", content: "and then?" }]);
    expect(a2.completion.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0); // same conversation: reused
    const b1 = await turn(b, [{ role: "user", content: "tab B asks" }]);
    // Prompt caching shares only tokens B's own prompt renders: the template's opening `<start> <user>`.
    expect(b1.completion.usage.prompt_tokens_details.cached_tokens).toBeLessThanOrEqual(2);
    const report = await call(b, (t) => t.engineReport());
    const promptB = report.prompts[report.prompts.length - 1].join("\n");
    expect(promptB).toContain("tab B asks");
    expect(promptB).not.toContain("secret of tab A");
    await ctx.close();
  });

  it("where SharedWorker is missing, a dedicated worker serves the tab, and says so once", async () => {
    const ctx = await context();
    const page = await tab(ctx, { replies: replies(3, 3) }, () => {
      delete (window as unknown as { SharedWorker?: unknown }).SharedWorker;
    });
    await call(page, (t, o) => t.connect(o), { replies: replies(3, 3) }); // a second client: no second notice
    const info = await call(page, (t) => t.workerInfo());
    expect(info).toMatchObject({ worker: "dedicated", tabs: 1, fallback: expect.stringMatching(/no SharedWorker/) });
    expect(await call(page, (t) => t.gpuInfo())).toMatchObject({ worker: "dedicated" });
    expect((await call(page, (t) => t.complete({}))).completion!.choices[0].message.content).toBe(words("r0-", 3));
    expect((await call(page, (t) => t.info)).filter((line) => /SharedWorker/.test(line))).toHaveLength(1);
    await ctx.close();
  });
});
