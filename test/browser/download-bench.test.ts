/** Keeps bench/download.ts runnable: a small model through every variant, and one short paced line (the full run is `npm run bench`). */
import { expect, inject, it } from "vitest";
import { benchDownload, benchThrottled } from "../../bench/download.js";

const server = inject("artifactServer");

it("benchDownload times raw fetch, fetch + MD5 (on the thread and in workers), each store's unchecked floor and the library per backend on the same files", async () => {
  const rows = await benchDownload({ serverUrl: server, modelBytes: 4 * 1024 * 1024, shardBytes: 512 * 1024, rounds: 1, maxBufferedBytes: 1024 * 1024 });
  expect(rows.map((r) => r.variant)).toEqual([
    "raw fetch (ceiling)",
    "raw fetch + MD5 in JS on the thread",
    "raw fetch + MD5 in WebAssembly on the thread",
    "raw fetch + MD5 in WebAssembly, in 4 workers",
    "floor → indexeddb: read into a buffer, put, not hashed",
    "floor → cache: cache.put(fetch response), bytes never read",
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
  const [row] = await benchThrottled({ serverUrl: server, ratesMBps: [8], seconds: 1, keepEvents: true });
  expect(row.lineMBps).toBe(8);
  // The line caps both: neither raw fetch nor the library outruns it.
  expect(row.rawMBps).toBeLessThan(8 * 1.3);
  expect(row.libraryMBps).toBeLessThan(8 * 1.3);
  expect(row.reportedMBps).toBeGreaterThan(0);
  expect(Number.isFinite(row.etaWorstError)).toBe(true);
  expect(row.trace.length).toBeGreaterThan(3);
  // Every report kept, in order, for judging an estimator offline.
  const events = row.events ?? [];
  expect(events.length).toBeGreaterThanOrEqual(row.trace.length);
  for (let i = 1; i < events.length; i++) {
    expect(events[i][0]).toBeGreaterThanOrEqual(events[i - 1][0]);
    expect(events[i][1]).toBeGreaterThanOrEqual(events[i - 1][1]);
  }
  const last = events.at(-1) as (typeof events)[number];
  expect(last[1]).toBe(last[2]);
  expect(last[1]).toBeGreaterThanOrEqual(row.modelBytes);
});
