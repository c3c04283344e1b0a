import { afterEach, describe, expect, it, vi } from "vitest";
import { ByteProgress, composeProgress } from "../../src/cache/progress.js";
import type { LoadProgress } from "../../src/engine/types.js";

afterEach(() => {
  vi.restoreAllMocks();
});

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
    let now = 0;
    vi.spyOn(performance, "now").mockImplementation(() => now);
    const events: LoadProgress[] = [];
    const progress = new ByteProgress(1000, 0, (p) => events.push(p));
    now = 5000; // five seconds of latency before the first byte
    progress.add(100, "a", true);
    expect(events.at(-1)).toMatchObject({ etaS: null, bytesPerS: null });
    now = 6000;
    progress.add(100, "a", true);
    expect(events.at(-1)).toMatchObject({ loadedBytes: 200, bytesPerS: 100, etaS: 8 });
    now = 8000;
    progress.add(800, "a", true);
    expect(events.at(-1)).toMatchObject({ loadedBytes: 1000, etaS: 0, fraction: 1 });
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
