/**
 * A reporter that ends the test process if it has not ended on its own a
 * while after the run. Vitest closes everything after the summary (global
 * teardowns, the browser, the pool) with no time limit on that path (its
 * `teardownTimeout` covers only the exit after it), so a close that waits on
 * something Chromium or a server keeps alive would hold a CI run that already
 * passed until CI's own limit, saying nothing. Past `graceMs` (default 2 minutes) this says
 * what was still alive and exits with the run's own result: a failed run
 * still fails. The timer is unref'd, so a run that ends normally never waits on it.
 */
import type { Reporter, TestRunEndReason } from "vitest/node";

export default class ExitWatchdogReporter implements Reporter {
  private readonly graceMs: number;

  constructor(options: { graceMs?: number } = {}) {
    this.graceMs = options.graceMs ?? 120_000;
  }

  onTestRunEnd(_modules: unknown, unhandledErrors: ReadonlyArray<unknown>, reason: TestRunEndReason): void {
    const code = reason === "passed" && unhandledErrors.length === 0 ? 0 : 1;
    setTimeout(() => {
      const alive = process.getActiveResourcesInfo().join(", ");
      console.warn(`[exit watchdog] the run ended (${reason}) ${this.graceMs} ms ago, but closing it has not finished; still alive: ${alive}. Exiting with the run's result (${code}).`);
      process.exit(code);
    }, this.graceMs).unref();
  }
}
