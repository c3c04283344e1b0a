/**
 * The measured step cost of the web-llm rows (src/engine/batching/measured-cost.ts)
 * with the choice it drives (cost-model.ts chooseForward), on the times the
 * real engine gives on SwiftShader: decode ~18 s, batch_decode of 2 rows
 * ~29 s, of 4 rows ~44 s, and a first batch_decode that pays minutes of kernel
 * compilation.
 */
import { describe, expect, it } from "vitest";
import { MeasuredStepCost } from "../../src/engine/batching/measured-cost.js";
import { chooseForward } from "../../src/engine/batching/cost-model.js";
import { chooseDraftLength } from "../../src/engine/speculative/draft-sizing.js";

const FOUR = [1, 1, 1, 1];
const TWO = [1, 1];

describe("measured step cost", () => {
  it("the first forward of a kind (kernel compilation) does not make batching look dear for good", () => {
    const cost = new MeasuredStepCost();
    cost.record("single", 1, 60_000); // first decode: compiling
    cost.record("single", 1, 18_000);
    cost.record("batch", 2, 180_000); // first batch_decode: compiling
    // 2 rows not yet measured: the prior (a batch costs about a decode) makes the scheduler try it
    expect(chooseForward(TWO, cost).mode).toBe("batch");
    cost.record("batch", 2, 29_000);
    // with decodes of 18 s, a batch of 2 (29 s) beats two decodes (36 s), and 4 rows are tried batched
    expect(chooseForward(TWO, cost).mode).toBe("batch");
    expect(chooseForward(FOUR, cost).mode).toBe("batch");
    cost.record("batch", 4, 62_000); // the first batch of 4 rows: dearer, not recorded
    cost.record("batch", 4, 44_000);
    expect(chooseForward(FOUR, cost)).toMatchObject({ mode: "batch", cost: 44_000 });
  });

  it("the first batch of each row count is a warm-up: a dear first 3-row batch does not keep 3 rows on single decodes", () => {
    // On the real engine (SwiftShader, loaded machine) the first 3-row batch cost 1.6× the next: here 105 s, then 40 s.
    const cost = new MeasuredStepCost();
    cost.record("single", 1, 60_000);
    cost.record("single", 1, 18_000);
    cost.record("batch", 2, 180_000);
    cost.record("batch", 2, 44_000);
    cost.record("batch", 3, 105_000);
    expect(chooseForward([1, 1, 1], cost).mode).toBe("batch");
    cost.record("batch", 3, 40_000);
    expect(cost.snapshot().batch_ms[3]).toBe(40_000);
    expect(chooseForward([1, 1, 1], cost)).toMatchObject({ mode: "batch", cost: 40_000 });
  });

  it("a batch size measured to lose keeps single decodes, and is tried again after a while", () => {
    const cost = new MeasuredStepCost();
    cost.record("single", 1, 13_500); // warm-up, not recorded
    cost.record("batch", 2, 200_000); // warm-up, not recorded
    cost.record("single", 1, 13_500);
    cost.record("batch", 2, 28_800); // the probe's numbers: 2 decodes cost 27 s
    expect(chooseForward(TWO, cost).mode).toBe("single");
    for (let i = 0; i < 70; i++) cost.record("single", 1, 13_500);
    // the measurement is old: the scheduler tries the batch once more
    expect(chooseForward(TWO, cost).mode).toBe("batch");
  });

  it("before any single decode is measured, a measured batch sets the unit: both sides of a choice are in ms", () => {
    const cost = new MeasuredStepCost();
    cost.record("batch", 2, 200_000); // compiling: not recorded
    cost.record("batch", 4, 60_000); // the first of 4 rows: not recorded
    cost.record("batch", 4, 44_000);
    // one decode is taken as 44 s / 1.1 (the prior's batch-to-decode ratio): four of them cost more than the batch
    expect(chooseForward(FOUR, cost)).toMatchObject({ mode: "batch", cost: 44_000 });
  });
});

describe("measured step cost by kind and size: prompt chunks", () => {
  it("a batch_prefill of mixed rows and a prompt chunk's prefill are measured apart from batch_decode and decode, by tokens", () => {
    const cost = new MeasuredStepCost();
    for (const ms of [60_000, 17_000]) cost.record("single", 1, ms);
    for (const ms of [200_000, 54_000]) cost.record("batch", 4, ms);
    // a step of 3 decoding rows and a 256-token chunk: batch_prefill of 4 rows, 259 tokens
    for (const ms of [300_000, 150_000]) cost.record("batch", 4, ms, 259);
    for (const ms of [250_000, 140_000]) cost.record("single", 1, ms, 256);
    expect(cost.batch(4, 4)).toBe(54_000);
    expect(cost.batch(4, 259)).toBe(150_000);
    // the same size bucket (a chunk of 200 is measured as one of 256)
    expect(cost.single(200)).toBe(140_000);
    expect(cost.single(1)).toBe(17_000);
    // separate forwards (three decodes and the chunk's prefill: 191 s) cost more than the mixed one (150 s)
    expect(chooseForward([1, 1, 1, 256], cost)).toMatchObject({ mode: "batch", cost: 150_000 });
    expect(cost.stepTimes()).toEqual({ decode: 17_000, batch_decode: { "4": 54_000 }, prefill: { "256": 140_000 }, batch_prefill: { "4x512": 150_000 } });
  });
});

describe("measured step cost: single forwards of sizes not run yet", () => {
  // The real engine on SwiftShader (a forced call, one row): a decode ~17 s, a verify ~78 s whatever its size up to ~30 tokens.
  const DECODE_MS = 17_000;
  const VERIFY_MS = 78_000;
  const measuredDecode = () => {
    const cost = new MeasuredStepCost();
    for (const ms of [60_000, DECODE_MS]) cost.record("single", 1, ms);
    return cost;
  };

  it("one measured verify prices verifies of nearby sizes, not the decode", () => {
    const cost = measuredDecode();
    for (const ms of [90_000, VERIFY_MS]) cost.record("single", 1, ms, 12); // a verify of 11 drafts (bucket 16)
    // 4 and 8 tokens: scaled from the 16-token verify by the prior's shape (before: from the decode, ~17 s, so each size was tried)
    expect(cost.single(4)).toBeGreaterThan(0.95 * VERIFY_MS);
    expect(cost.single(5)).toBeGreaterThan(0.95 * VERIFY_MS);
    expect(cost.single(30)).toBeGreaterThan(VERIFY_MS);
  });

  it("a forward over more tokens is never priced below a measured one over fewer", () => {
    const cost = measuredDecode();
    for (const ms of [90_000, VERIFY_MS]) cost.record("single", 1, ms, 4);
    // 256 tokens: too far from the 4-token verify to scale from it, and not below it either (before: ~21 s from the decode)
    expect(cost.single(256)).toBeGreaterThanOrEqual(VERIFY_MS);
  });

  it("after a prompt chunk's prefill (the same kernels), a verify's first run is measured, not taken as a warm-up", () => {
    const cost = measuredDecode();
    cost.record("single", 1, 400_000, 176); // the prompt's prefill: the first forward over more than one token
    cost.record("single", 1, VERIFY_MS, 12); // the first verify (bucket 16): measured (before: a warm-up, priced ~17 s from the decode)
    expect(cost.single(12)).toBe(VERIFY_MS);
    // A decode and a batch still have warm-ups of their own (compilation): the first batch_decode is not recorded.
    cost.record("batch", 2, 200_000);
    expect(cost.batch(2, 2)).toBeLessThan(200_000);
  });

  it("a decode is never priced from a measured verify: until a decode is measured, no draft is worth a verify measured dear", () => {
    const cost = new MeasuredStepCost();
    cost.record("single", 1, 400_000, 176); // the prompt's prefill (warm-up)
    cost.record("single", 1, VERIFY_MS, 12); // the first verify, measured; no decode ran yet
    const sizing = { single: (tokens: number) => cost.single(tokens) };
    // before: the decode was the verify over the prior's ratio (~71 s), so a 12-token draft at 0.9 looked 4× faster
    expect(chooseDraftLength(11, 0.9, sizing).length).toBe(0);
    for (const ms of [60_000, DECODE_MS]) cost.record("single", 1, ms);
    expect(cost.single(1)).toBe(DECODE_MS);
    // measured both: a verify of ~4.6 decodes pays for a draft that nearly always lands
    expect(chooseDraftLength(11, 0.97, sizing).length).toBeGreaterThan(0);
  });

  it("a long prompt chunk does not price a short verify: a device where verifies are cheap still tries drafts", () => {
    const cost = measuredDecode();
    for (const ms of [400_000, 290_000]) cost.record("single", 1, ms, 176); // the rest of a 432-token prompt (bucket 256)
    // 4 tokens: from the decode by the prior's shape, as before any verify ran
    expect(cost.single(4)).toBeLessThan(1.1 * DECODE_MS);
  });
});
