/**
 * A global setup's teardown that cannot hold the run forever. Vitest awaits
 * global teardowns with no time limit, before it closes the browser (its
 * `teardownTimeout` covers only the exit that comes after), so a server whose
 * `close()` waits on a connection the still-open Chromium keeps would hang
 * the whole run after every test passed: CI then ends at its own limit, with
 * nothing said. Past `limitMs` this warns, naming the teardown, and returns.
 */
export function boundedTeardown(name: string, teardown: () => Promise<void>, limitMs = 15_000): () => Promise<void> {
  return async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), limitMs);
    });
    try {
      const outcome = await Promise.race([teardown().then(() => "done" as const), late]);
      if (outcome === "late") console.warn(`${name}: teardown still running after ${limitMs} ms; left behind so the run can end.`);
    } finally {
      clearTimeout(timer);
    }
  };
}
