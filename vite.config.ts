import { defineConfig } from "vitest/config";
import { playwright } from "@vitest/browser-playwright";

/** Chromium flags: WebGPU on SwiftShader, and no attempts to reach the network. */
export const chromiumArgs = [
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export default defineConfig({
  // The package is built by scripts/build.mjs (tsc + esbuild for the worker entries), not by Vite.
  worker: { format: "es" },
  test: {
    // The watchdog ends a run whose closing hangs after the summary, with the run's own result (see its file).
    reporters: ["default", "./test/support/exit-watchdog-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          environment: "node",
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          // A local server of generated MLC-layout models for the cache tests (URL via inject("artifactServer")),
          // and MCP servers with and without CORS for the MCP tests (inject("mcpCors"), inject("mcpNoCors")).
          // The GGUF server: a tiny generated GGUF and wllama's wasm for the wllama engine's tests (inject("ggufServer")).
          globalSetup: ["test/support/artifact-server-setup.ts", "test/support/mcp-server-setup.ts", "test/support/gguf-server-setup.ts"],
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: { executablePath: "/usr/bin/chromium", args: chromiumArgs } }),
            instances: [{ browser: "chromium" }],
          },
        },
      },
    ],
  },
});
