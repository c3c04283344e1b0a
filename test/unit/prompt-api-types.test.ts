/**
 * Apps written for Chrome's Prompt API type their code with
 * `@types/dom-chromium-ai`. test/types/prompt-api/chrome-typed.ts is such
 * code, handed our `createPromptApi` class and fed Chrome-typed options; this
 * test compiles it with strict tsc. Its `@ts-expect-error` line is a negative
 * control (tsc fails on an unused one).
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

describe("code typed with @types/dom-chromium-ai compiles against webgpu-openai/prompt-api", () => {
  it("the Chrome-typed fixture type-checks with the real declarations", () => {
    const run = spawnSync(process.execPath, [tsc, "-p", "test/types/prompt-api/tsconfig.json", "--noEmit", "--pretty", "false", "--listFiles"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    const lines = run.stdout.split("\n");
    expect(lines.filter((line) => line.includes("error TS")), run.stdout).toEqual([]);
    expect(run.status, run.stderr).toBe(0);
    const files = lines.map((line) => line.replaceAll("\\", "/"));
    expect(files.some((f) => f.endsWith("test/types/prompt-api/chrome-typed.ts"))).toBe(true);
    expect(files.some((f) => f.endsWith("node_modules/@types/dom-chromium-ai/index.d.ts"))).toBe(true);
    expect(files.some((f) => f.endsWith("src/prompt-api/types.ts"))).toBe(true);
  }, 60_000);
});
