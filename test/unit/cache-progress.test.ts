import { afterEach, describe, expect, it, vi } from "vitest";
import { ByteProgress, composeProgress } from "../../src/cache/progress.js";
import type { LoadProgress } from "../../src/engine/types.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A ByteProgress whose `performance.now()` is `clock.now`, with the reports it emits. */
function clockedProgress(total: number) {
  const clock = { now: 0 };
  vi.spyOn(performance, "now").mockImplementation(() => clock.now);
  const events: LoadProgress[] = [];
  return { clock, events, progress: new ByteProgress(total, 0, (p) => events.push(p)) };
}

describe("load progress", () => {
  it("never reports fewer bytes than before, even when a rejected file is taken back", () => {
    const events: LoadProgress[] = [];
    const progress = new ByteProgress(1000, 0, (p) => events.push(p));
    progress.add(400, "a", true);
    progress.add(-300, "a", true); // a shard failed its check and is fetched again
    progress.add(300, "a", true);
    progress.add(600, "b", true);
    expect(events.map((e) => e.loadedBytes)).toEqual([400, 400, 400, 1000]);
    expect(events.at(-1)).toMatchObject({ fraction: 1, totalBytes: 1000, etaS: 0, phase: "download" });
  });

  it("gives the rate from the first byte on, so the wait for the first byte does not stretch the ETA", () => {
    const { clock, events, progress } = clockedProgress(1000);
    clock.now = 5000; // five seconds of latency before the first byte
    progress.add(100, "a", true);
    expect(events.at(-1)).toMatchObject({ etaS: null, bytesPerS: null });
    clock.now = 6000;
    progress.add(100, "a", true);
    expect(events.at(-1)).toMatchObject({ loadedBytes: 200, bytesPerS: 100, etaS: 8 });
    clock.now = 8000;
    progress.add(800, "a", true);
    expect(events.at(-1)).toMatchObject({ loadedBytes: 1000, etaS: 0, fraction: 1 });
  });

  it("starts the rate's clock at the download's first byte, not at the manifest files fetched while planning it", () => {
    const { clock, events, progress } = clockedProgress(10_100);
    // The config and tensor index, fetched before the quota check, are written first.
    progress.addFetchedEarlier(100, "tensor-cache.json");
    expect(events.at(-1)).toMatchObject({ loadedBytes: 100, etaS: null, file: "tensor-cache.json" });
    // Two seconds of setup (the store opening, the first request's latency), then the shards at 1000 bytes/s.
    clock.now = 2000;
    progress.add(500, "params_shard_0.bin", true);
    clock.now = 3000;
    progress.add(1000, "params_shard_0.bin", true);
    // Counted from the manifest's write, the rate would be 1400 bytes in 3 s (467/s) and the ETA 18 s.
    expect(events.at(-1)).toMatchObject({ loadedBytes: 1600, bytesPerS: 1000, etaS: 8.5 });
  });

  it("leaves the first requests' latency out of the rate: a small file's bytes, a pause, then the line's speed", () => {
    const { clock, events, progress } = clockedProgress(2_000_000);
    progress.add(1000, "tokenizer.json", true);
    // 80 ms until the first shard's bytes, then 1 MB/s (50 kB every 50 ms).
    for (clock.now = 80; clock.now <= 380; clock.now += 50) progress.add(50_000, "params_shard_0.bin", true);
    const last = events.at(-1) as LoadProgress;
    expect(last.loadedBytes).toBe(351_000);
    // Counting the pause, the rate would be 350 kB in 380 ms: 921 kB/s, and the ETA 1.79 s.
    expect(last.bytesPerS).toBeGreaterThan(980_000);
    expect(last.bytesPerS).toBeLessThan(1_020_000);
    expect(last.etaS).toBeCloseTo(1.649, 1);
  });

  it("follows a download that slows down: the rate is the later half's, not the average since the first byte", () => {
    const { clock, events, progress } = clockedProgress(20_000);
    // 1000 bytes/s for 4 s (reported every 100 ms), then the store falls behind: 500 bytes/s for 4 s.
    for (let t = 0; t < 8000; t += 100) {
      clock.now = t;
      progress.add(t < 4000 ? 100 : 50, "a", true);
    }
    const last = events.at(-1) as LoadProgress;
    expect(last.loadedBytes).toBe(6000);
    // The average since the first byte would say 750 bytes/s and 18.7 s left; the line now gives 500.
    expect(last.bytesPerS).toBeGreaterThanOrEqual(480);
    expect(last.bytesPerS).toBeLessThanOrEqual(520);
    expect(last.etaS).toBeGreaterThan(26);
    expect(last.etaS).toBeLessThan(30);
  });

  it("counts the time a file takes to commit after its last byte into the ETA, down to 0 once it lands", () => {
    const { clock, events, progress } = clockedProgress(4000);
    for (let t = 0; t <= 2000; t += 100) {
      clock.now = t;
      progress.add(100, "a", true);
    }
    // 2100 bytes at 1000 bytes/s: 1.9 s of bytes left; the first file was committed 0.5 s after its last byte.
    progress.committed(0.5);
    progress.report("a", clock.now);
    expect(events.at(-1)?.etaS).toBeCloseTo(1.9 + 0.5, 1);
    clock.now = 3900;
    progress.add(1900, "b", true);
    // Every byte is in; the last file's commit is still to come.
    expect(events.at(-1)).toMatchObject({ loadedBytes: 4000, fraction: 1, etaS: 0.5 });
    clock.now = 4200;
    progress.report("b", clock.now);
    expect(events.at(-1)?.etaS).toBeCloseTo(0.2, 5);
    clock.now = 4500;
    progress.report(null, clock.now);
    expect(events.at(-1)?.etaS).toBe(0);
  });

  it("widens the total for files of undeclared size instead of passing 100%", () => {
    const events: LoadProgress[] = [];
    const progress = new ByteProgress(100, 0, (p) => events.push(p));
    progress.grow(50);
    progress.add(150, "tokenizer.json", true);
    expect(events.at(-1)).toMatchObject({ loadedBytes: 150, totalBytes: 150, fraction: 1 });
  });

  it("stacks the download and the engine's phases into one fraction that never goes back", () => {
    const seen: number[] = [];
    const phases = composeProgress((p) => seen.push(p.fraction), 0.8);
    phases.download({ phase: "download", loadedBytes: 50, totalBytes: 100, fraction: 0.5, etaS: 1, file: null });
    phases.download({ phase: "download", loadedBytes: 100, totalBytes: 100, fraction: 1, etaS: 0, file: null });
    phases.engine({ phase: "load", loadedBytes: 0, totalBytes: 0, fraction: 0, etaS: null, file: null });
    phases.engine({ phase: "compile", loadedBytes: 0, totalBytes: 0, fraction: 1, etaS: null, file: null });
    expect(seen).toEqual([0.4, 0.8, 0.8, 1]);
  });
});
