/**
 * The demo's own Vite config (`npm run demo` serves it; the demo test builds it).
 * The library's vite.config.ts runs the test projects (scripts/build.mjs builds the package).
 */
import { defineConfig } from "vite";
import { resolve } from "node:path";

export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  build: {
    outDir: resolve(import.meta.dirname, "../demo-dist"),
    emptyOutDir: true,
    target: "es2022",
    // web-llm is several MB; the demo is a local tool, so one big chunk is fine.
    chunkSizeWarningLimit: 8000,
  },
  worker: { format: "es" },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
