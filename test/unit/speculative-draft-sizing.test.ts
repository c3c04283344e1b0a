/**
 * Drafts sized by what a pass costs on the device (issue 34): the online cost
 * estimate, the length chooser, and — over the bench's recorded tasks decoded
 * again on their own tokens — the time speculation takes against the time
 * without it, on SwiftShader's measured profile and on a GPU-like one.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  AcceptanceEstimate,
  ForwardCostEstimate,
  GPU_LIKE_COST,
  SWIFTSHADER_COST,
  chooseDraftLength,
  expectedAccepted,
  profileCost,
} from "../../src/engine/speculative/draft-sizing.js";
import { recordedTasks, simulate, type RecordedTask } from "../../bench/speculative.js";

describe("forward cost estimate", () => {
  it("learns a decode and a verify, and scales sizes it has not seen from the nearest measured one", () => {
    const costs = new ForwardCostEstimate({ firstGuess: SWIFTSHADER_COST });
    expect(costs.single(5) / costs.single(1), "the first guess: a verify ≈ 4 decodes").toBeCloseTo(4);
    costs.observe(1, 20);
    expect(costs.single(1)).toBe(20);
    expect(costs.single(5), "no verify measured: the guess's shape on the measured decode").toBeCloseTo(80);
    costs.observe(5, 22);
    expect(costs.single(5)).toBe(22);
    expect(costs.single(9), "from the measured verify, not the decode").toBeCloseTo(22);
  });

  it("a decode is never priced from a measured verify: until one is measured, a dear verify is not worth a draft", () => {
    const costs = new ForwardCostEstimate();
    // the grammar forced a draft at the first step: a verify was measured (SwiftShader, ms), no decode yet
    costs.observe(12, 78_000);
    // before: the decode was the verify over the first guess's ratio (~71 s), so a draft looked 4× faster
    expect(chooseDraftLength(11, 0.9, costs).length).toBe(0);
    costs.observe(1, 17_000);
    expect(chooseDraftLength(11, 0.97, costs).length).toBeGreaterThan(0);
  });

  it("forgets slowly: one outlier moves it a little, a lasting change moves it all the way", () => {
    const costs = new ForwardCostEstimate({ forget: 0.1 });
    for (let i = 0; i < 20; i++) costs.observe(1, 10);
    costs.observe(1, 100);
    expect(costs.single(1)).toBeLessThan(20);
    for (let i = 0; i < 60; i++) costs.observe(1, 30);
    expect(costs.single(1)).toBeGreaterThan(29);
  });

  it("a batched step (continuous batching): measured where it was, else the first guess scaled by the measured decode", () => {
    const costs = new ForwardCostEstimate({ firstGuess: SWIFTSHADER_COST });
    costs.observe(1, 30);
    expect(costs.batch(4, 4)).toBeCloseTo((SWIFTSHADER_COST.batch(4, 4) * 30) / 15_000);
    costs.observeBatch(4, 4, 70);
    expect(costs.batch(4, 4)).toBe(70);
  });

  it("ignores what is not a measurement", () => {
    const costs = new ForwardCostEstimate();
    costs.observe(1, Number.NaN);
    costs.observe(0, 5);
    costs.observe(1, -1);
    expect(costs.measured).toBe(false);
  });
});

describe("draft length chooser", () => {
  it("drafts nothing where a verify costs several decodes and drafts are often wrong", () => {
    expect(chooseDraftLength(16, 0.5, SWIFTSHADER_COST).length).toBe(0);
    expect(chooseDraftLength(16, 0.7, SWIFTSHADER_COST).length, "at most 1/(1 − 0.7) ≈ 3.3 tokens a pass: less than a verify costs").toBe(0);
  });

  it("drafts long where a verify is nearly free, or the drafts are nearly always right", () => {
    expect(chooseDraftLength(16, 0.5, GPU_LIKE_COST).length).toBeGreaterThanOrEqual(2);
    expect(chooseDraftLength(8, 0.9, GPU_LIKE_COST).length).toBe(8);
    expect(chooseDraftLength(16, 0.95, SWIFTSHADER_COST).length, "flat up to ~30 tokens: the whole draft").toBe(16);
  });

  it("maximises expected tokens per unit of cost", () => {
    const cost = profileCost(0.5); // a verify of k costs k/2 decodes (at least one)
    for (const a of [0.3, 0.6, 0.8, 0.95]) {
      const chosen = chooseDraftLength(12, a, cost, 0, 0);
      for (let k = 0; k <= 12; k++) {
        const rate = (1 + expectedAccepted(a, k)) / cost.single(k + 1);
        expect(chosen.rate, `a = ${a}, k = ${k}`).toBeGreaterThanOrEqual(rate - 1e-12);
      }
    }
  });

  it("in a step of several rows (continuous batching), a draft pays for what it adds to the whole step", () => {
    // the step's cost with this row feeding t tokens beside 3 rows of one token each: SwiftShader's batched forward
    const step = { single: (t: number) => SWIFTSHADER_COST.batch(4, 3 + t) };
    // counting only its own token, a draft on this batched cost pays at 50 % acceptance (its added cost against one
    // token); the step also gives 3 other rows a token each, and against the 4 the same draft gains too little
    const alone = chooseDraftLength(4, 0.5, step, 0, undefined, 0);
    const beside = chooseDraftLength(4, 0.5, step, 0, undefined, 3);
    expect(alone.length).toBeGreaterThan(0);
    expect(beside.length).toBe(0);
    expect(beside.rateWithout).toBeCloseTo(4 / step.single(1));
    // where the step's cost hardly grows with its tokens (a GPU), the draft pays beside the other rows too
    const gpu = { single: (t: number) => GPU_LIKE_COST.batch(4, 3 + t) };
    expect(chooseDraftLength(8, 0.8, gpu, 0, undefined, 3).length).toBeGreaterThan(0);
  });

  it("measures a source's acceptance per token from the verdicts", () => {
    const acceptance = new AcceptanceEstimate({ prior: 0.5, priorWeight: 2, forget: 0 });
    for (let i = 0; i < 20; i++) acceptance.record(8, 8);
    expect(acceptance.rate).toBeGreaterThan(0.95);
    for (let i = 0; i < 40; i++) acceptance.record(8, 0);
    expect(acceptance.rate).toBeLessThan(0.8);
  });
});

describe("time over the recorded tasks (bench/speculative.ts), drafting against speculation off", () => {
  let tasks: RecordedTask[] = [];
  beforeAll(async () => {
    tasks = await recordedTasks();
  }, 60_000);

  for (const [device, cost, overall] of [
    ["SwiftShader (a verify ≈ 4 decodes)", SWIFTSHADER_COST, 0.75],
    ["a GPU (a verify of k ≤ 8 ≈ 1.1 decodes)", GPU_LIKE_COST, 0.35],
  ] as const) {
    it(`on ${device}: never slower on the whole, each task at most 1 % (one unlucky draft), and faster by ${overall}× or better`, () => {
      let on = 0;
      let off = 0;
      for (const t of tasks) {
        const drafting = simulate(t, { cost });
        const alone = simulate(t, { cost, off: true });
        expect(alone.passes, t.task).toBe(alone.tokens);
        expect(drafting.cost, t.task).toBeLessThanOrEqual(alone.cost * 1.01);
        on += drafting.cost;
        off += alone.cost;
      }
      expect(on).toBeLessThanOrEqual(off * overall);
    });
  }

  it("on a GPU drafts long: tasks that copy (half their tokens or more drafted and accepted) take well under half the time", () => {
    for (const t of tasks.filter((t) => simulate(t).passes / simulate(t).tokens < 0.5)) {
      const ratio = simulate(t, { cost: GPU_LIKE_COST }).cost / simulate(t, { cost: GPU_LIKE_COST, off: true }).cost;
      expect(ratio, t.task).toBeLessThan(0.5);
    }
  });

  it("the cost model decides: the same tasks on SwiftShader draft less than on a GPU", () => {
    const drafted = (cost: typeof GPU_LIKE_COST) => tasks.reduce((sum, t) => sum + simulate(t, { cost }).draftTokens, 0);
    expect(drafted(SWIFTSHADER_COST)).toBeLessThan(drafted(GPU_LIKE_COST));
  });
});
