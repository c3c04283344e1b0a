/**
 * Which forward a step runs. A step holds rows of `tokens` each; it can run
 * as one batched forward over all of them (web-llm's `batch_decode` /
 * `batch_prefill`) or as one single-sequence forward per row (`decode` /
 * `prefill`, today's path). What each costs is measured per engine and
 * device, so the caller supplies it: on a GPU, where a decode step is bound by
 * reading the weights, a batched step of 4 rows costs about one row's step;
 * on a compute-bound device (SwiftShader) `batch_decode` with one row costs
 * twice `decode`, so a step with one row must keep the single forward.
 */

export interface StepCostModel {
  /** Cost (any unit, e.g. ms) of one single-sequence forward over `tokens` tokens. */
  single(tokens: number): number;
  /** Cost of one batched forward over `rows` rows holding `tokens` tokens in all. */
  batch(rows: number, tokens: number): number;
}

export interface ForwardChoice {
  mode: "batch" | "single";
  /** Forward passes the step takes: 1 batched, or one per row. */
  passes: number;
  /** What the cost model says the step costs. */
  cost: number;
}

/**
 * The cheaper way to run a step whose rows feed `rowTokens` tokens each. A
 * tie batches several rows (fewer passes). One row always takes the single
 * forward, as the rows' runner runs it: a lone row is never batched, so a
 * batched cost for it would never be measured, and its first guess (a GPU's,
 * ~1.1 decodes whatever the tokens) would price a lone row's verify as nearly
 * free for good (real engine, SwiftShader: a forced call's jump-forward
 * drafts kept being verified at 4.6 decodes a pass, 14 of 266 accepted).
 */
export function chooseForward(rowTokens: readonly number[], cost: StepCostModel): ForwardChoice {
  const rows = rowTokens.length;
  const singleCost = rowTokens.reduce((sum, tokens) => sum + cost.single(tokens), 0);
  if (rows <= 1) return { mode: "single", passes: rows, cost: singleCost };
  const batchCost = cost.batch(rows, rowTokens.reduce((sum, tokens) => sum + tokens, 0));
  return batchCost <= singleCost ? { mode: "batch", passes: 1, cost: batchCost } : { mode: "single", passes: rows, cost: singleCost };
}

/**
 * A GPU-like cost: a forward costs one unit (reading the weights) plus a
 * little per token, and a batched forward carries a 10% overhead, so one row
 * stays on the single forward and two or more rows share one. The scripted
 * engine's default; not a measurement of any device.
 */
export const WEIGHT_BOUND_COST: StepCostModel = {
  single: (tokens) => 1 + tokens / 1024,
  batch: (_rows, tokens) => 1.1 + tokens / 1024,
};
