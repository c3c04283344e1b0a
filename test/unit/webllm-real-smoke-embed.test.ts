/**
 * The real web-llm engine with an embedding model, through
 * scripts/smoke-real.mjs: our library in its worker (a custom worker with the
 * test-only compat shim, test/real/embed-worker.ts) downloads the model into
 * web-llm's cache, loads it, embeds a batch larger than the library's compiled
 * batch, reloads from IndexedDB with zero requests, and gives the vectors
 * web-llm's own `engine.embeddings.create` gives. Runs only when
 * WEBGPU_OPENAI_EMBED_MODEL_DIR and WEBGPU_OPENAI_EMBED_MODEL_LIB name a local
 * MLC embedding model folder and its library (e.g. snowflake-arctic-embed-s
 * from binary-mlc-llm-libs v0_2_80, which runs on web-llm 0.2.86 here).
 * WEBGPU_OPENAI_WEBLLM picks the web-llm version (default 0.2.86). About 1–3
 * minutes on SwiftShader.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const modelDir = process.env.WEBGPU_OPENAI_EMBED_MODEL_DIR;
const modelLib = process.env.WEBGPU_OPENAI_EMBED_MODEL_LIB;
const skipReason =
  !modelDir || !modelLib ? "WEBGPU_OPENAI_EMBED_MODEL_DIR and WEBGPU_OPENAI_EMBED_MODEL_LIB are not set (a local MLC embedding model folder and its .wasm library)" : null;
if (skipReason) console.info(`[webllm-real-smoke-embed] skipped: ${skipReason}`);

describe("the real web-llm engine with an embedding model (smoke harness)", () => {
  it.skipIf(skipReason !== null)(
    "downloads into web-llm's cache, loads, embeds a split batch, reloads from IndexedDB with zero requests, matches web-llm's own embeddings",
    () => {
      const script = fileURLToPath(new URL("../../scripts/smoke-real.mjs", import.meta.url));
      const run = spawnSync(
        process.execPath,
        [script, "--embed-model-dir", modelDir as string, "--embed-model-lib", modelLib as string, "--webllm", process.env.WEBGPU_OPENAI_WEBLLM ?? "0.2.86"],
        { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      );
      const report = JSON.parse(run.stdout) as { error?: string; checks?: Record<string, boolean> };
      expect(report.error).toBeUndefined();
      const failed = Object.entries(report.checks ?? {}).filter(([, ok]) => !ok).map(([name]) => name);
      expect(failed, run.stdout).toEqual([]);
      expect(Object.keys(report.checks ?? {}).length).toBeGreaterThanOrEqual(9);
    },
    3_600_000,
  );
});
