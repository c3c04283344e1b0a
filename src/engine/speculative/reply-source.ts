/**
 * A reply the proposer drafts from (proposer.ts): a request's prediction or a
 * reply the prompt cache holds after the same prompt, indexed once by n-gram,
 * with where the output lines up with it and which of its tokens appeared.
 */
import { NgramIndex, ngramHash } from "./ngram-index.js";

/** Where a draft comes from, in the proposer's priority order. */
export type DraftSource = "grammar" | "prediction" | "cache" | "context";

/** A reply (prediction, cached reply) and its n-gram index. */
export class ReplySource {
  readonly index: NgramIndex[] = [];
  /** Position in `tokens` the end of the output lines up with; null once they disagree (until a lookup resyncs). */
  aligned: number | null = 0;
  /** Where it last lined up: a lookup prefers matches after it. */
  cursor = 0;
  /** Positions the output lined up with (each counted once), and how many. */
  private readonly matched: Uint8Array;
  matchedCount = 0;

  constructor(
    readonly tokens: readonly number[],
    readonly kind: DraftSource,
    minN: number,
    maxN: number,
  ) {
    this.matched = new Uint8Array(tokens.length);
    for (let n = minN; n <= maxN; n++) {
      const index = new NgramIndex(n, tokens.length);
      for (let end = n; end < tokens.length; end++) index.add(end, ngramHash(tokens, end - n, n));
      this.index.push(index);
    }
  }

  /** Tokens [from, to) appeared in the output. */
  mark(from: number, to: number): void {
    for (let i = Math.max(0, from); i < to; i++) {
      if (this.matched[i]) continue;
      this.matched[i] = 1;
      this.matchedCount++;
    }
  }
}
