/**
 * Plain prompt-lookup decoding, the reference our proposer is held to
 * (issue 34): look up the last n tokens (n = 3, then 2, then 1) in the
 * context (prompt, then output so far), take the earliest earlier
 * occurrence, and draft the k = 8 tokens that followed it. No pauses, no
 * adaptive length, no other sources: Hugging Face's `prompt_lookup_num_tokens`
 * and vLLM's n-gram proposer work this way.
 */
import type { Proposer } from "../src/engine/speculative/proposer.js";

export class PlainPromptLookup implements Proposer {
  private readonly context: number[];
  private seen = 0;

  constructor(
    prompt: readonly number[],
    private readonly maxNgram = 3,
    private readonly minNgram = 1,
    private readonly k = 8,
  ) {
    this.context = [...prompt];
  }

  readonly predictionTokensMatched = 0;

  observe(output: readonly number[]): void {
    for (let i = this.seen; i < output.length; i++) this.context.push(output[i]);
    this.seen = Math.max(this.seen, output.length);
  }

  propose(output: readonly number[], limit = Infinity): number[] {
    this.observe(output);
    const ctx = this.context;
    const total = ctx.length;
    const k = Math.min(this.k, Math.floor(limit));
    if (k <= 0) return [];
    for (let n = Math.min(this.maxNgram, total - 1); n >= this.minNgram; n--) {
      // Earliest occurrence that something follows (never the ending itself).
      for (let end = n; end < total; end++) {
        let same = true;
        for (let j = 1; j <= n && same; j++) same = ctx[end - j] === ctx[total - j];
        if (same) return ctx.slice(end, Math.min(total, end + k));
      }
    }
    return [];
  }

  record(): void {}
}
