/**
 * The real web-llm engine end to end, through scripts/smoke-real.mjs (our
 * library in headless Chromium, web-llm in its worker, a real MLC model).
 * Needs a local model folder and its model library, so it runs only when
 * WEBGPU_OPENAI_MODEL_DIR and WEBGPU_OPENAI_MODEL_LIB name them
 * (WEBGPU_OPENAI_WEBLLM picks the web-llm version, default 0.2.79: the only
 * one whose libraries are obtainable offline). On SwiftShader it takes
 * ~15–20 minutes.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const modelDir = process.env.WEBGPU_OPENAI_MODEL_DIR;
const modelLib = process.env.WEBGPU_OPENAI_MODEL_LIB;
const skipReason = !modelDir || !modelLib ? "WEBGPU_OPENAI_MODEL_DIR and WEBGPU_OPENAI_MODEL_LIB are not set (a local MLC model folder and its .wasm library)" : null;
if (skipReason) console.info(`[webllm-real-smoke] skipped: ${skipReason}`);

describe("the real web-llm engine (smoke harness)", () => {
  it.skipIf(skipReason !== null)(
    "loads from the network then from IndexedDB, streams, reuses the KV cache, survives an abort, accepts tools and tool messages, serves the openai SDK",
    () => {
      const script = fileURLToPath(new URL("../../scripts/smoke-real.mjs", import.meta.url));
      const run = spawnSync(process.execPath, [script, "--model-dir", modelDir as string, "--model-lib", modelLib as string, "--webllm", process.env.WEBGPU_OPENAI_WEBLLM ?? "0.2.79"], {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      });
      const report = JSON.parse(run.stdout) as { error?: string; checks?: Record<string, boolean> };
      expect(report.error).toBeUndefined();
      const failed = Object.entries(report.checks ?? {}).filter(([, ok]) => !ok).map(([name]) => name);
      expect(failed, run.stdout).toEqual([]);
      expect(Object.keys(report.checks ?? {}).length).toBeGreaterThanOrEqual(10);
    },
    3_600_000,
  );
});
