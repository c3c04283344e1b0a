import { describe, expect, it } from "vitest";
import { createProgressMapper, parseProgressText } from "../../src/engine/webllm/webllm-progress.js";

const MIB = 1024 * 1024;
/** The texts web-llm 0.2.79–0.2.86 report, in order, for a first load of a 295 MiB model. */
const firstLoad = [
  { progress: 0, timeElapsed: 0, text: "Start to fetch params" },
  { progress: 0.11, timeElapsed: 1, text: "Fetching param cache[1/9]: 33MB fetched. 11% completed, 1 secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster." },
  { progress: 1, timeElapsed: 3, text: "Fetching param cache[9/9]: 295MB fetched. 100% completed, 3 secs elapsed. It can take a while when we first visit this page to populate the cache. Later refreshes will become faster." },
  { progress: 0.5, timeElapsed: 4, text: "Loading model from cache[5/9]: 148MB loaded. 50% completed, 4 secs elapsed." },
  { progress: 1, timeElapsed: 5, text: "Loading model from cache[9/9]: 295MB loaded. 100% completed, 5 secs elapsed." },
  { progress: 0.1, timeElapsed: 6, text: "Loading GPU shader modules[7/73]: 10% completed, 6 secs elapsed." },
  { progress: 1, timeElapsed: 20, text: "Loading GPU shader modules[73/73]: 100% completed, 20 secs elapsed." },
  { progress: 1, timeElapsed: 20, text: "Finish loading on WebGPU - google" },
];

describe("web-llm load progress → LoadProgress", () => {
  it("reads phase and bytes from each text", () => {
    expect(parseProgressText(firstLoad[1].text)).toEqual({ phase: "download", bytes: 33 * MIB });
    expect(parseProgressText(firstLoad[3].text)).toEqual({ phase: "load", bytes: 148 * MIB });
    expect(parseProgressText(firstLoad[5].text)).toEqual({ phase: "compile", bytes: null });
    expect(parseProgressText(firstLoad[7].text).phase).toBe("finish");
  });

  it("one fraction that never goes back across phases (web-llm restarts at 0 per phase) and ends at 1", () => {
    let t = 0;
    const map = createProgressMapper(() => t);
    const out = firstLoad.map((report) => {
      t += 1000;
      return map(report);
    });
    const fractions = out.map((p) => p.fraction);
    for (let i = 1; i < fractions.length; i++) expect(fractions[i]).toBeGreaterThanOrEqual(fractions[i - 1]);
    expect(fractions.at(-1)).toBe(1);
    expect(out.map((p) => p.phase)).toEqual(["download", "download", "download", "load", "load", "compile", "compile", "compile"]);
    expect(out[2].loadedBytes).toBe(295 * MIB);
    expect(out[2].totalBytes).toBe(295 * MIB);
    expect(out.at(-1)?.etaS).toBe(0);
    expect(out[3].etaS).toBeGreaterThan(0);
  });

  it("a load from cache (no download phase) still spans the whole bar", () => {
    const map = createProgressMapper(() => 0);
    const fromCache = firstLoad.slice(3).map((r) => map(r).fraction);
    expect(fromCache[0]).toBeCloseTo(0.25);
    for (let i = 1; i < fromCache.length; i++) expect(fromCache[i]).toBeGreaterThanOrEqual(fromCache[i - 1]);
    expect(fromCache.at(-1)).toBe(1);
  });
});
