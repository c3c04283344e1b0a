/**
 * examples/vite-react as a user gets it: the example folder copied into a fresh
 * directory, its dependencies installed with the packed webgpu-openai in place
 * of `file:../..`, built by Vite with the example's own config (React plugin,
 * `worker.format: "es"`), served as static files and driven in headless
 * Chromium: a question, a streamed tool call run by the app, the answer; Stop
 * during a long reply; the load progress bar.
 *
 * The model is scripted: a Vite plugin resolves the example's `webgpu-openai`
 * import to a thin module that adds scripted records for `Qwen3-0.6B` (no GPU,
 * no download), so the example's code is built unchanged.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright";
import { build as viteBuild, type Plugin } from "vite";
import { chromiumArgs } from "../../vite.config.js";
import { packLibrary, repo, serveStatic } from "../installed/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const TOOL_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const ANSWER = "It is 18 °C and cloudy in Paris.";
const LONG = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");

const SHIM = `
import { createClient as createRealClient } from "webgpu-openai";
export * from "webgpu-openai";
const engine = { kind: "scripted", replies: ${JSON.stringify([TOOL_CALL, ANSWER, LONG])}, tokenDelayMs: 20, loadDelayMs: 600 };
const records = ["q4f16_1", "q4f32_1"].map((q) => ({
  model_id: "Qwen3-0.6B-" + q + "-MLC", model: "https://models.invalid/Qwen3-0.6B", model_lib: "https://models.invalid/none.wasm",
  vram_required_MB: 0, engine,
}));
export function createClient(options = {}) {
  return createRealClient({ ...options, models: [...(options.models ?? []), ...records] });
}
`;

/** Resolves `webgpu-openai` to the scripted shim everywhere but inside the shim itself. */
function scriptedModel(shim: string): Plugin {
  return {
    name: "scripted-model",
    enforce: "pre",
    resolveId(source, importer) {
      return source === "webgpu-openai" && importer !== shim ? shim : null;
    },
  };
}

let browser: Browser;
let app: string;
const cleanup: string[] = [];

describe.skipIf(!existsSync(CHROMIUM))("examples/vite-react, installed and built like a user's app", { timeout: 300_000 }, () => {
  beforeAll(async () => {
    const packDir = mkdtempSync(join(tmpdir(), "webgpu-openai-pack-"));
    cleanup.push(packDir);
    const pack = packLibrary(packDir);
    app = mkdtempSync(join(tmpdir(), "webgpu-openai-example-"));
    cleanup.push(app);
    cpSync(join(repo, "examples/vite-react"), app, { recursive: true, filter: (src) => !/node_modules|dist$/.test(src) });
    const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
    manifest.dependencies["webgpu-openai"] = `file:${pack.tarball}`;
    writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2));
    execFileSync(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-package-lock"], { cwd: app, stdio: "pipe" });
    const shim = join(app, "scripted-shim.js");
    writeFileSync(shim, SHIM);
    await viteBuild({ root: app, configFile: join(app, "vite.config.js"), logLevel: "error", plugins: [scriptedModel(shim)], cacheDir: join(app, "node_modules/.vite") });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  });

  it("asks, shows the model's tool call and its result, streams the answer, and stops a long reply on Stop", async () => {
    const server = await serveStatic(join(app, "dist"));
    const context = await browser.newContext();
    const errors: string[] = [];
    try {
      const page = await context.newPage();
      page.on("pageerror", (error) => void errors.push(error.message));
      await page.goto(`${server.url}/`);
      // The first request loads the (scripted) model: the progress bar shows while it loads (watched from before the click,
      // since on a busy machine the load may be over before a locator looks).
      await page.evaluate(() => {
        new MutationObserver(() => {
          if (document.querySelector("progress")) (globalThis as { sawProgress?: boolean }).sawProgress = true;
        }).observe(document.body, { childList: true, subtree: true });
      });
      await page.getByRole("button", { name: "Send" }).click();
      await expect.poll(() => page.getByTestId("tool-call").textContent(), { timeout: 30_000 }).toContain('get_weather({"city": "Paris"})');
      expect(await page.getByTestId("tool-call").textContent()).toContain('"celsius":18');
      await page.locator('li[data-role="assistant"]', { hasText: ANSWER }).waitFor({ timeout: 30_000 });
      expect(await page.evaluate(() => (globalThis as { sawProgress?: boolean }).sawProgress)).toBe(true);
      expect(await page.locator('li[data-role="user"]').allTextContents()).toEqual(["user: What's the weather in Paris?"]);

      // A long reply, stopped while it streams: it ends at once, without an error, and the app can send again.
      await page.getByRole("textbox", { name: "message" }).fill("Tell me a long story");
      await page.getByRole("button", { name: "Send" }).click();
      await page.locator('li[data-role="streaming"]').waitFor({ timeout: 20_000 });
      await page.getByRole("button", { name: "Stop" }).click();
      await page.locator('li[data-role="streaming"]').waitFor({ state: "detached", timeout: 10_000 });
      expect(await page.getByRole("alert").count()).toBe(0);
      expect(await page.locator("body").textContent()).not.toContain("word299");
      await page.getByRole("textbox", { name: "message" }).fill("again");
      expect(await page.getByRole("button", { name: "Send" }).isEnabled()).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
