/**
 * One generation's speculative drafts, engine-neutral: where its drafts come
 * from (the proposer over its prompt, prediction and cached replies), the
 * verified draft whose logits wait for the decode steps that feed its tokens,
 * and its counts. Shared by web-llm's speculative binding (one request on the
 * pipeline, webllm/speculative/webllm-speculative.ts) and the rows of
 * continuous batching (a draft per decoding row, verified in the step's
 * forward beside the other rows, webllm/batching/webllm-row-drafts.ts).
 *
 * Acceptance is the engine's own sampler, run once per token as without
 * speculation: a decode step samples from the logits at the draft position it
 * has reached, and the drafted token there is kept when the sampled token
 * equals it (`serve`). Greedy, that is the longest agreeing prefix; sampling,
 * exact speculative sampling for a deterministic draft (kept with the
 * probability the final distribution gives it, otherwise the sample is a draw
 * from the rest), with one random draw per token, so a seed reproduces.
 */
import { DraftProposer, ENGINE_PROPOSER_OPTIONS, type DraftSizing, type DraftSources } from "./proposer.js";
import { SpeculationCounters, type SpeculationUsage } from "./counters.js";

/** A verified draft: its logits at each position wait for the steps that feed its tokens. */
interface Pending<R> {
  draft: number[];
  /** The verify's logits: position 0 after the fed token, position i after draft token i. */
  rows: R;
  /** Draft tokens already fed back (accepted). */
  used: number;
  /** The grammar forced them (jump-forward). */
  forced: boolean;
  /** Takes the `rest` rejected or unused draft tokens out of the sequence (and frees what the rows hold). */
  release(rest: number): void;
}

export class DraftSession<R> {
  private readonly counts: SpeculationCounters;
  private proposer: DraftProposer | null = null;
  private pending: Pending<R> | null = null;

  /**
   * `sources`: asked when the first draft is proposed (the prompt may only be
   * known once it was fed); `prediction`: the request's expected output as
   * token ids; `sizing`: the costs drafts are sized by (draft-sizing.ts).
   */
  constructor(
    private readonly sources: () => Omit<DraftSources, "prediction">,
    private readonly prediction: readonly number[] | undefined,
    private readonly sizing: DraftSizing,
  ) {
    this.counts = new SpeculationCounters(prediction?.length);
  }

  /** Whether a verified draft waits for its tokens to be fed. */
  get hasPending(): boolean {
    return this.pending !== null;
  }

  /** Takes in the output without proposing (a plain step before any draft). */
  observe(output: readonly number[]): void {
    this.proposerOf().observe(output);
  }

  /** A draft after `output`, at most `limit` tokens; `forced`: what the request's grammar forces next (jump-forward). */
  propose(output: readonly number[], limit: number, forced?: readonly number[]): number[] {
    return this.proposerOf().propose(output, limit, forced);
  }

  /** Whether the draft last proposed was the grammar's (jump-forward). */
  get lastForced(): boolean {
    return this.proposer?.lastSource === "grammar";
  }

  /** A plain decode step (no draft) ran a forward pass. */
  plainPass(): void {
    this.counts.pass(0, 0);
  }

  /** `draft` went through one forward pass after the fed token; its logits wait in `rows` (position 0 is the step's). */
  verified(draft: number[], rows: R, release: (rest: number) => void): void {
    this.settle();
    this.pending = { draft, rows, used: 0, forced: this.lastForced, release };
  }

  /**
   * The step feeds `token`: when it is the pending draft's next token, the
   * sequence already holds it and the step takes the logits after it, with
   * no forward: `take(rows, position)` (before the draft is settled, when
   * that was its last token). Otherwise null: the rejected rest of the draft
   * is released first, and the step runs as a fresh one.
   */
  serve<T>(token: number, take: (rows: R, at: number) => T): T | null {
    const pending = this.pending;
    if (!pending) return null;
    if (pending.draft[pending.used] !== token) {
      this.settle();
      return null;
    }
    pending.used++;
    const served = take(pending.rows, pending.used);
    if (pending.used === pending.draft.length) this.settle();
    return served;
  }

  /**
   * Closes the pending draft: its rejected or unused tokens leave the
   * sequence; the verify pass is counted and the proposer learns what was kept.
   */
  settle(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    pending.release(pending.draft.length - pending.used);
    this.proposer?.record(pending.draft.length, pending.used);
    this.counts.pass(pending.draft.length, pending.used, pending.forced);
  }

  /** The generation ended: the pending draft is settled; its counts, the prediction's walked to the output's end. */
  end(output: readonly number[] | null): SpeculationUsage {
    this.settle();
    let matched = 0;
    if (this.prediction && output) {
      const proposer = this.proposerOf();
      proposer.observe(output);
      matched = proposer.predictionTokensMatched;
    }
    return this.counts.usage(matched);
  }

  private proposerOf(): DraftProposer {
    this.proposer ??= new DraftProposer({ ...this.sources(), prediction: this.prediction }, { ...ENGINE_PROPOSER_OPTIONS, sizing: this.sizing });
    return this.proposer;
  }
}
