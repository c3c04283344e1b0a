/**
 * How many threads a GGUF load asks wllama for (engine/wllama/wllama-threads.ts)
 * and what gpu.info().wllama / models.status(id).engine report
 * (host/engine-choice.ts `wllamaThreads`): a loaded wllama's own word, else
 * the plan. The real engine under isolation: wllama-threads.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { checkThreadsSetting, wllamaThreadCount } from "../../src/engine/wllama/wllama-threads.js";
import { wllamaThreads } from "../../src/host/engine-choice.js";
import type { Engine, EngineCpuThreads } from "../../src/engine/types.js";

describe("the n_threads a load passes wllama", () => {
  it("not isolated: 1, whatever the cores or the record asks", () => {
    expect(wllamaThreadCount(false, 16)).toBe(1);
    expect(wllamaThreadCount(false, 16, 8)).toBe(1);
  });

  it("isolated: half the logical cores, at most 8 (1 on 2 or 3 cores, as wllama's own default)", () => {
    expect([1, 2, 3, 4, 6, 8, 12, 16, 32].map((cores) => wllamaThreadCount(true, cores))).toEqual([1, 1, 1, 2, 3, 4, 6, 8, 8]);
    expect(wllamaThreadCount(true, undefined)).toBe(1);
  });

  it("isolated, a record's engine.threads, capped at the logical cores", () => {
    expect(wllamaThreadCount(true, 2, 2)).toBe(2);
    expect(wllamaThreadCount(true, 4, 16)).toBe(4);
    expect(wllamaThreadCount(true, 32, 12)).toBe(12);
  });

  it("engine.threads must be a whole number from 1: a 400 naming it", () => {
    expect(checkThreadsSetting(undefined, "m")).toBeUndefined();
    expect(checkThreadsSetting(3, "m")).toBe(3);
    for (const bad of [0, -1, 1.5, "2", null]) {
      expect(() => checkThreadsSetting(bad, "m")).toThrow(expect.objectContaining({ status: 400, code: "invalid_model_record", param: "engine.threads" }));
    }
  });
});

describe("what is reported", () => {
  const scope = globalThis as { crossOriginIsolated?: boolean };
  afterEach(() => {
    delete scope.crossOriginIsolated;
  });

  function engine(model: string | null, threads: EngineCpuThreads | null): Engine {
    return { loadedModel: model, cpuThreads: () => threads } as unknown as Engine;
  }

  it("no GGUF loaded: the plan (single where not isolated)", () => {
    expect(wllamaThreads([])).toEqual({ threads: "single", n_threads: 1, source: "planned", cross_origin_isolated: false });
  });

  it("a loaded wllama: what it says, even where isolation would have planned otherwise", () => {
    scope.crossOriginIsolated = true;
    const loaded = engine("gguf-a", { multithread: false, n_threads: 1 });
    expect(wllamaThreads([engine(null, null), loaded])).toEqual({ threads: "single", n_threads: 1, source: "wllama", cross_origin_isolated: true, model: "gguf-a" });
    expect(wllamaThreads([engine("gguf-b", { multithread: true, n_threads: 4 })])).toMatchObject({ threads: "multi", n_threads: 4, source: "wllama", model: "gguf-b" });
  });

  it("per model: another model's engine does not answer for it; the record's engine.threads is planned", () => {
    scope.crossOriginIsolated = true;
    const other = engine("gguf-a", { multithread: true, n_threads: 4 });
    expect(wllamaThreads([other], "gguf-b", 1)).toMatchObject({ threads: "single", n_threads: 1, source: "planned" });
  });
});
