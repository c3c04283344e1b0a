/**
 * The demo's MCP view in headless Chromium, on a scripted model (no
 * download), against a real MCP server (test/support/mcp-server.ts) on
 * 127.0.0.1 (another origin than the page) that sends CORS headers and needs
 * a header: connecting lists its tools; the model's tool call asks for an
 * approval and nothing reaches the server until it is given; approved, the
 * call runs, its output shows and the model's next turn appears; declined,
 * the call is never made; with the toggle off, the call runs at once. A bad URL, an unreachable server and a server
 * without CORS each give their own error in the view. Screenshots go to
 * $DEMO_SCREENSHOTS when set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { chromium, type Browser, type Page } from "playwright";
import { chromiumArgs } from "../../vite.config.js";
import { buildDemo, serveDemo, type DemoServer } from "../demo/build-and-serve.js";
import { scriptedRecord } from "../demo/catalog.js";
import { startMcpFixture, type McpFixture } from "../support/mcp-server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`demo-mcp tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

const shots = resolve(process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), "webgpu-openai-demo-screenshots"));

const call = (name: string, args: Record<string, unknown>) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
/** The model's turns, in the order the tests ask for them: a call, the answer after it ran; a call, the answer after it was declined. */
const REPLIES = [call("add", { a: 2, b: 3 }), "2 + 3 is 5.", call("echo", { text: "secret" }), "I did not echo it: you declined."];
const catalog = [scriptedRecord("Qwen3-Demo-Mcp", REPLIES, 5)];
const KEY = ["x-api-key", "demo-k3y"] as const;

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

describe.skipIf(!hasChromium)("the demo's MCP view in Chromium", { timeout: 90_000 }, () => {
  let demo: DemoServer;
  let browser: Browser;
  let builtDir: string;
  let page: Page;
  let mcp: McpFixture;
  let noCors: McpFixture;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    mcp = await startMcpFixture({ cors: true, requireHeader: [...KEY] });
    noCors = await startMcpFixture({ cors: false });
    builtDir = await buildDemo();
    demo = await serveDemo(builtDir, { "/mcp-catalog.json": JSON.stringify(catalog) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: chromiumArgs });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(`${demo.url}/?catalog=/mcp-catalog.json&model=Qwen3-Demo-Mcp`);
    await page.locator("#gpu-panel").waitFor({ timeout: 60_000 });
    await page.locator("[role=tab]", { hasText: "MCP" }).click();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await mcp?.close();
    await noCors?.close();
    if (builtDir) await rm(builtDir, { recursive: true, force: true });
  });

  async function connect(url: string, header?: readonly [string, string]) {
    await page.locator("#mcp-url").fill(url);
    await page.locator("#mcp-header-name").fill(header?.[0] ?? "");
    await page.locator("#mcp-header-value").fill(header?.[1] ?? "");
    await page.locator("#mcp-connect").click();
    await expect.poll(() => page.locator("#mcp-status").getAttribute("data-state"), { timeout: 20_000 }).toMatch(/^(connected|error)$/);
  }
  const errorText = () => page.locator("#mcp-error").textContent();
  const ask = async (text: string) => {
    await page.locator("#mcp-input").fill(text);
    await page.locator("#mcp-send").click();
  };

  it("a bad URL, an unreachable server and a server without CORS each say what they are", async () => {
    await connect("ftp://127.0.0.1/mcp");
    expect(await errorText()).toMatch(/^Bad URL\. .*must be an https: or http: URL.*ftp:/);

    const port = await closedPort();
    await connect(`http://127.0.0.1:${port}/mcp`);
    expect(await errorText()).toMatch(new RegExp(`^Unreachable: nothing answered at http://127\\.0\\.0\\.1:${port}/mcp`));

    await connect(noCors.url);
    expect(await errorText()).toMatch(/^No CORS: the server at .* answered, but it does not allow this page's origin/);
    expect(await errorText()).toContain("Access-Control-Expose-Headers: Mcp-Session-Id");
    expect(noCors.calls).toEqual([]);
    expect(await page.locator("#mcp-send").isDisabled()).toBe(true);
  });

  it("connects with the header and lists the server's tools", async () => {
    await connect(mcp.url, KEY);
    expect(await page.locator("#mcp-error").isHidden()).toBe(true);
    expect(await page.locator("#mcp-status").textContent()).toBe(`Connected to ${mcp.url}: 5 tools.`);
    expect(await page.locator("#mcp-tools li").allTextContents()).toContain("add(a, b) Adds two numbers.");
    expect(await page.locator("#mcp-tools li code").allTextContents()).toEqual(["add(a, b)", "echo(text)", "fail()", "hang()", "big()"]);
    expect(await page.locator("#mcp-require-approval").isChecked()).toBe(true);
  });

  it("a tool call asks first; approved, it runs on the server, its output shows and the model answers", async () => {
    await ask("What is 2 + 3?");
    const approval = page.locator(".mcp-approval[data-tool=add]");
    await approval.waitFor({ timeout: 15_000 });
    expect(JSON.parse((await approval.locator(".mcp-arguments").textContent()) ?? "")).toEqual({ a: 2, b: 3 });
    // Asked, not run: nothing has been called on the server.
    expect(mcp.calls).toEqual([]);
    await page.screenshot({ path: join(shots, "mcp-approval.png") });

    await approval.locator("button.mcp-approve").click();
    const done = page.locator(".mcp-call[data-tool=add][data-state=completed]");
    await done.waitFor({ timeout: 15_000 });
    expect(await done.locator(".mcp-output").textContent()).toBe("5");
    await expect.poll(() => page.locator(".mcp-assistant").last().textContent(), { timeout: 15_000 }).toBe(REPLIES[1]);
    expect(mcp.calls).toEqual(["add"]);
    expect(await approval.getAttribute("data-decision")).toBe("approved");
    await page.screenshot({ path: join(shots, "mcp-approved-call.png") });
  });

  it("declined, the call is never made and the model's next turn says so", async () => {
    await page.locator("#mcp-send:not([disabled])").waitFor({ timeout: 15_000 });
    await ask("Echo my secret.");
    const approval = page.locator(".mcp-approval[data-tool=echo]");
    await approval.waitFor({ timeout: 15_000 });
    await approval.locator("button.mcp-decline").click();
    await expect.poll(() => page.locator(".mcp-assistant").last().textContent(), { timeout: 15_000 }).toBe(REPLIES[3]);
    expect(await approval.getAttribute("data-decision")).toBe("declined");
    expect(await page.locator(".mcp-call[data-tool=echo]").count()).toBe(0);
    expect(mcp.calls).toEqual(["add"]);
  });

  it("with the toggle off (require_approval: \"never\") the call runs at once", async () => {
    await page.locator("#mcp-send:not([disabled])").waitFor({ timeout: 15_000 });
    await page.locator("#mcp-require-approval").uncheck();
    // The script starts over: the add call, then its answer.
    await ask("And 2 + 3 again?");
    await expect.poll(() => page.locator(".mcp-call[data-tool=add][data-state=completed]").count(), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => page.locator(".mcp-assistant").last().textContent(), { timeout: 15_000 }).toBe(REPLIES[1]);
    expect(await page.locator(".mcp-approval").count()).toBe(2);
    expect(mcp.calls).toEqual(["add", "add"]);
  });
});
