/**
 * The exit watchdog (test/support/exit-watchdog-reporter.ts): a vitest run
 * whose closing hangs after the summary still ends, with its own result. A
 * hung close once held a CI run that had passed until CI's 90-minute limit.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const dir = resolve(repo, "test/support/hung-teardown");

function run(file: string) {
  const started = Date.now();
  const out = spawnSync(process.execPath, [resolve(repo, "node_modules/vitest/vitest.mjs"), "run", "--root", dir, "--config", resolve(dir, "vitest.config.ts"), file], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  return { status: out.status, signal: out.signal, output: out.stdout + out.stderr, ms: Date.now() - started };
}

describe("a run whose global teardown never ends", { timeout: 90_000 }, () => {
  it("passed: exits 0 once the grace is over, saying what was still alive", () => {
    const { status, signal, output } = run("ok.check.ts");
    expect(signal).toBeNull(); // not killed by spawnSync's 60 s limit
    expect(output).toContain("1 passed");
    expect(output).toMatch(/\[exit watchdog\] the run ended \(passed\) 1500 ms ago.*still alive: .*Timeout/s);
    expect(status).toBe(0);
  });

  it("failed: still exits 1", () => {
    const { status, signal, output } = run("fail.check.ts");
    expect(signal).toBeNull();
    expect(output).toContain("[exit watchdog] the run ended (failed)");
    expect(status).toBe(1);
  });
});
