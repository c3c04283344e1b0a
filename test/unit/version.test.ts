/** The SharedWorker is named for the library version (src/version.ts): it must be package.json's. */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { VERSION } from "../../src/version.js";
import { SHARED_WORKER_NAME } from "../../src/client/worker-link.js";

describe("the library version", () => {
  it("is package.json's, and names the shared worker", () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect(SHARED_WORKER_NAME).toBe(`webgpu-openai@${pkg.version}`);
  });
});
