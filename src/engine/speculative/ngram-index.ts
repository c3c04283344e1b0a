/**
 * Where each n-gram of a token list occurred, for prompt-lookup drafting:
 * hash chains as in LZ77 matchers. Each indexed position p (the position
 * that follows an n-gram, tokens[p-n..p-1]) is linked to the previous
 * position whose n-gram fell in the same hash bucket, so a lookup walks the
 * occurrences latest first. Typed arrays, no per-position objects: indexing
 * a 100 k-token prompt takes milliseconds and 4 bytes per position. Buckets
 * are shared by colliding n-grams; callers verify a candidate's tokens.
 */

/** Hash of `n` tokens from `start`. */
export function ngramHash(tokens: ArrayLike<number>, start: number, n: number): number {
  let h = 0x811c9dc5 ^ n;
  for (let i = start; i < start + n; i++) {
    h = Math.imul(h ^ tokens[i], 0x01000193);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/** Most chain links a lookup follows (a very frequent n-gram is a weak hint anyway). */
const MAX_CHAIN = 64;

export class NgramIndex {
  private readonly mask: number;
  /** Bucket → latest position + 1 (0: none). */
  private readonly head: Int32Array;
  /** Position → the previous position + 1 in the same bucket (0: none). */
  private prev: Int32Array;

  /** `expected`: about how many positions will be added (sizes the table; it grows past it). */
  constructor(
    readonly n: number,
    expected: number,
  ) {
    let size = 1024;
    while (size < expected * 2 && size < 1 << 22) size *= 2;
    this.mask = size - 1;
    this.head = new Int32Array(size);
    this.prev = new Int32Array(Math.max(16, expected + 1));
  }

  /** Indexes `position`, which follows the n-gram tokens[position-n..position-1] of hash `hash`. Positions are added in increasing order. */
  add(position: number, hash: number): void {
    if (position >= this.prev.length) {
      const grown = new Int32Array(Math.max(position + 1, this.prev.length * 2));
      grown.set(this.prev);
      this.prev = grown;
    }
    const bucket = hash & this.mask;
    this.prev[position] = this.head[bucket];
    this.head[bucket] = position + 1;
  }

  /**
   * A position following an occurrence of the n-gram of hash `hash` that
   * `same` confirms. Positions at or above `split` are preferred to those
   * below it; on each side, the first at or after that side's cursor wins,
   * else the latest before it.
   */
  pick(hash: number, same: (position: number) => boolean, split: number, cursorAbove: number, cursorBelow: number): number | null {
    let above: number | null = null;
    let below: number | null = null;
    let link = this.head[hash & this.mask];
    for (let steps = 0; link !== 0 && steps < MAX_CHAIN; steps++) {
      const position = link - 1;
      link = this.prev[position];
      if (!same(position)) continue;
      if (position >= split) {
        // Latest first: each match at or after the cursor is an earlier one, closer to it.
        if (position >= cursorAbove) above = position;
        else return above ?? position;
      } else {
        if (above !== null) return above;
        if (position >= cursorBelow) below = position;
        else return below ?? position;
      }
    }
    return above ?? below;
  }
}
