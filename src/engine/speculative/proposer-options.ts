/** How the draft proposer (proposer.ts) is set up: n-gram sizes, draft lengths, pauses, and sizing by cost. */
import type { ForwardCost } from "./draft-sizing.js";

export interface ProposerOptions {
  /** Longest n-gram looked up. Default 4. */
  maxNgram?: number;
  /** Shortest n-gram looked up (shorter matches are mostly chance). Default 2; the engines use 1 (ENGINE_PROPOSER_OPTIONS). */
  minNgram?: number;
  /** Longest draft. Default 16. */
  maxDraft?: number;
  /** First draft length. Default 4. */
  initialDraft?: number;
  /**
   * First draft length of a context lookup, and the least one drafts when its
   * match is strong (2 or more tokens, or a token the context holds at most
   * twice, of a kind accepted at least half the time in this generation)
   * however misses shrank the length. Default `initialDraft`.
   */
  lookupDraft?: number;
  /** Drafts in a row with nothing accepted before proposing pauses. Default 2. */
  missesBeforePause?: number;
  /** Longest pause, in steps. Default 64. */
  maxPause?: number;
  /**
   * Size each draft by what a pass costs on this device: the length (0 to
   * `maxDraft`) that maximises expected tokens per ms, from the source's
   * measured acceptance. Absent: the adaptive length alone.
   */
  sizing?: DraftSizing;
}

/**
 * What the engines draft with: single tokens looked up too, and lookups of
 * 8 tokens, as plain prompt lookup (n = 3..1, k = 8), which gets drafts
 * accepted after a name or a number that a 2-gram never finds (`"anna` →
 * `@example.com`, a quote's first word); a miss costs no pass. Open chat
 * stays protected by the pause and, where a verify costs, by the cost model.
 */
export const ENGINE_PROPOSER_OPTIONS: Readonly<ProposerOptions> = { minNgram: 1, lookupDraft: 8 };

export interface DraftSizing {
  /** Forward costs by tokens fed (the loaded model's ForwardCostEstimate, or a device profile). */
  cost: ForwardCost;
  /** Cost of a step served from a verified draft's row (sampling only). Default 0. */
  served?: () => number;
  /**
   * Tokens the pass gives other rows (continuous batching: `cost` is then
   * the whole step's, with this row feeding t tokens). Default 0: the pass is this request's alone.
   */
  others?: () => number;
}
