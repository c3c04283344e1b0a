/**
 * Apps type their code with the OpenAI SDK. test/types/ holds app code typed
 * with openai v6 and v7 against this library's client (SDK params in, our
 * completions and chunks out as the SDK's types, our ApiError as the SDK's
 * APIError); this test compiles it with strict tsc, as an app's `tsc && vite
 * build` would. The fixtures' `@ts-expect-error` lines are negative controls:
 * tsc fails on an unused one, so a types change that let everything through
 * would fail here too.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

describe("OpenAI-SDK-typed app code compiles against the client (strict tsc)", () => {
  it("openai v6 and v7 fixtures type-check, and the checked files are the fixtures and both SDKs", () => {
    const run = spawnSync(process.execPath, [tsc, "-p", "test/types/tsconfig.json", "--noEmit", "--pretty", "false", "--listFiles"], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });
    const lines = run.stdout.split("\n");
    const errors = lines.filter((line) => line.includes("error TS"));
    expect(errors, run.stdout).toEqual([]);
    expect(run.status, run.stderr).toBe(0);
    // Not vacuous: the fixtures were compiled, with the real SDK declarations of both versions.
    const files = lines.map((line) => line.replaceAll("\\", "/"));
    expect(files.some((f) => f.endsWith("test/types/openai-v6.ts"))).toBe(true);
    expect(files.some((f) => f.endsWith("test/types/openai-v7.ts"))).toBe(true);
    expect(files.some((f) => f.includes("node_modules/openai/resources/chat/completions/completions.d."))).toBe(true);
    expect(files.some((f) => f.includes("node_modules/openai-v7/resources/chat/completions/completions.d."))).toBe(true);
    expect(files.some((f) => f.endsWith("src/protocol/types.ts"))).toBe(true);
  }, 60_000);
});
