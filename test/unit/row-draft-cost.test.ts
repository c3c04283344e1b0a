/**
 * A lone row's drafts are weighed by what its verify measured on the device.
 * On the real engine (web-llm 0.2.79, SwiftShader) a forced tool call ran as
 * one row: its jump-forward drafts were verified in every one of 33 passes
 * (266 drafted, 14 accepted) at ~78 s a pass against ~17 s a decode. A lone
 * row runs the single forward, but the cost it was weighed by was the
 * cheaper of single and batched, and a batched forward of one row is never
 * run, so it stayed at its first guess (~1.1 decodes) for good.
 */
import { describe, expect, it } from "vitest";
import { chooseForward, type StepCostModel } from "../../src/engine/batching/cost-model.js";
import { MeasuredStepCost } from "../../src/engine/batching/measured-cost.js";
import { rowPassCost } from "../../src/engine/webllm/batching/webllm-row-drafts.js";
import { DraftProposer, ENGINE_PROPOSER_OPTIONS } from "../../src/engine/speculative/proposer.js";

const DECODE_MS = 17_000;
const VERIFY_MS = 78_000;

describe("a lone row's pass", () => {
  it("runs, and is priced as, the single forward, even where a batched guess is cheaper", () => {
    const batchLooksCheap: StepCostModel = { single: (tokens) => 10 * tokens, batch: () => 5 };
    expect(chooseForward([9], batchLooksCheap)).toEqual({ mode: "single", passes: 1, cost: 90 });
    // Several rows still share a batched forward where it is cheaper.
    expect(chooseForward([9, 1], batchLooksCheap)).toEqual({ mode: "batch", passes: 1, cost: 5 });
  });

  it("a forced call's drafts stop once its verifies are measured dear and mostly rejected", () => {
    const { draftedAt } = replayForcedCall();
    // Each verify size is tried until measured (the first of a size is not recorded), then no more: the last 20 passes decode.
    expect(draftedAt.length).toBeLessThanOrEqual(10);
    expect(draftedAt.filter((pass) => pass >= 13)).toEqual([]);
  });

  it("one measured verify stops the drafts of every size: the loss is the few verifies that measured it", () => {
    const { draftedAt, ms, tokens } = replayForcedCall(33, { promptPrefilled: false });
    // Before, sizes not run yet were priced from the decode: 8 passes drafted (36 tokens in 1 049 s); now 2: the
    // first verify warms the kernels (not recorded), the second is measured.
    expect(draftedAt).toEqual([0, 1]);
    // 2 verifies (~78 s) where decodes (~17 s) would have done: what trying the drafts costs on this device, once.
    expect(ms / tokens).toBeLessThan(1.2 * DECODE_MS);
  });

  it("after the row's prompt was prefilled (its kernels warm), the first verify is measured: one verify is the whole loss", () => {
    // The real engine (4da72e6 – 55664a4, a forced call alone on SwiftShader): the first verify of each size was a
    // warm-up, so two or more verifies ran before a measured one stopped the drafts (36 tokens: 40 drafted, 5 accepted,
    // 435 s against 377 s without drafts).
    const { draftedAt, ms, tokens } = replayForcedCall(33, { promptPrefilled: true });
    expect(draftedAt).toEqual([0]);
    expect(ms / tokens).toBeLessThan(1.1 * DECODE_MS);
  });

  it("with no decode measured yet (the grammar forces from the first step), the decode is not priced from the verify", () => {
    // The real engine (f7dfa31, the first request on the model): once the first verify was measured, the decode,
    // never run, was priced from it by the prior's shape (a verify ≈ 1.1 decodes), so every verify looked worth it
    // and no decode ever ran to say otherwise: 17 passes for 36 tokens, all drafted, 103 drafted and 18 accepted,
    // 721 s against 377 s without drafts. (No step was served from a verify yet: served steps cost 0 until timed.)
    const { draftedAt, ms, tokens } = replayForcedCall(33, { promptPrefilled: true, decodesFirst: false, servedMs: 0 });
    expect(draftedAt.length).toBeLessThanOrEqual(2);
    expect(draftedAt.filter((pass) => pass >= 4)).toEqual([]);
    expect(ms / tokens).toBeLessThan(1.15 * DECODE_MS);
  });
});

/**
 * A forced call as one row, replayed with the rows' runner's recording: every
 * forward of a lone row is single, by the tokens it fed (its prompt's
 * prefill first, unless `promptPrefilled` is false). The grammar forces
 * 3..15 tokens next; the model takes one of them every third pass.
 */
function replayForcedCall(passes = 33, { promptPrefilled = true, decodesFirst = true, servedMs = 5 } = {}): { draftedAt: number[]; ms: number; tokens: number } {
  const measured = new MeasuredStepCost();
  // The row's prompt (156 tokens) is fed by a single forward of the steps before its first decode.
  if (promptPrefilled) measured.record("single", 1, 170_000, 156);
  // Decodes measured before (an earlier request on the model), or none: the grammar forces from the first step.
  if (decodesFirst) for (let i = 0; i < 3; i++) measured.record("single", 1, DECODE_MS, 1);
  const proposer = new DraftProposer(
    { prompt: Array.from({ length: 50 }, (_, i) => 1000 + i) },
    { ...ENGINE_PROPOSER_OPTIONS, sizing: { cost: { single: (tokens) => rowPassCost([], tokens, measured) }, served: () => servedMs, others: () => 0 } },
  );
  const output: number[] = [];
  const draftedAt: number[] = [];
  let ms = 0;
  for (let pass = 0; pass < passes; pass++) {
    const forced = Array.from({ length: 3 + ((pass * 7) % 13) }, (_, i) => 9000 + pass * 20 + i);
    const draft = proposer.propose(output, 40, forced);
    const accepted = draft.length > 0 && pass % 3 === 0 ? 1 : 0;
    const passMs = draft.length > 0 ? VERIFY_MS : DECODE_MS;
    measured.record("single", 1, passMs, draft.length + 1);
    ms += passMs;
    if (draft.length > 0) {
      proposer.record(draft.length, accepted);
      draftedAt.push(pass);
    }
    output.push(...draft.slice(0, accepted), 5000 + pass);
  }
  return { draftedAt, ms, tokens: output.length };
}
