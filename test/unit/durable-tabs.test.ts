/**
 * Stored responses and background generation across real page reloads, in
 * headless Chromium driven with playwright, for both worker kinds and both
 * majors of the unchanged openai SDK (v6 and v7) on client.fetch: it
 * continues a previous_response_id chain across two reloads; a background
 * response keeps going (or resumes in the next worker) and a stream
 * reattached after the reload with starting_after gets every later event
 * once, in order, ending with the response.completed an uninterrupted run
 * gives; polling and cancel; two tabs following one background response; the
 * Agents SDK's previousResponseId across a reload; faults (a reload mid-write,
 * a quota error reported to the app through either worker, a damaged record).
 * The pages are test/durable-tabs/index.html on a Vite dev server; each test
 * has its own browser context (so its own shared worker) and its own database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright";
import { createServer, type ViteDevServer } from "vite";
import { chromiumArgs } from "../../vite.config.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`durable-responses tab tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const repo = resolve(import.meta.dirname, "../..");
/** The openai SDK majors the pages drive (`openai` and the `openai-v7` alias), by the version each sends in its requests' headers. */
const SDKS = (["v6", "v7"] as const).map((sdk) => ({
  sdk,
  version: (JSON.parse(readFileSync(resolve(repo, `node_modules/${sdk === "v6" ? "openai" : "openai-v7"}/package.json`), "utf8")) as { version: string }).version,
}));
const WORDS = Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ");
const LONG_WORDS = Array.from({ length: 240 }, (_, i) => `w${i}`).join(" ");

type Event = { type: string; sequence_number: number; response?: { id: string; status: string } };
type Log = { events: Event[]; done: boolean; error: string | null };
type Tab = {
  connect(options: Record<string, unknown>): boolean;
  create(body: Record<string, unknown>): Promise<{ id: string; status: string; output_text: string }>;
  retrieve(id: string): Promise<{ id: string; status: string; output_text: string; incomplete_details: unknown; error: unknown }>;
  cancel(id: string): Promise<{ id: string; status: string; output_text: string }>;
  follow(name: string, id: string, startingAfter?: number): boolean;
  followHelper(name: string, id: string, startingAfter: number): boolean;
  finals: Record<string, { id: string; status: string; output_text: string } | null>;
  logs: Record<string, Log>;
  warnings: string[];
  sdkVersions: string[];
  delete(id: string): Promise<boolean>;
  attempt(name: "create" | "retrieve", ...args: unknown[]): Promise<{ value: any; error: { status: number | null; code: string | null; message: string } | null }>;
  damage(databaseName: string, record: { id: string; [key: string]: unknown }): Promise<boolean>;
  loggedThrough(databaseName: string, id: string): Promise<number>;
  agent(input: string, previousResponseId?: string): Promise<{ lastResponseId: string | null; finalOutput: string; inputTokens: number | null }>;
  storeErrors: Array<{ isApiError: boolean; status: number; code: string | null | undefined; message: string }>;
  send(body: Record<string, unknown>): boolean;
  list(): Promise<Array<{ id: string; status: string }>>;
  inputLength(id: string): Promise<number>;
  stream(body: Record<string, unknown>): Promise<{ id: string; types: string[] }>;
  usage(): Promise<number>;
};

/** Ids are random: every id replaced by its place of first appearance, times zeroed, the run's performance counters left out (a resumed run decodes less). */
function canon(value: unknown): string {
  const ids = new Map<string, string>();
  return JSON.stringify(value, (key, v) => (key === "x_webgpu" ? undefined : v))
    .replace(/"(resp|msg|rs|fc|call)_[A-Za-z0-9]+"/g, (m) => (ids.has(m) ? ids.get(m)! : (ids.set(m, `"id${ids.size}"`), `"id${ids.size - 1}"`)))
    .replace(/"(created_at|completed_at)":\d+/g, '"$1":0');
}

describe.skipIf(!hasChromium)("durable responses across page reloads", { timeout: 120_000 }, () => {
  let server: ViteDevServer;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    server = await createServer({
      root: repo,
      configFile: resolve(repo, "vite.config.ts"),
      cacheDir: resolve(repo, "node_modules/.vite-durable-tabs"),
      logLevel: "warn",
      clearScreen: false,
      server: { host: "127.0.0.1", port: 0, strictPort: false, hmr: false },
      optimizeDeps: { entries: ["test/durable-tabs/*.ts"], include: ["comlink", "idb-keyval", "openai", "openai-v7", "@openai/agents"] },
    });
    await server.listen();
    base = server.resolvedUrls!.local[0].replace(/\/$/, "");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const call = <T>(page: Page, fn: (tab: Tab, arg: any) => T | Promise<T>, arg?: unknown): Promise<T> =>
    page.evaluate(([source, a]) => new Function("tab", "arg", `return (${source})(tab, arg)`)((window as unknown as { tab: Tab }).tab, a), [fn.toString(), arg] as const) as Promise<T>;

  async function open(page: Page, options: Record<string, unknown>): Promise<Page> {
    await page.goto(`${base}/test/durable-tabs/index.html`);
    await page.waitForFunction(() => (window as unknown as { tab?: { ready: boolean } }).tab?.ready === true, null, { timeout: 60_000 });
    await call(page, (t, o) => t.connect(o), options);
    return page;
  }

  async function tab(ctx: BrowserContext, options: Record<string, unknown>): Promise<Page> {
    const page = await ctx.newPage();
    page.on("pageerror", (error) => console.error("page error:", error.message));
    return open(page, options);
  }

  async function reload(page: Page, options: Record<string, unknown>): Promise<Page> {
    await page.reload();
    await page.waitForFunction(() => (window as unknown as { tab?: { ready: boolean } }).tab?.ready === true, null, { timeout: 60_000 });
    await call(page, (t, o) => t.connect(o), options);
    return page;
  }

  async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting; last value: ${JSON.stringify(value).slice(0, 400)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const logOf = (page: Page, name: string) => call(page, (t, n) => t.logs[n] ?? null, name) as Promise<Log | null>;
  const finished = (page: Page, name: string) => until(() => logOf(page, name), (log) => log?.done === true) as Promise<Log>;

  /** The events of the same background request run without interruption (its own context and database). */
  async function uninterrupted(worker: true | "shared", sdk: "v6" | "v7"): Promise<Event[]> {
    const ctx = await browser.newContext();
    const page = await tab(ctx, { sdk, worker, replies: [WORDS], tokenDelayMs: 1, databaseName: "reference" });
    const { id } = await call(page, (t) => t.create({ input: "count", background: true }));
    await call(page, (t, i) => t.follow("all", i), id);
    const log = await finished(page, "all");
    await ctx.close();
    return log.events;
  }

  /** Every request of the page went through the SDK the test asked for. */
  const expectSdk = async (page: Page, version: string) => expect(await call(page, (t) => t.sdkVersions)).toEqual([version]);

  for (const { sdk, version, worker } of SDKS.flatMap((one) => ([true, "shared"] as const).map((worker) => ({ ...one, worker })))) {
    const kind = `${worker === true ? "dedicated worker" : "shared worker"}, openai ${version}`;

    it(`a 4-turn previous_response_id chain across two page reloads (${kind})`, async () => {
      const ctx = await browser.newContext();
      const options = (replies: string[]) => ({ sdk, worker, replies, databaseName: "chain" });
      const page = await tab(ctx, options(["r1", "r2"]));
      const t1 = await call(page, (t) => t.create({ input: "turn one" }));
      const t2 = await call(page, (t, prev) => t.create({ input: "turn two", previous_response_id: prev }), t1.id);
      await reload(page, options(["r3"]));
      const t3 = await call(page, (t, prev) => t.create({ input: "turn three", previous_response_id: prev }), t2.id);
      await reload(page, options(["r4"]));
      const t4 = await call(page, (t, prev) => t.create({ input: "turn four", previous_response_id: prev }), t3.id);
      expect([t1, t2, t3, t4].map((r) => r.output_text)).toEqual(["r1", "r2", "r3", "r4"]);
      expect((await call(page, (t, id) => t.retrieve(id), t1.id)).output_text).toBe("r1");
      await expectSdk(page, version);
      await ctx.close();
    });

    it(`a background stream reattached after a reload with starting_after: each later event once, in order; completed as an uninterrupted run (${kind})`, async () => {
      const ctx = await browser.newContext();
      const options = { sdk, worker, replies: [WORDS], tokenDelayMs: 20, databaseName: "background" };
      const page = await tab(ctx, options);
      const { id, status } = await call(page, (t) => t.create({ input: "count", background: true }));
      expect(status).toBe("queued");
      await call(page, (t, i) => t.follow("before", i), id);
      const before = (await until(() => logOf(page, "before"), (log) => (log?.events.length ?? 0) >= 25))!.events;
      const cut = before.at(-1)!.sequence_number;
      // The reload stops the worker: the next one continues from the event log, once it holds every event this tab saw.
      await until(() => call(page, (t, a) => t.loggedThrough(a.name, a.id), { name: options.databaseName, id }), (last) => last >= cut);
      await reload(page, { ...options, tokenDelayMs: 1 });
      await call(page, (t, a) => t.follow("after", a.id, a.cut), { id, cut });
      await call(page, (t, a) => t.followHelper("helper", a.id, a.cut), { id, cut });
      const after = (await finished(page, "after")).events;
      expect(after[0].sequence_number).toBe(cut + 1);
      const all = [...before, ...after];
      expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
      expect(after.at(-1)!.type).toBe("response.completed");
      // Continued after the reply's journaled start (prefilled with the prompt), not regenerated from the beginning.
      const resumed = (after.at(-1) as unknown as { response: { x_webgpu: { resumed?: { reply_tokens: number; prefilled_tokens: number } } } }).response.x_webgpu.resumed;
      expect(resumed?.reply_tokens).toBeGreaterThanOrEqual(before.filter((e) => e.type === "response.output_text.delta").length);
      expect(resumed?.prefilled_tokens).toBeGreaterThan(resumed!.reply_tokens);
      expect(canon(all)).toBe(canon(await uninterrupted(worker, sdk)));
      // The SDK's helper, responses.stream({ response_id, starting_after }), emits the same events and ends with the whole response.
      const helper = await finished(page, "helper");
      expect(helper.error).toBeNull();
      expect(helper.events.map((e) => [e.type, e.sequence_number])).toEqual(after.map((e) => [e.type, e.sequence_number]));
      expect(await call(page, (t) => t.finals.helper)).toEqual({ id, status: "completed", output_text: WORDS });
      expect((await call(page, (t, i) => t.retrieve(i), id)).output_text).toBe(WORDS);
      await expectSdk(page, version);
      await ctx.close();
    });

    it(`background + polling + cancel (${kind})`, async () => {
      const ctx = await browser.newContext();
      const page = await tab(ctx, { sdk, worker, replies: [WORDS, "after"], tokenDelayMs: 20, databaseName: "cancel" });
      const { id } = await call(page, (t) => t.create({ input: "count", background: true }));
      const running = await until(() => call(page, (t, i) => t.retrieve(i), id), (r) => r.status === "in_progress" && (r.output_text ?? "").length > 10);
      expect(WORDS.startsWith(running.output_text)).toBe(true);
      const cancelled = await call(page, (t, i) => t.cancel(i), id);
      expect(cancelled.status).toBe("cancelled");
      expect(cancelled.output_text.length).toBeLessThan(WORDS.length);
      expect((await call(page, (t, i) => t.retrieve(i), id)).status).toBe("cancelled");
      expect((await call(page, (t) => t.create({ input: "next" }))).output_text).toBe("after");
      await expectSdk(page, version);
      await ctx.close();
    });
  }

  it("two tabs reattach to one background response on the shared worker: both get every event, the same ones", async () => {
    const ctx = await browser.newContext();
    const options = { worker: "shared", replies: [WORDS], tokenDelayMs: 10, databaseName: "two-tabs" };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    const { id } = await call(a, (t) => t.create({ input: "count", background: true }));
    await call(a, (t, i) => t.follow("a", i), id);
    await until(() => logOf(a, "a"), (log) => (log?.events.length ?? 0) >= 10);
    await call(b, (t, i) => t.follow("b", i), id);
    const [logA, logB] = [await finished(a, "a"), await finished(b, "b")];
    expect(logA.error).toBeNull();
    expect(logB.events).toEqual(logA.events);
    expect(logA.events.at(-1)!.type).toBe("response.completed");
    await ctx.close();
  });

  it("another tab cancels a background response that this tab's dedicated worker generates", async () => {
    const ctx = await browser.newContext();
    const options = { worker: true, replies: [WORDS], tokenDelayMs: 20, databaseName: "cancel-elsewhere" };
    const a = await tab(ctx, options);
    const b = await tab(ctx, options);
    const { id } = await call(a, (t) => t.create({ input: "count", background: true }));
    await until(() => call(b, (t, i) => t.retrieve(i), id), (r) => r.status === "in_progress");
    // Tab B follows the run of tab A's worker through its stored event log.
    await call(b, (t, i) => t.follow("b", i), id);
    await until(() => logOf(b, "b"), (log) => (log?.events.length ?? 0) >= 10);
    const cancelled = await call(b, (t, i) => t.cancel(i), id);
    expect(cancelled.status).toBe("cancelled");
    expect((await call(a, (t, i) => t.retrieve(i), id)).status).toBe("cancelled");
    const followed = await finished(b, "b");
    expect(followed.error).toBeNull();
    expect(followed.events.map((e) => e.sequence_number)).toEqual(followed.events.map((_, i) => i));
    await ctx.close();
  });

  it("faults: a reload during a response's write leaves it whole or absent; a quota error while persisting is reported and the stream completes", async () => {
    const ctx = await browser.newContext();
    const big = "x".repeat(4_000_000);
    const options = { worker: true, replies: ["ok", "ok", "ok", "ok"], databaseName: "faults" };
    const page = await tab(ctx, options);
    await call(page, (t) => t.create({ input: "small" }));
    // Reload while the big response is being generated and written.
    await call(page, (t, text) => t.send({ input: text }), big);
    await new Promise((r) => setTimeout(r, 150));
    await reload(page, options);
    const listed = await call(page, (t) => t.list());
    expect(listed.length).toBeGreaterThanOrEqual(1);
    for (const { id } of listed) expect(await call(page, (t, i) => t.inputLength(i), id)).toBeGreaterThan(0); // every record reads whole
    for (const { status } of listed) expect(["completed", "incomplete"]).toContain(status);

    // A quota error while persisting. Chromium gives no way to shrink an origin's quota for IndexedDB from a test
    // (Storage.overrideQuotaForOrigin is not enforced on its writes), so a page whose host runs in it (worker: false)
    // has IndexedDB refuse large records with the QuotaExceededError it throws when full.
    const host = await tab(ctx, { worker: false, replies: ["all of it", "after"], databaseName: "faults" });
    await host.evaluate(() => {
      const put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function (value: unknown, key?: IDBValidKey) {
        if (JSON.stringify(value ?? null).length > 1_000_000) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
        return put.call(this, value, key);
      };
    });
    const streamed = await call(host, (t, text) => t.stream({ input: text }), "y".repeat(2_000_000));
    expect(streamed.types.at(-1)).toBe("response.completed");
    const warnings = await until(() => call(host, (t) => t.warnings), (w) => w.some((text) => text.includes(streamed.id)), 10_000);
    expect(warnings.find((text) => text.includes(streamed.id))).toContain("QuotaExceededError");
    expect(await call(host, (t) => t.storeErrors)).toMatchObject([{ isApiError: true, status: 507, code: "response_store_quota_exceeded" }]);
    // The store goes on: the next (small) response is stored.
    const small = await call(host, (t) => t.stream({ input: "small" }));
    expect(small.types.at(-1)).toBe("response.completed");
    expect((await call(host, (t, i) => t.retrieve(i), small.id)).status).toBe("completed");
    await ctx.close();
  });

  for (const worker of [true, "shared"] as const) {
    const kind = worker === true ? "dedicated worker" : "shared worker";

    it(`faults: a quota error (or another failed write) while the ${kind} persists a response: the stream completes and the app's onResponseStoreError hears of it${worker === "shared" ? " (in every tab)" : ""}`, async () => {
      const ctx = await browser.newContext();
      // The library's default worker on a disk that refuses records over 1 MB (test/durable-tabs/full-disk.ts).
      const options = { worker, fullDisk: true, replies: ["all of it", "failed", "after"], databaseName: "full-disk" };
      const page = await tab(ctx, options);
      const other = worker === "shared" ? await tab(ctx, options) : null;
      if (other) await call(other, (t) => t.list()); // a tab joins the shared worker with its client's first request
      const streamed = await call(page, (t, text) => t.stream({ input: text }), "y".repeat(2_000_000));
      expect(streamed.types.at(-1)).toBe("response.completed");
      const errors = await until(() => call(page, (t) => t.storeErrors), (e) => e.length > 0, 10_000);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ isApiError: true, status: 507, code: "response_store_quota_exceeded" });
      expect(errors[0].message).toContain(streamed.id);
      expect(errors[0].message).toContain("QuotaExceededError");
      // The shared worker's store is every tab's: the other tab hears of it too.
      if (other) expect(await until(() => call(other, (t) => t.storeErrors), (e) => e.length > 0, 10_000)).toEqual(errors);
      // Any other failed write: 500 response_store_write_failed, the response served all the same.
      const failed = await call(page, (t) => t.create({ input: "disk-error" }));
      expect(failed.output_text).toBe("failed");
      const both = await until(() => call(page, (t) => t.storeErrors), (e) => e.length > 1, 10_000);
      expect(both[1]).toMatchObject({ isApiError: true, status: 500, code: "response_store_write_failed" });
      expect(both[1].message).toContain(failed.id);
      // The store goes on: the next response is stored, with no further report.
      const small = await call(page, (t) => t.stream({ input: "small" }));
      expect(small.types.at(-1)).toBe("response.completed");
      expect((await call(page, (t, i) => t.retrieve(i), small.id)).output_text).toBe("after");
      expect(await call(page, (t) => t.storeErrors)).toHaveLength(2);
      await ctx.close();
    });
  }

  for (const worker of [true, "shared"] as const) {
    const kind = worker === true ? "dedicated worker" : "shared worker";

    it(`the Agents SDK in the page continues with previousResponseId across a page reload (${kind})`, async () => {
      const ctx = await browser.newContext();
      const options = (replies: string[]) => ({ sdk: "v7", worker, replies, databaseName: "agents" });
      const page = await tab(ctx, options(["Noted, Ada."]));
      const first = await call(page, (t) => t.agent("My name is Ada."));
      expect(first.finalOutput).toBe("Noted, Ada.");
      expect(first.lastResponseId).toMatch(/^resp_/);
      await reload(page, options(["Your name is Ada.", "I do not know."]));
      const next = await call(page, (t, id) => t.agent("What is my name?", id), first.lastResponseId);
      expect(next.finalOutput).toBe("Your name is Ada.");
      expect((await call(page, (t, id) => t.retrieve(id), next.lastResponseId)) as unknown).toMatchObject({ previous_response_id: first.lastResponseId, status: "completed" });
      // The model read the turn before the reload: the same question alone is a shorter prompt.
      const alone = await call(page, (t) => t.agent("What is my name?"));
      expect(next.inputTokens!).toBeGreaterThan(alone.inputTokens!);
      await ctx.close();
    });
  }

  for (const worker of [true, "shared"] as const) {
    const kind = worker === true ? "dedicated worker" : "shared worker";

    it(`faults: a damaged record read through the ${kind} is a clear 500 naming it; every other response is intact`, async () => {
      const ctx = await browser.newContext();
      const options = { worker, replies: ["good", "bad", "after"], databaseName: "damaged" };
      const page = await tab(ctx, options);
      const good = await call(page, (t) => t.create({ input: "one" }));
      const bad = await call(page, (t) => t.create({ input: "two" }));
      // The record as a crash mid-way through some other program's write could leave it; then the page reloads.
      await call(page, (t, id) => t.damage("damaged", { id, seq: 2, itemIds: [], data: { response: 42 } }), bad.id);
      await reload(page, { ...options, replies: ["after"] }); // a shared worker that outlived the reload answers "after" too
      const read = await call(page, (t, id) => t.attempt("retrieve", id), bad.id);
      expect(read.error).toMatchObject({ status: 500, code: "stored_response_corrupt" });
      expect(read.error!.message).toContain(bad.id);
      expect(read.error!.message).toContain("damaged");
      const continued = await call(page, (t, id) => t.attempt("create", { input: "three", previous_response_id: id }), bad.id);
      expect(continued.error).toMatchObject({ status: 500, code: "stored_response_corrupt" });
      // The rest is intact: the other response reads and continues; list leaves the damaged one out; delete removes it.
      expect((await call(page, (t, id) => t.retrieve(id), good.id)).output_text).toBe("good");
      expect((await call(page, (t, id) => t.create({ input: "three", previous_response_id: id }), good.id)).output_text).toBe("after");
      const listed = (await call(page, (t) => t.list())).map((r) => r.id);
      expect(listed).toContain(good.id);
      expect(listed).not.toContain(bad.id);
      await call(page, (t, id) => t.delete(id), bad.id);
      expect((await call(page, (t, id) => t.attempt("retrieve", id), bad.id)).error).toMatchObject({ status: 404 });
      await ctx.close();
    });
  }

  for (const worker of [true, "shared"] as const) {
    const kind = worker === true ? "dedicated workers: the first tab's worker generates, the other follows its stored events" : "shared worker";

    it(`two tabs reattach to one background response with starting_after, one after a reload: each gets every later event once, in order (${kind})`, async () => {
      const ctx = await browser.newContext();
      // Long enough (12 s) that the response is still running after tab B's reload on a loaded machine
      // (with 80 words, 4 s, a reload beside a real-engine run once came back after it had completed).
      const options = { worker, replies: [LONG_WORDS], tokenDelayMs: 50, databaseName: "two-reattach" };
      const a = await tab(ctx, options);
      const b = await tab(ctx, options);
      const { id } = await call(a, (t) => t.create({ input: "count", background: true }));
      await call(a, (t, i) => t.follow("a", i), id);
      await call(b, (t, i) => t.follow("before", i), id);
      const before = (await until(() => logOf(b, "before"), (log) => (log?.events.length ?? 0) >= 15))!.events;
      // Tab B reloads (its stream goes with the page) and reattaches after the last event it had; tab A reattaches a second stream from an earlier cut.
      await reload(b, options);
      const cut = before.at(-1)!.sequence_number;
      await call(b, (t, a) => t.follow("after", a.id, a.cut), { id, cut });
      await call(a, (t, i) => t.follow("a-from-5", i, 5), id);
      expect((await call(b, (t, i) => t.retrieve(i), id)).status).toBe("in_progress"); // both reattached to a running response
      const [all, after, fromFive] = [(await finished(a, "a")).events, (await finished(b, "after")).events, (await finished(a, "a-from-5")).events];
      for (const log of [all, after, fromFive]) expect(log.at(-1)!.type).toBe("response.completed");
      expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
      expect([...before, ...after]).toEqual(all);
      expect(fromFive).toEqual(all.slice(6));
      expect((await call(b, (t, i) => t.retrieve(i), id)).output_text).toBe(LONG_WORDS);
      await ctx.close();
    });
  }
});
