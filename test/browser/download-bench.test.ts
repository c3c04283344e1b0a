/** Keeps bench/download.ts runnable: a small model through every variant, and one short paced line (the full run is `npm run bench`). */
import { expect, inject, it } from "vitest";
import { benchDownload, benchThrottled } from "../../bench/download.js";

const server = inject("artifactServer");

it("benchDownload times raw fetch, fetch + MD5 (on the thread and in workers) and the library per backend on the same files", async () => {
  const rows = await benchDownload({ serverUrl: server, modelBytes: 4 * 1024 * 1024, shardBytes: 512 * 1024, rounds: 1, maxBufferedBytes: 1024 * 1024 });
  expect(rows.map((r) => r.variant)).toEqual([
    "raw fetch (ceiling)",
    "raw fetch + MD5 in JS on the thread",
    "raw fetch + MD5 in WebAssembly on the thread",
    "raw fetch + MD5 in WebAssembly, in 4 workers",
    "library → indexeddb",
    "library → cache",
    "library → opfs",
  ]);
  for (const row of rows) {
    expect(row.error).toBeUndefined();
    expect(row.MBps).toBeGreaterThan(0);
  }
  for (const row of rows.filter((r) => r.variant.startsWith("library"))) {
    expect(row.peakBufferedBytes).toBeLessThanOrEqual(1024 * 1024 + 128 * 1024);
    expect(row.peakConcurrency).toBeGreaterThanOrEqual(1);
  }
});

it("benchThrottled downloads through a paced line and judges the ETA the progress gave", async () => {
  const [row] = await benchThrottled({ serverUrl: server, ratesMBps: [8], seconds: 1 });
  expect(row.lineMBps).toBe(8);
  // The line caps both: neither raw fetch nor the library outruns it.
  expect(row.rawMBps).toBeLessThan(8 * 1.3);
  expect(row.libraryMBps).toBeLessThan(8 * 1.3);
  expect(row.reportedMBps).toBeGreaterThan(0);
  expect(Number.isFinite(row.etaWorstError)).toBe(true);
  expect(row.trace.length).toBeGreaterThan(3);
});
