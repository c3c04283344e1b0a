/**
 * How long a draft should be on this device. A verify pass over the last
 * token plus k draft tokens costs more than a decode step, by how much
 * depends on the device: on a GPU a decode is bound by reading the weights
 * and a verify of k ≤ 8 costs about one step; on a compute-bound device
 * (SwiftShader) it costs several (the verify probe: a 4-token verify ≈ 3.3
 * decodes; issue 34: ≈ 4 decodes per 5-token verify, flat up to ~30 tokens).
 * So the draft length is chosen to maximise the expected tokens per
 * millisecond, from
 * - the forward costs, measured online per loaded model
 *   (`ForwardCostEstimate`, a StepCostModel like the batching work's, so the
 *   same numbers can size the rows of a batched step), and
 * - each draft source's measured acceptance (`AcceptanceEstimate`).
 * Length 0 (decode as without speculation) is always a candidate, so by the
 * model speculation never costs time; where a verify is nearly free, drafts
 * grow long. Pure: tested in Node on recorded profiles.
 */
import type { StepCostModel } from "../batching/cost-model.js";

/** Forward costs by the number of tokens a single-sequence pass feeds (1: a decode; 1 + k: a verify of k draft tokens). */
export type ForwardCost = Pick<StepCostModel, "single">;

/**
 * SwiftShader, as measured on the real engine (Qwen2-0.5B, web-llm 0.2.79;
 * the verify probe and issue 34): a decode ≈ 15 s; a verify ≈ 4 decodes,
 * flat up to ~30 tokens (compute-bound, the kernels' tiles are that wide),
 * then growing with the tokens. A batched step of 1 row costs twice a decode.
 */
export const SWIFTSHADER_COST: StepCostModel = {
  single: (tokens) => (tokens <= 1 ? 15_000 : 60_000 * Math.max(1, tokens / 30)),
  batch: (rows, tokens) => 27_000 + 5_500 * Math.max(0, rows - 1) + 2_000 * Math.max(0, tokens - rows),
};

/** A GPU: decode bound by reading the weights; a verify of k ≤ 8 ≈ 1.1 decodes, then a little more per token. */
export const GPU_LIKE_COST: StepCostModel = {
  single: (tokens) => (tokens <= 1 ? 10 : 11 + 0.5 * Math.max(0, tokens - 9)),
  batch: (_rows, tokens) => 11 + 0.5 * Math.max(0, tokens - 9),
};

/**
 * A device profile for the scripted engine (and a first guess anywhere): a
 * forward over t tokens costs `verifyPerToken` × t decode steps, at least
 * one. 0.2 ≈ a GPU (a 5-token verify ≈ one step), 0.8 ≈ SwiftShader (a
 * 5-token verify ≈ 4 steps); at 1 a verify costs what decoding its tokens one
 * by one does, and no draft pays.
 */
export function profileCost(verifyPerToken: number): StepCostModel {
  const perToken = Math.max(0, verifyPerToken);
  const single = (tokens: number) => (tokens <= 1 ? 1 : Math.max(1, perToken * tokens));
  return { single, batch: (rows, tokens) => single(Math.max(rows, tokens)) };
}

export interface CostEstimateOptions {
  /** Weight of each new measurement once a few are in: small, so the estimate forgets slowly. Default 0.1. */
  forget?: number;
  /**
   * The first guess, before a pass of that size was measured: its shape,
   * scaled to the nearest measured size. Default: a GPU's shape (a verify ≈
   * a decode), the optimistic one — so the first worthwhile draft is tried
   * and its verify measured (the probe), and from then on the measured cost
   * decides; a pessimistic guess would never try a verify to learn better.
   */
  firstGuess?: StepCostModel;
}

/** Pass sizes measured one by one; longer passes are scaled from the nearest measured one. */
const MAX_MEASURED_TOKENS = 64;

/** A running estimate of one size's cost: a mean for the first 1/forget measurements, then an exponential average. */
class Running {
  value = 0;
  count = 0;

  add(ms: number, forget: number): void {
    this.count++;
    this.value += Math.max(1 / this.count, forget) * (ms - this.value);
  }
}

/**
 * What forwards cost on this device, measured online: per pass size (tokens
 * fed), a running average that forgets slowly, plus the cost of a step that
 * only samples from a row a verify already computed (`served`). Sizes not
 * measured yet take the first guess's shape, scaled to the nearest measured
 * size, so one measured decode and one measured verify calibrate them all.
 */
export class ForwardCostEstimate implements StepCostModel {
  private readonly forget: number;
  private readonly guess: StepCostModel;
  private readonly sizes: Running[] = [];
  private readonly servedSteps = new Running();
  private readonly batches = new Map<string, Running>();

  constructor(options: CostEstimateOptions = {}) {
    this.forget = Math.min(1, Math.max(0.001, options.forget ?? 0.1));
    this.guess = options.firstGuess ?? GPU_LIKE_COST;
  }

  /** A single-sequence pass over `tokens` tokens took `ms` (a decode step: 1; a verify of k drafts: k + 1). */
  observe(tokens: number, ms: number): void {
    if (!(tokens >= 1) || tokens > MAX_MEASURED_TOKENS || !(ms >= 0) || !Number.isFinite(ms)) return;
    (this.sizes[Math.floor(tokens)] ??= new Running()).add(ms, this.forget);
  }

  /** A step served from a verified draft's row (sampling only, no forward) took `ms`. */
  observeServed(ms: number): void {
    if (ms >= 0 && Number.isFinite(ms)) this.servedSteps.add(ms, this.forget);
  }

  /** A batched pass of `rows` rows and `tokens` tokens took `ms` (continuous batching: the step runner's forward). */
  observeBatch(rows: number, tokens: number, ms: number): void {
    if (!(rows >= 1) || !(ms >= 0) || !Number.isFinite(ms)) return;
    const key = `${rows}:${tokens}`;
    let running = this.batches.get(key);
    if (!running) this.batches.set(key, (running = new Running()));
    running.add(ms, this.forget);
  }

  /** Whether any pass was measured yet. */
  get measured(): boolean {
    return this.sizes.some((s) => s !== undefined && s.count > 0);
  }

  /** Whether passes over `tokens` tokens were measured (a decode: 1). */
  has(tokens: number): boolean {
    return (this.sizes[Math.floor(tokens)]?.count ?? 0) > 0;
  }

  /** A step served from a verified draft (0 until measured: the scripted engine's case). */
  served(): number {
    return this.servedSteps.count > 0 ? this.servedSteps.value : 0;
  }

  single(tokens: number): number {
    const size = Math.max(1, Math.floor(tokens));
    const known = (s: number) => (this.sizes[s]?.count ?? 0) > 0;
    if (size <= MAX_MEASURED_TOKENS && known(size)) return this.sizes[size].value;
    // A decode runs other kernels than a verify: never scaled from one. Not measured yet, it is the first guess's, so a
    // measured verify is not weighed against a decode priced from itself: drafts wait for a measured decode.
    if (size === 1) return this.guess.single(1);
    // A verify scales from the nearest measured verify, else from the decode.
    let nearest = -1;
    for (let s = 2; s < this.sizes.length; s++) if (known(s) && (nearest < 0 || Math.abs(s - size) < Math.abs(nearest - size))) nearest = s;
    if (nearest < 0 && known(1)) nearest = 1;
    if (nearest < 0) return this.guess.single(size);
    return (this.sizes[nearest].value * this.guess.single(size)) / this.guess.single(nearest);
  }

  batch(rows: number, tokens: number): number {
    const measured = this.batches.get(`${rows}:${tokens}`);
    if (measured) return measured.value;
    // Unmeasured: the first guess in units of its decode, scaled by the (measured) decode.
    return (this.guess.batch(rows, tokens) * this.single(1)) / this.guess.single(1);
  }
}

export interface AcceptanceOptions {
  /** Prior chance that a draft token is accepted, given the ones before it were. Default 0.5. */
  prior?: number;
  /** How many draft tokens' worth the prior weighs. Default 6: a few lucky or unlucky drafts do not swing it. */
  priorWeight?: number;
  /** Each new verdict shrinks the weight of the old ones by this share (forgets slowly). Default 0.05. */
  forget?: number;
}

/**
 * One draft source's measured acceptance, as a per-token continuation
 * chance a: a draft token is accepted with chance a once the tokens before
 * it were (geometric: a draft of k gives a + a² + … + a^k accepted tokens on
 * average). Estimated from the verdicts: accepted tokens over the tokens the
 * model judged (accepted, plus the one it rejected), starting from a prior.
 */
export class AcceptanceEstimate {
  private accepted: number;
  private judged: number;
  private readonly forget: number;

  constructor(options: AcceptanceOptions = {}) {
    const weight = Math.max(0, options.priorWeight ?? 6);
    this.accepted = Math.min(1, Math.max(0, options.prior ?? 0.5)) * weight;
    this.judged = weight;
    this.forget = Math.min(1, Math.max(0, options.forget ?? 0.05));
  }

  /** A verify pass kept `accepted` of `drafted` tokens. */
  record(drafted: number, accepted: number): void {
    if (drafted <= 0) return;
    const keep = 1 - this.forget;
    this.accepted = this.accepted * keep + accepted;
    this.judged = this.judged * keep + accepted + (accepted < drafted ? 1 : 0);
  }

  /** The per-token continuation chance. */
  get rate(): number {
    return this.judged > 0 ? Math.min(1, this.accepted / this.judged) : 0;
  }
}

/** Expected accepted tokens of a draft of `k` at per-token continuation chance `a`. */
export function expectedAccepted(a: number, k: number): number {
  let sum = 0;
  let p = 1;
  for (let i = 0; i < k; i++) sum += p *= a;
  return sum;
}

export interface DraftChoice {
  /** Draft tokens to verify (0: decode one token as without speculation). */
  length: number;
  /** Expected tokens per unit of cost with that length, and with none. */
  rate: number;
  rateWithout: number;
}

/**
 * The draft length in 0..`available` that maximises expected tokens per unit
 * of cost: a pass with k draft tokens yields 1 + E[accepted] tokens and
 * costs a forward over k + 1 tokens plus a served step per accepted token.
 * Ties go to the shorter draft (less wasted work, the same speed). A draft
 * must promise `margin` more than decoding without one (default 25 %): the
 * acceptance is an estimate, and a bet that barely pays on average loses
 * time whenever the estimate is high.
 *
 * In a step of continuous batching the pass is the step: `cost.single(t)` is
 * then what the step costs with this row feeding t tokens (its token and a
 * draft of t - 1) beside the other rows, and `others` the tokens the step
 * gives the other rows, so a draft must pay for what it adds to everyone's
 * step, not only to its own row's.
 */
export function chooseDraftLength(available: number, acceptance: number, cost: ForwardCost, served = 0, margin = DRAFT_MARGIN, others = 0): DraftChoice {
  const base = 1 + Math.max(0, others);
  const rateWithout = base / Math.max(Number.MIN_VALUE, cost.single(1));
  let best = { length: 0, rate: rateWithout };
  for (let k = 1; k <= available; k++) {
    const gained = expectedAccepted(acceptance, k);
    const rate = (base + gained) / Math.max(Number.MIN_VALUE, cost.single(k + 1) + served * gained);
    if (rate > best.rate * (1 + 1e-9) && rate > rateWithout * (1 + margin)) best = { length: k, rate };
  }
  return { ...best, rateWithout };
}

/** How much faster than decoding alone a draft must promise to be. */
export const DRAFT_MARGIN = 0.25;
