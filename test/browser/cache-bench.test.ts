/** Keeps bench/cache.ts runnable: a small model through every measured step (the 256 MB run is `npm run bench`). */
import { expect, inject, it } from "vitest";
import { benchCache } from "../../bench/cache.js";

it("benchCache reports throughput and a download memory bound per backend", async () => {
  const rows = await benchCache({ serverUrl: inject("artifactServer"), modelBytes: 4 * 1024 * 1024, shardBytes: 512 * 1024, concurrency: 2 });
  expect(rows.map((r) => r.backend)).toEqual(["indexeddb", "cache"]);
  for (const row of rows) {
    expect(row.modelBytes).toBe(4 * 1024 * 1024);
    for (const rate of [row.downloadMBps, row.writeMBps, row.readMBps]) expect(rate).toBeGreaterThan(0);
    // Two shards in flight at most, never the whole model.
    expect(row.peakBufferedBytes).toBeGreaterThan(0);
    expect(row.peakBufferedBytes).toBeLessThanOrEqual(2 * 512 * 1024 + 64 * 1024);
  }
});
