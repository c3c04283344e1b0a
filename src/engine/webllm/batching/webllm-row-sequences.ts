/**
 * The rows' KV sequences on web-llm's paged cache: which sequence numbers
 * are free, where a row's prompt starts (a prefix forked from the prompt
 * cache or from another row), and what a finished row hands back to the
 * prompt cache. Rows share forward passes, never KV across
 * `prompt_cache_key`s: the prompt cache's side of each fork is keyed, as are
 * the cached replies a row drafts from.
 */
import type { KvOps } from "../prompt-cache/webllm-kv-ops.js";
import type { InputData } from "../prompt-cache/webllm-binding.js";

/**
 * Where a row's prompt can start from: forks the cached sequence that shares
 * the longest prefix with `full` (getInputData's whole prompt) into `child`
 * (which does not exist) and returns how many tokens it holds, or 0 (the
 * prompt cache's `forkInto`).
 */
export type PrefixSource = (child: number, full: InputData, key: string | undefined) => number;

/**
 * Where a finished row's KV goes instead of being dropped: copies sequence
 * `from`, which holds exactly `tokens` (prompt and reply), into the prompt
 * cache under `key` (the prompt cache's `keep`); false where it did not.
 */
export type KvKeeper = (from: number, tokens: readonly number[], key: string | undefined) => boolean;

/**
 * What the prompt cache holds after the whole prompt `tokens` (getInputData's,
 * as promptTokens gives them) under `key`: the replies a regenerate finds, a
 * row's draft source as for a request run alone (the prompt cache's
 * `repliesAfter`). Only `key`'s own.
 */
export type CachedReplies = (tokens: readonly number[], key: string | undefined) => ReadonlyArray<readonly number[]>;

/** Where rows' KV sequences are numbered: above any sequence the prompt cache uses. */
const ROW_SEQUENCE_BASE = 4096;

export class RowSequences {
  private readonly free: number[] = [];

  constructor(
    private readonly ops: KvOps,
    rows: number,
    private readonly prefix: PrefixSource | null,
    private readonly keeper: KvKeeper | null,
  ) {
    for (let i = 0; i < rows; i++) this.free.push(ROW_SEQUENCE_BASE + i);
  }

  get available(): boolean {
    return this.free.length > 0;
  }

  /** A free sequence, added (empty) to the cache. */
  take(): number {
    const seq = this.free.shift();
    if (seq === undefined) throw new Error("No row sequence is free.");
    this.ops.add(seq);
    return seq;
  }

  /** The row's sequence leaves the cache (between forwards) and is free again. */
  release(seq: number): void {
    try {
      this.ops.remove(seq);
    } finally {
      this.free.push(seq);
    }
  }

  /** Takes the last `n` tokens out of `seq` (a row's rejected draft tokens; exact after a 3-argument forward). */
  popn(seq: number, n: number): void {
    if (n > 0) this.ops.popn(seq, n);
  }

  /** Empties `seq` (web-llm's resetKVCache on a row's view). */
  reset(seq: number): void {
    this.ops.remove(seq);
    this.ops.add(seq);
  }

  /**
   * Fills the empty `seq` with the longest prefix of `full` it can take: the
   * prompt cache's (of `key`), or `donor`'s first `shared` tokens (another
   * row's prompt) where that shares more. Returns the tokens it holds.
   */
  startFrom(seq: number, full: InputData, key: string | undefined, donor: { seq: number; shared: number } | null): number {
    this.ops.remove(seq);
    let reused = 0;
    try {
      const fromCache = this.prefix ? this.prefix(seq, full, key) : 0;
      if (donor && donor.shared > fromCache) {
        if (fromCache > 0) this.ops.remove(seq);
        this.ops.fork(donor.seq, seq, donor.shared);
        reused = donor.shared;
      } else reused = fromCache;
    } finally {
      if (reused === 0) this.ops.add(seq);
    }
    return reused;
  }

  /** Replaces what `seq` holds with the first `at` tokens of row sequence `donor`. */
  forkFromRow(seq: number, donor: number, at: number): void {
    this.ops.remove(seq);
    try {
      this.ops.fork(donor, seq, at);
    } catch (error) {
      this.ops.add(seq);
      throw error;
    }
  }

  /**
   * Hands what `seq` holds to the prompt cache: `prompt` and the reply
   * tokens fed back, only where that is exactly what the sequence's length
   * says (a prompt with an image holds positions its tokens do not show:
   * never kept). A reply cut by `max_tokens` or a stop string holds every
   * output token but the last sampled one, which was never fed; a reply that
   * ended at a stop token (web-llm leaves the stop token out of `outputIds`)
   * fed every output token, the last one to sample the stop token.
   */
  keep(seq: number, prompt: readonly number[], outputIds: readonly number[], filled: number, key: string | undefined): void {
    if (!this.keeper) return;
    const fed = filled === prompt.length + outputIds.length ? outputIds.length : outputIds.length - 1;
    const tokens = [...prompt, ...outputIds.slice(0, Math.max(0, fed))];
    if (filled !== tokens.length) return;
    try {
      this.keeper(seq, tokens, key);
    } catch {
      // The cache keeps what it had; the row's KV goes as it would have.
    }
  }
}
