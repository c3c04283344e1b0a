/**
 * The demo's audio features in headless Chromium, on a scripted model that
 * takes audio: "Transcribe a file" with a generated WAV (streamed through
 * client.audio.transcriptions in the worker), and the chat's microphone with
 * Chromium's fake capture device (`--use-fake-device-for-media-stream`: a
 * beeping tone, recorded by MediaRecorder as WebM/Opus and decoded to PCM in
 * the worker). Screenshots go to $DEMO_SCREENSHOTS when set.
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
import { wavBytes } from "../support/wav.js";
import type { ModelRecord } from "../../src/models/record.js";
import { scriptedVoiceModel } from "../../src/testing.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo-audio tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const shots = resolve(process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), "webgpu-openai-demo-screenshots"));

const TRANSCRIPT = "Hello from a WAV file, transcribed in the worker.";
const SPOKEN_REPLY = "I heard a steady beep: no words in it.";

/** A scripted model that takes audio (Gemma 4's output format, as Gemma 4 E2B declares), and a text-only one. */
const audioCatalog: ModelRecord[] = [
  scriptedVoiceModel({ id: "Demo-Audio-q4f32_1-MLC", replies: [TRANSCRIPT, SPOKEN_REPLY], tokenDelayMs: 20 }),
  scriptedRecord("Qwen3-Demo-Hello", ["Hello."], 5),
];

describe.skipIf(!hasChromium)("the demo's audio in Chromium", { timeout: 90_000 }, () => {
  let demo: DemoServer;
  let browser: Browser;
  let builtDir: string;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/audio-catalog.json": JSON.stringify(audioCatalog) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...chromiumArgs, "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${demo.url}/?catalog=/audio-catalog.json&model=Demo-Audio`);
    await page.locator("#gpu-panel").waitFor({ timeout: 60_000 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  it("Transcribe a file: a WAV goes in, the transcript streams out, with token counts", async () => {
    await page.locator("[role=tab]", { hasText: "Transcribe" }).click();
    // Models that take audio only (the catalog's and Gemma 4's); the chat's model first when it takes audio.
    expect(await page.locator("#transcribe-model option").allTextContents()).toContain("Demo-Audio-q4f32_1-MLC");
    expect(await page.locator("#transcribe-model option").allTextContents()).not.toContain("Qwen3-Demo-Hello-q4f32_1-MLC");
    expect(await page.locator("#transcribe-model").inputValue()).toBe("Demo-Audio-q4f32_1-MLC");
    expect(await page.locator("#transcribe-run").isDisabled()).toBe(true);
    await page.locator("#transcribe-file").setInputFiles({ name: "hello.wav", mimeType: "audio/wav", buffer: Buffer.from(wavBytes({ seconds: 1.5 })) });
    await expect.poll(() => page.locator("#transcribe-status").textContent()).toMatch(/hello\.wav · \d+ KB — ready/);
    await page.locator("#transcribe-language").fill("en");
    await page.locator("#transcribe-run").click();
    // While it streams, the status says so and the run button waits.
    await expect.poll(() => page.locator("#transcribe-status").getAttribute("data-state"), { timeout: 15_000 }).toMatch(/loading|listening|done/);
    await expect.poll(() => page.locator("#transcribe-output").textContent(), { timeout: 15_000 }).toBe(TRANSCRIPT);
    // The last delta shows before the stream's end; the run button comes back once the status and usage are written.
    await page.locator("#transcribe-run:not([disabled])").waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator("#transcribe-status").getAttribute("data-state")).toBe("done");
    expect(await page.locator("#transcribe-usage").textContent()).toMatch(/^\d+ tokens in \(audio and instruction\) · \d+ out · [\d.]+ s$/);
    await page.screenshot({ path: join(shots, "transcribe-file.png") });
  });

  it("the chat's microphone records (fake device), sends the recording as input_audio and shows the reply", async () => {
    await page.locator("[role=tab]", { hasText: "Chat" }).click();
    await page.locator("#mic").click();
    await expect.poll(() => page.locator("#mic-status").getAttribute("data-state"), { timeout: 10_000 }).toBe("recording");
    await expect.poll(() => page.locator("#mic-status").textContent(), { timeout: 10_000 }).toMatch(/Recording 0:0[1-9]/);
    await page.screenshot({ path: join(shots, "chat-microphone-recording.png") });
    await page.locator("#mic").click();
    await page.locator(".chat .msg.user audio.voice").waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator(".chat .msg.assistant .content").last().textContent(), { timeout: 20_000 }).toBe(SPOKEN_REPLY);
    // The reply's last delta shows before its request ends; Send comes back with it, and the status goes idle then.
    await page.locator("#send:not([disabled])").waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator("#mic-status").getAttribute("data-state")).toBe("idle");
  });

  it("a model without audio: the microphone says so instead of recording", async () => {
    await page.locator("#model-select").selectOption("Qwen3-Demo-Hello");
    await page.locator("#mic").click();
    await expect.poll(() => page.locator("#mic-status").textContent()).toMatch(/Qwen3-Demo-Hello does not take audio/);
    expect(await page.locator("#mic").getAttribute("aria-pressed")).toBe("false");
  });
});
