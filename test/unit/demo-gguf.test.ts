/**
 * The demo's GGUF models and its "No WebGPU (CPU, llama.cpp)" mode in headless
 * Chromium, on the real wllama engine: the tiny generated GGUF
 * (support/gguf-writer.ts) served from 127.0.0.1 is added with `?gguf=`, the
 * picker shows its quantization and size (from the GGUF header, through
 * models.list), and a chat runs on it. A web-llm record whose `fallback` is
 * that GGUF runs on web-llm until the toggle turns CPU mode on; then the
 * engine label names wllama and the fallback, and the chat gets its reply
 * from llama.cpp.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { chromium, type Browser, type Page } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import type { ModelRecord } from "../../src/models/record.js";
import { buildDemo, serveDemo, type DemoServer } from "../demo/build-and-serve.js";
import { startGgufServer, type GgufServer } from "../support/gguf-server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo-gguf tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

/** A web-llm record (it would need WebGPU and a download) whose fallback is the tiny GGUF (`?gguf=…/tiny.gguf` → id "tiny"). */
const webLlmRecord: ModelRecord = {
  model: "https://models.invalid/Qwen3-Demo-Web-MLC",
  model_id: "Qwen3-Demo-Web-q4f32_1-MLC",
  model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 500,
  fallback: "tiny",
};

describe.skipIf(!hasChromium)("the demo's GGUF models and No-WebGPU mode in Chromium", { timeout: 90_000 }, () => {
  let demo: DemoServer;
  let gguf: GgufServer;
  let browser: Browser;
  let builtDir: string;
  let page: Page;

  beforeAll(async () => {
    gguf = await startGgufServer();
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/gguf-catalog.json": JSON.stringify([webLlmRecord]) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => console.error("page error:", error.message));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await gguf?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  /** A short, tool-free, greedy chat turn; resolves with the finished reply's text (random weights: tokens, not words). */
  async function chat(text: string): Promise<string> {
    await page.locator(".settings summary").click();
    await page.locator("#tools-enabled").uncheck();
    await page.locator("#max-tokens").fill("12");
    await page.locator("#temperature").fill("0");
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
    const reply = page.locator("#panel-0 .msg.assistant").last(); // the Chat tab (other tabs have replies too)
    // The metrics line comes with the finished reply: llama.cpp's tokens, 12 of them (max_tokens).
    await expect.poll(() => reply.locator(".metrics").textContent(), { timeout: 60_000 }).toMatch(/12 tokens .*finish: length/);
    return (await reply.textContent()) ?? "";
  }

  it("lists a pasted GGUF with its quantization and size, runs it on wllama, and shows a reply", async () => {
    await page.goto(`${demo.url}/?cpu=1&gguf=${encodeURIComponent(`${gguf.url}/tiny.gguf`)}`);
    await page.locator("#models-panel").waitFor({ timeout: 60_000 });
    expect(await page.locator("#model-select").inputValue()).toBe("tiny");
    // The header's quantization and the file's size, read by models.list().
    expect(await page.locator("#model-select option[value=tiny]").textContent()).toMatch(/^tiny · [A-Z0-9_]+ · \d[\d.]* [KM]?B/);
    await expect.poll(() => page.locator("#model-engine").textContent(), { timeout: 20_000 }).toMatch(/^wllama \((single|multi)-threaded\): tiny$/);
    expect(await page.locator("#cpu-mode").isChecked()).toBe(true);
    expect((await chat("hello world")).length).toBeGreaterThan(0);
  });

  it("runs a web-llm model's GGUF fallback once the No-WebGPU toggle is on", async () => {
    await page.goto(`${demo.url}/?catalog=/gguf-catalog.json&gguf=${encodeURIComponent(`${gguf.url}/tiny.gguf`)}&model=Qwen3-Demo-Web`);
    await page.locator("#models-panel").waitFor({ timeout: 60_000 });
    expect(await page.locator("#model-select").inputValue()).toBe("Qwen3-Demo-Web");
    await expect.poll(() => page.locator("#model-engine").textContent(), { timeout: 20_000 }).toBe("webllm");
    await page.locator("#cpu-mode").check(); // reloads with ?cpu=1
    await page.waitForURL(/[?&]cpu=1/);
    await page.locator("#models-panel").waitFor({ timeout: 60_000 });
    expect(await page.locator("#model-select").inputValue()).toBe("Qwen3-Demo-Web");
    await expect.poll(() => page.locator("#model-engine").textContent(), { timeout: 20_000 }).toMatch(/^wllama \((single|multi)-threaded\): tiny$/);
    // web-llm's record would fail (its URLs are .invalid): the reply is llama.cpp's, from the fallback.
    expect((await chat("hello world")).length).toBeGreaterThan(0);
  });
});
