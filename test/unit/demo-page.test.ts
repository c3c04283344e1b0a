/**
 * The demo page, built with `vite build` and served from 127.0.0.1, driven in
 * headless Chromium (WebGPU on SwiftShader): the GPU panel, a scripted
 * Qwen3-format model answering with reasoning and a tool call, stop, and a
 * generated model downloaded by the real downloader, then listed and deleted
 * in the cache manager. Screenshots go to $DEMO_SCREENSHOTS (e.g.
 * docs/screenshots) when set, else to a temporary folder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { chromium, type Browser, type Page } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { buildDemo, serveDemo, type DemoServer } from "../demo/build-and-serve.js";
import { demoCatalog } from "../demo/catalog.js";
import { startArtifactServer, type ArtifactServer } from "../support/artifact-server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo-page tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const shots = resolve(process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), "webgpu-openai-demo-screenshots"));

describe.skipIf(!hasChromium)("the demo page in Chromium", { timeout: 60_000 }, () => {
  let artifacts: ArtifactServer;
  let demo: DemoServer;
  let browser: Browser;
  let generatedId: string;
  let builtDir: string;
  /**
   * One page for the tests that need WebGPU, used in order (as a person
   * would): each page load parses web-llm's bundle in the page and the
   * worker, which is most of this file's time.
   */
  let page: Page;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    artifacts = await startArtifactServer();
    // 12 shards of 512 KB: big enough for a visible progress bar, small enough to be quick.
    const created = await (await fetch(`${artifacts.url}/__control/model`, { method: "POST", body: JSON.stringify({ shards: 12, shardBytes: 512 * 1024 }) })).json();
    generatedId = created.record.model_id;
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/catalog.json": JSON.stringify(demoCatalog(created.record)) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${demo.url}/?catalog=/catalog.json&model=Qwen3-Demo-Tools`);
    await page.locator("#gpu-panel").waitFor({ timeout: 60_000 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await artifacts?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  async function ask(text: string) {
    await page.locator("#prompt").fill(text);
    await page.locator("#prompt").press("Enter");
  }

  it("shows the adapter: SwiftShader, no shader-f16", async () => {
    expect(await page.locator("#gpu-architecture dd").textContent()).toBe("swiftshader");
    expect(await page.locator("#gpu-f16 dd").textContent()).toMatch(/^no/);
    // Without shader-f16 the default model gets its f32 variant.
    const row = page.locator("#gpu-panel .fit tr", { has: page.locator("td", { hasText: /^Qwen3-0\.6B$/ }) });
    expect(await row.locator("td").nth(1).textContent()).toBe("q4f32_1");
  });

  it("streams a reply with a reasoning block and a tool call whose result card appears, then answers with the result", async () => {
    expect(await page.locator("#model-select").inputValue()).toBe("Qwen3-Demo-Tools");
    await ask("What is 2+2?");
    // While it streams, the reasoning block is open and fills up.
    const streamingReasoning = page.locator(".msg.assistant.streaming details.reasoning[open] .reasoning-body");
    await expect.poll(() => streamingReasoning.textContent(), { timeout: 10_000 }).toContain("calculator");

    const card = page.locator(".tool-card[data-tool=calculator]").first();
    await card.waitFor({ timeout: 15_000 });
    await expect.poll(() => card.locator(".tool-args").textContent()).toContain('"expression": "2+2"');
    await expect.poll(() => card.locator(".tool-result").textContent(), { timeout: 10_000 }).toContain('"result": 4');

    const answer = page.locator(".msg.assistant .content strong", { hasText: "4" });
    await answer.waitFor({ timeout: 15_000 });
    await page.locator("#send:not([disabled])").waitFor();
    // Finished replies keep their reasoning, collapsed, and show their metrics.
    expect(await page.locator(".msg.assistant details.reasoning:not([open])").count()).toBe(2);
    expect(await page.locator(".msg.assistant .content").last().innerHTML()).not.toContain("<think>");
    expect(await page.locator(".msg.assistant .metrics").last().textContent()).toMatch(/TTFT \d+ ms · [\d.]+ tok\/s/);
    await page.locator(".msg.assistant details.reasoning").first().evaluate((d) => ((d as HTMLDetailsElement).open = true));
    await page.locator(".chat .log").evaluate((log) => (log.scrollTop = 0));
    await page.screenshot({ path: join(shots, "chat-reasoning-tool-call.png") });
  });

  it("edits a previous message and answers again from there; regenerate redoes the last answer", async () => {
    const users = page.locator(".chat .msg.user");
    const assistants = page.locator(".chat .msg.assistant");
    await users.first().locator("button", { hasText: "Edit" }).click();
    await page.locator(".edit-box").fill("What is 3+3, roughly?");
    await page.locator(".edit-box").press("Enter");
    await page.locator("#send:not([disabled])").waitFor({ timeout: 20_000 });
    expect(await users.allTextContents()).toEqual([expect.stringContaining("What is 3+3, roughly?")]);
    // The scripted model answers again with its tool round and its answer: two assistant turns, not four.
    await expect.poll(() => assistants.count()).toBe(2);

    await page.locator("button.regenerate").click();
    await page.locator("#send:not([disabled])").waitFor({ timeout: 20_000 });
    await expect.poll(() => assistants.count()).toBe(2);
    expect(await users.count()).toBe(1);
    expect(await page.locator(".chat .tool-card .tool-result").last().textContent()).toContain('"result": 4');
  });

  it("runs the conversation through the unchanged OpenAI SDK in the drop-in view", async () => {
    await page.locator("#model-select").selectOption("Qwen3-Demo-Hello");
    await page.locator("[role=tab]", { hasText: "OpenAI SDK" }).click();
    await page.locator("#dropin-run").click();
    await expect.poll(() => page.locator("#dropin-output").textContent(), { timeout: 15_000 }).toBe("Hello from the unchanged OpenAI SDK.");
    expect(await page.locator("#dropin pre.snippet").textContent()).toContain("fetch: local.fetch");
    // the same conversation through openai.responses (the Responses API over client.fetch)
    await page.locator("#dropin-api").selectOption("responses");
    expect(await page.locator("#dropin pre.snippet").textContent()).toContain("openai.responses.create");
    await page.locator("#dropin-output").evaluate((element) => { element.textContent = ""; });
    await page.locator("#dropin-run").click();
    await expect.poll(() => page.locator("#dropin-output").textContent(), { timeout: 15_000 }).toBe("Hello from the unchanged OpenAI SDK.");
    await page.locator("#dropin-api").selectOption("chat");
    await page.locator("[role=tab]", { hasText: "Chat" }).click();
  });

  it("Documents: pasted text and files become passages, embedded with a progress bar; a question retrieves the closest with scores and the chat model answers from them", async () => {
    const sentence = (topic: string, i: number) => `Paragraph ${i} covers ${topic} in detail with enough words to stand alone as one passage for retrieval and ranking here.`;
    const filler = (topic: string, n: number) => Array.from({ length: n }, (_, i) => `${sentence(topic, i)} ${sentence(topic, i + 100)}`);
    const manual = [
      "The warranty lasts two years from the date of purchase and covers manufacturing defects of the kettle, its base and its lid, but not limescale or accidental damage.",
      ...filler("descaling kettles with vinegar", 5),
    ].join("\n\n");
    await page.locator("#model-select").selectOption("Qwen3-Demo-Docs");
    await page.locator("[role=tab]", { hasText: "Documents" }).click();
    expect(await page.locator("#embed-model").inputValue()).toBe("Demo-Embed-MLC-b4");
    await page.locator("#doc-text").fill(manual);
    await page.locator("#doc-add").click();
    await page.locator("#doc-files").setInputFiles({ name: "recipes.txt", mimeType: "text/plain", buffer: Buffer.from(filler("baking sourdough bread", 6).join("\n\n")) });
    // Dropped on the paste box, as from the desktop.
    await page.locator("#doc-text").evaluate((box, text) => {
      const data = new DataTransfer();
      data.items.add(new File([text], "garden.md", { type: "text/markdown" }));
      box.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
    }, filler("pruning roses in spring", 6).join("\n\n"));
    await expect.poll(() => page.locator("#doc-list li").allTextContents()).toEqual([
      expect.stringContaining("Pasted text 1"),
      expect.stringContaining("recipes.txt"),
      expect.stringContaining("garden.md"),
    ]);

    // The bar's values as they change, to see it move rather than jump.
    await page.locator("#doc-progress").evaluate((bar) => {
      const seen: number[] = [];
      (window as unknown as { progressSeen: number[] }).progressSeen = seen;
      new MutationObserver(() => seen.push((bar as HTMLProgressElement).value)).observe(bar, { attributes: true });
      const original = Object.getOwnPropertyDescriptor(HTMLProgressElement.prototype, "value")!;
      Object.defineProperty(bar, "value", { get: () => original.get!.call(bar), set: (v: number) => (seen.push(v), original.set!.call(bar, v)) });
    });
    await page.locator("#doc-embed").click();
    await expect.poll(() => page.locator("#doc-progress-text").textContent(), { timeout: 20_000 }).toMatch(/^18 \/ 18 passages embedded in [\d.]+ s$/);
    const seen = await page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen.filter((v) => v > 0));
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.at(-1)).toBe(1);

    await page.locator("#doc-question").fill("How long does the warranty last?");
    await page.locator("#doc-ask").click();
    const passages = page.locator("#doc-results li.passage");
    await expect.poll(() => passages.count(), { timeout: 10_000 }).toBe(3);
    expect(await passages.first().getAttribute("data-source")).toBe("Pasted text 1");
    expect(await passages.first().locator("p").textContent()).toContain("The warranty lasts two years");
    const scores = (await passages.locator(".score").allTextContents()).map(Number);
    expect(scores.every((s) => s >= -1 && s <= 1)).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores[0]).toBeGreaterThan(scores[1]);
    await expect.poll(() => page.locator("#doc-answer").textContent(), { timeout: 15_000 }).toBe("The warranty lasts two years from the date of purchase [1].");
    expect(await page.locator("#doc-answer strong").textContent()).toBe("two years");
    expect(await page.locator("#doc-status").textContent()).toBe("");
    await page.screenshot({ path: join(shots, "documents-retrieval.png"), fullPage: true });
    await page.locator("[role=tab]", { hasText: "Chat" }).click();
  });

  it("stops a reply mid-stream", async () => {
    await page.locator("#model-select").selectOption("Qwen3-Demo-Long");
    await ask("Count for me.");
    const content = page.locator(".msg.assistant.streaming .content");
    await expect.poll(() => content.textContent(), { timeout: 10_000 }).toContain("word5");
    await page.locator("#stop").click();
    const last = page.locator(".chat .msg.assistant").last();
    await expect.poll(() => last.locator(".metrics").textContent(), { timeout: 10_000 }).toContain("finish: stopped");
    const text = (await last.locator(".content").textContent()) ?? "";
    expect(text).toContain("word5");
    expect(text).not.toContain("word399");
    expect(await page.locator("#send").isDisabled()).toBe(false);
  });

  it("downloads a generated model with the real downloader (bar to 100%), lists it in the cache manager and deletes it", async () => {
    await page.locator("#model-select").selectOption(generatedId);
    // Hold the last shards back until the in-progress screenshot is taken.
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    await page.context().route(/params_shard_(9|10|11)\.bin$/, async (route) => {
      await held;
      await route.continue();
    });
    await page.locator("#download").click();
    const bar = page.locator("#download-progress");
    await expect.poll(async () => Number(await bar.evaluate((b) => (b as HTMLProgressElement).value)), { timeout: 20_000 }).toBeGreaterThan(0.3);
    expect(await page.locator("#download-text").textContent()).toMatch(/Download: [\d.]+ MB \/ [\d.]+ MB · \d+% · /);
    await page.screenshot({ path: join(shots, "download-in-progress.png") });
    release();

    await expect.poll(async () => Number(await bar.evaluate((b) => (b as HTMLProgressElement).value)), { timeout: 20_000 }).toBe(1);
    expect(await page.locator("#download-text").textContent()).toContain("100%");
    await page.context().unrouteAll({ behavior: "wait" });
    // The shards are fake, so web-llm itself cannot run the model; the download is what this checks.
    const row = page.locator(`#cache-list li[data-model="${generatedId}"]`);
    await row.waitFor({ timeout: 20_000 });
    // Whatever web-llm made of the fake model, the page says how the load ended.
    // (here: "web-llm load failed: CompileError: …", the generated model library being a stub).
    expect(await page.locator("#download-status").textContent()).not.toBe("");
    expect(await row.textContent()).not.toContain("incomplete");
    await row.locator("button.delete").click();
    await row.waitFor({ state: "detached", timeout: 10_000 });
    expect(await page.locator("#model-cache-state").textContent()).toBe("not downloaded");
  });

  it("explains what to do when the browser has no WebGPU", async () => {
    const noGpu = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs.filter((a) => a !== "--enable-unsafe-webgpu") });
    try {
      const page = await noGpu.newPage({ viewport: { width: 1000, height: 760 } });
      await page.goto(`${demo.url}/`);
      await page.locator("#no-webgpu").waitFor({ timeout: 30_000 });
      expect(await page.locator("#no-webgpu .reason").textContent()).toMatch(/WebGPU/);
      expect(await page.locator("#no-webgpu ol").textContent()).toMatch(/chrome:\/\/gpu/);
      await page.screenshot({ path: join(shots, "no-webgpu.png") });
    } finally {
      await noGpu.close();
    }
  });
});
