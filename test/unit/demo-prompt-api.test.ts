/**
 * The demo's Prompt API view in headless Chromium, on a scripted model (no
 * download): a session created with initialPrompts (its load reported through
 * the monitor), a streamed reply, the context meter, clone() (the clone's
 * first prompt prefills only what is new: the page shows the prompt cache's
 * figures), and a RegExp-constrained prompt. Screenshots go to
 * $DEMO_SCREENSHOTS when set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { chromium, type Browser, type Page } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { buildDemo, serveDemo, type DemoServer } from "../demo/build-and-serve.js";
import { scriptedRecord } from "../demo/catalog.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo-prompt-api tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const shots = resolve(process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), "webgpu-openai-demo-screenshots"));

const REPLIES = ["Paris is the capital of France, on the Seine.", "Lyon is the third largest city.", "555-0199"];
/** A Qwen2.5-format scripted model (no reasoning), its replies in order. */
const catalog = [scriptedRecord("Qwen2.5-Demo-Prompt", REPLIES, 15)];

describe.skipIf(!hasChromium)("the demo's Prompt API view in Chromium", { timeout: 90_000 }, () => {
  let demo: DemoServer;
  let browser: Browser;
  let builtDir: string;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/prompt-catalog.json": JSON.stringify(catalog) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${demo.url}/?catalog=/prompt-catalog.json&model=Qwen2.5-Demo-Prompt`);
    await page.locator("#gpu-panel").waitFor({ timeout: 60_000 });
    await page.locator("[role=tab]", { hasText: "Prompt API" }).click();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  const meterValue = async () => Number(await page.locator("#pa-meter").getAttribute("value"));
  /**
   * The reply's last delta shows before its request has finished: the usage
   * chunk, the session's recount and only then the page's report and meter
   * follow. Send is disabled from the click until all of that is written, so
   * its return is the point where the report and the meter are this request's.
   */
  const requestDone = () => page.locator("#pa-send:not([disabled])").waitFor({ timeout: 15_000 });

  it("creates a session with initialPrompts and streams a reply; the context meter grows", async () => {
    await page.locator("#pa-system").fill("You answer questions about French geography in one sentence.");
    await page.locator("#pa-create").click();
    await expect.poll(() => page.locator("#pa-status").getAttribute("data-state"), { timeout: 30_000 }).toBe("ready");
    expect(await page.locator("#pa-status").textContent()).toContain("Qwen2.5-Demo-Prompt");
    const initial = await meterValue();
    expect(initial).toBeGreaterThan(5);
    expect(await page.locator("#pa-meter-text").textContent()).toMatch(new RegExp(`^${initial} / 8192 tokens of context$`));

    await page.locator("#pa-input").fill("What is the capital of France?");
    await page.locator("#pa-send").click();
    await expect.poll(() => page.locator(".pa-log:not([hidden]) .pa-assistant").last().textContent(), { timeout: 15_000 }).toBe(REPLIES[0]);
    await requestDone();
    await expect.poll(meterValue).toBeGreaterThan(initial + 10);
  });

  it("clone() branches the session; the clone's first prompt prefills only the new turn", async () => {
    const parentUsage = await meterValue();
    await page.locator("#pa-clone").click();
    // clone() resolves after the click returns; its option, selection and meter are written together.
    await page.locator("#pa-branch option").nth(1).waitFor({ state: "attached", timeout: 15_000 });
    await expect.poll(() => page.locator("#pa-branch option").count()).toBe(2);
    expect(await page.locator("#pa-branch").inputValue()).toBe("1");
    // The clone shows the parent's history and starts from its context.
    expect(await page.locator(".pa-log:not([hidden]) .pa-assistant").first().textContent()).toBe(REPLIES[0]);
    expect(await meterValue()).toBe(parentUsage);

    await page.locator("#pa-input").fill("And the third largest city?");
    await page.locator("#pa-send").click();
    await expect.poll(() => page.locator(".pa-log:not([hidden]) .pa-assistant").last().textContent(), { timeout: 15_000 }).toBe(REPLIES[1]);
    await requestDone();
    const report = (await page.locator("#pa-report").textContent()) ?? "";
    const [, prefilled, cached] = report.match(/(\d+) tokens prefilled, (\d+) from the prompt cache/) ?? [];
    expect(Number(cached)).toBeGreaterThanOrEqual(parentUsage - 2);
    expect(Number(prefilled)).toBeLessThan(20);

    // The parent did not get the clone's turn.
    await page.locator("#pa-branch").selectOption("0");
    expect(await page.locator(".pa-log:not([hidden]) .pa-assistant").count()).toBe(1);
    await page.screenshot({ path: join(shots, "prompt-api-clone.png") });
  });

  it("a RegExp-constrained prompt: the reply matches", async () => {
    await page.locator("#pa-constrain").check();
    await page.locator("#pa-input").fill("Make up a phone number.");
    await page.locator("#pa-send").click();
    const last = page.locator(".pa-log:not([hidden]) .pa-assistant").last();
    await expect.poll(() => last.textContent(), { timeout: 15_000 }).toMatch(/555-0199 ✓ matches/);
    await page.screenshot({ path: join(shots, "prompt-api-regexp.png") });
  });
});
