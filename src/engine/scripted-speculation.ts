/**
 * Speculative decoding, simulated by the scripted engine on its own tokens:
 * the scripted reply is what the model chooses, so a draft (from the same
 * proposer web-llm's binding uses) is accepted as far as it agrees with the
 * reply — greedy acceptance. The output never changes; what changes is the
 * count of forward passes, which is what apps' tests and the benchmark read
 * (`decode_passes`, `draft_tokens`, `accepted_draft_tokens`, and the
 * prediction counts).
 *
 * Passes: the prompt's prefill gives the first token; each later pass feeds
 * the last token plus a draft and gives the accepted draft tokens plus one.
 * A reply that ends by itself needs the pass that produces its end-of-text
 * token (unless a verify pass already produced it), as a real model does.
 */
import { DraftProposer, ENGINE_PROPOSER_OPTIONS, type DraftSources, type Proposer } from "./speculative/proposer.js";
import { SpeculationCounters, type SpeculationUsage } from "./speculative/counters.js";
import { acceptGreedy } from "./speculative/acceptance.js";
import type { ForwardCost } from "./speculative/draft-sizing.js";

/** The end-of-text token: no source holds it, so a draft running past the reply's end is rejected there. */
const END_OF_TEXT = -1;

export interface ScriptedSpeculationOptions {
  /** Drafts from this proposer instead of one built from `sources` (the bench's plain prompt lookup). */
  proposer?: Proposer;
  /**
   * The device's forward costs (a profile: `profileCost(verifyCostPerToken)`):
   * drafts are sized by them as on web-llm (draft-sizing.ts), and `cost`
   * adds up what the passes took. Absent: drafts sized by acceptance alone.
   */
  cost?: ForwardCost;
}

export class ScriptedSpeculation {
  /** Tokens produced by passes so far and not yet emitted (the prefill produces the first). */
  private ready = 1;
  /** Whether the prompt's pass (the first token's) was counted. */
  private prefilled = false;
  private readonly proposer: Proposer | null;
  private readonly counters: SpeculationCounters;
  private readonly forwardCost: ForwardCost | null;
  /** What the passes after the prefill cost by the device profile (0 without one). */
  cost = 0;
  /** Draft tokens the pass `next()` last ran verified (0: a plain decode, or no pass): a batching engine plans the step by it. */
  lastDraft = 0;
  /** Tokens those passes were expected to yield when their drafts were sized (the cost model's view; the bench compares it with what they yielded). */
  expectedTokens = 0;

  /**
   * `reply`: the model's tokens, in order; `sources`: where drafts come from, or
   * null with speculation off (every pass then decodes one token);
   * `predictionTokens`: the prediction's length, when the request has one
   * (with speculation off all of it is rejected, as nothing was drafted from it).
   */
  constructor(
    private readonly reply: readonly number[],
    sources: DraftSources | null,
    predictionTokens?: number,
    options: ScriptedSpeculationOptions = {},
  ) {
    this.forwardCost = options.cost ?? null;
    this.proposer = options.proposer ?? (sources ? new DraftProposer(sources, { ...ENGINE_PROPOSER_OPTIONS, ...(options.cost ? { sizing: { cost: options.cost } } : {}) }) : null);
    this.counters = new SpeculationCounters(predictionTokens);
  }

  /**
   * Before emitting token `output.length`: runs a forward pass when none is left over (the first token's is the
   * prompt's prefill). `remaining`: tokens the request may still emit, this one included; `forced`: gives the tokens the
   * request's grammar forces next (jump-forward), the first draft source. Returns whether this token needs a pass
   * (what a batching engine waits for a step for).
   */
  next(output: readonly number[], remaining: number, forced?: () => readonly number[]): boolean {
    this.lastDraft = 0;
    if (this.ready > 0) {
      this.ready--;
      return this.firstPass();
    }
    const draft = this.proposer?.propose(output, remaining - 1, forced?.()) ?? [];
    const at = output.length;
    const verdict = acceptGreedy(draft, (i) => (at + i < this.reply.length ? this.reply[at + i] : END_OF_TEXT));
    this.proposer?.record(draft.length, verdict.accepted);
    this.counters.pass(draft.length, verdict.accepted, this.proposer?.lastSource === "grammar");
    if (this.forwardCost) {
      this.cost += this.forwardCost.single(draft.length + 1);
      this.expectedTokens += this.proposer?.lastExpectedTokens ?? 1;
    }
    this.ready = verdict.accepted; // accepted + 1 produced; one is emitted now
    this.lastDraft = draft.length;
    return true;
  }

  /** The first token left over is the prefill's: it needed the prompt's pass. */
  private firstPass(): boolean {
    if (this.prefilled) return false;
    this.prefilled = true;
    return true;
  }

  /** The reply ended by itself: its end-of-text token takes a pass unless one is left over. */
  end(output: readonly number[]): boolean {
    return this.next(output, 1);
  }

  /**
   * The counts, once the generation is over; `output`: every token it emitted.
   * Accepted draft tokens past the end (a stop string, an abort) never became
   * output: they are not counted as accepted.
   */
  usage(output: readonly number[]): SpeculationUsage {
    this.proposer?.observe(output);
    // What the last pass produced and nobody emitted: its accepted draft tokens, then its own token.
    this.counters.unused(Math.max(0, this.ready - 1));
    this.ready = 0;
    return this.counters.usage(this.proposer?.predictionTokensMatched ?? 0);
  }
}
