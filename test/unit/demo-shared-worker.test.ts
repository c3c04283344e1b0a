/**
 * The demo built with `vite build` (so the library's
 * `new SharedWorker(new URL(…), { type: "module" })` goes through a bundler)
 * with `?worker=shared`, in two pages of one origin: the engine-worker panel
 * says the shared worker serves them and counts the tabs, a chat works through
 * it, and the count drops when a tab closes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { chromium, type Browser, type Page } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { buildDemo, serveDemo, type DemoServer } from "../demo/build-and-serve.js";
import { HELLO_TURN, scriptedRecord } from "../demo/catalog.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo shared-worker tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

describe.skipIf(!hasChromium)("the demo with one engine for every tab", { timeout: 90_000 }, () => {
  let demo: DemoServer;
  let browser: Browser;
  let builtDir: string;

  beforeAll(async () => {
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/catalog.json": JSON.stringify([scriptedRecord("Qwen3-Demo-Hello", [HELLO_TURN], 5)]) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  const open = async (page: Page, query: string) => {
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${demo.url}/?catalog=/catalog.json&model=Qwen3-Demo-Hello${query}`);
    await page.locator("#worker-panel").waitFor({ timeout: 60_000 });
  };
  const tabsShown = (page: Page) => page.locator("#worker-tabs dd").textContent();

  it("counts the tabs the shared worker serves, answers through it, and counts down when a tab closes", async () => {
    const context = await browser.newContext();
    const first = await context.newPage();
    await open(first, "&worker=shared");
    expect(await first.locator("#worker-kind dd").textContent()).toBe("shared");
    expect(await first.locator("#worker-select").inputValue()).toBe("shared");
    // The second tab has no ?worker: the choice is remembered for the origin.
    const second = await context.newPage();
    await open(second, "");
    await expect.poll(() => tabsShown(second), { timeout: 10_000 }).toBe("2");
    await expect.poll(() => tabsShown(first), { timeout: 10_000 }).toBe("2");
    await second.locator("#prompt").fill("Hello?");
    await second.locator("#prompt").press("Enter");
    await expect.poll(() => second.locator(".chat .msg.assistant .content").last().textContent(), { timeout: 20_000 }).toContain(HELLO_TURN);
    await second.close();
    await expect.poll(() => tabsShown(first), { timeout: 10_000 }).toBe("1");
    await context.close();
  });

  it("stays on a dedicated worker by default", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await open(page, "");
    expect(await page.locator("#worker-kind dd").textContent()).toBe("dedicated");
    expect(await tabsShown(page)).toBe("1");
    await context.close();
  });
});
