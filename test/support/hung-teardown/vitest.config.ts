/** A run whose global teardown hangs, with the exit watchdog at 1.5 s (exit-watchdog.test.ts picks the test file by name). */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["*.check.ts"],
    globalSetup: ["./setup.ts"],
    reporters: ["default", ["../exit-watchdog-reporter.ts", { graceMs: 1500 }]],
  },
});
