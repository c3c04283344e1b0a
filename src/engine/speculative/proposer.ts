/**
 * Drafts without a draft model: n-gram lookup over token ids (prompt-lookup
 * decoding). Before each decode step the engine asks for up to k tokens that
 * probably come next; it verifies them in one forward pass and keeps the
 * longest prefix the model agrees with (acceptance.ts). Pure: tested in Node.
 *
 * Sources, in priority order:
 * 1. the prediction (`prediction` of a chat request: the expected output),
 * 2. replies the prompt cache holds after the same prompt (a regenerate finds
 *    the previous reply there),
 * 3. the context: the prompt followed by the output so far.
 * The first two are replies: their first token lines up with the output's
 * first token, so while the output keeps agreeing with one of them the draft
 * is simply what follows (no lookup). Once it diverges (an edit), the last n
 * generated tokens are looked up — longest n first, sources in order — and
 * the draft copies what followed the match; in a reply the match nearest
 * after the last place it lined up wins, so repeated lines resync in order.
 *
 * Adaptive: the draft length doubles while whole drafts are accepted and
 * halves (never below what was just accepted, plus one) when part is
 * rejected. Drafting stops where it does not pay: after a run of drafts with
 * nothing accepted, proposing pauses for a number of steps that doubles with
 * each further miss (open chat must not get slower), and any accepted token
 * ends the pause.
 *
 * Cost: the replies are indexed once (O(length × n-gram sizes)); the context
 * is indexed incrementally as the output grows; each `propose` costs
 * O(new output tokens × sources + n-gram sizes × sources + k). Nothing is
 * rescanned per step, so a whole generation is O(prompt + output + drafts).
 */

export interface DraftSources {
  /** The request's prompt, as token ids. */
  prompt: readonly number[];
  /** The expected output (`prediction`), as token ids. */
  prediction?: readonly number[];
  /** Replies the prompt cache holds after this same prompt (what those sequences were fed after it). */
  cachedReplies?: ReadonlyArray<readonly number[]>;
}

export type DraftSource = "prediction" | "cache" | "context";

export interface ProposerOptions {
  /** Longest n-gram looked up. Default 4. */
  maxNgram?: number;
  /** Shortest n-gram looked up (shorter matches are mostly chance). Default 2. */
  minNgram?: number;
  /** Longest draft. Default 16. */
  maxDraft?: number;
  /** First draft length. Default 4. */
  initialDraft?: number;
  /** Drafts in a row with nothing accepted before proposing pauses. Default 2. */
  missesBeforePause?: number;
  /** Longest pause, in steps. Default 64. */
  maxPause?: number;
}

/** A token list and its n-gram index: n-gram hash → positions that follow an occurrence (ascending). */
class ReplySource {
  readonly index: Array<Map<number, number[]>> = [];
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
      const map = new Map<number, number[]>();
      for (let end = n; end < tokens.length; end++) {
        const key = hashAt((i) => tokens[i], end - n, n);
        const list = map.get(key);
        if (list) list.push(end);
        else map.set(key, [end]);
      }
      this.index.push(map);
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

export class DraftProposer {
  private readonly minN: number;
  private readonly maxN: number;
  private readonly maxDraft: number;
  private readonly missesBeforePause: number;
  private readonly maxPause: number;
  private readonly prompt: readonly number[];
  private readonly replies: ReplySource[] = [];
  /** Context index per n: n-gram hash → the latest position that follows it (prompt ++ output coordinates). */
  private readonly context: Array<Map<number, number>> = [];
  /** Context positions indexed so far (positions < this have their preceding n-grams in `context`). */
  private indexedTo = 0;
  /** Output tokens already walked through the replies' alignment. */
  private seen = 0;
  private k: number;
  private misses = 0;
  private pause = 0;
  private pauseLength = 0;
  private output: readonly number[] = [];
  /** Where the last proposal came from (null: none). */
  lastSource: DraftSource | null = null;

  constructor(sources: DraftSources, options: ProposerOptions = {}) {
    this.maxN = Math.max(1, options.maxNgram ?? 4);
    this.minN = Math.max(1, Math.min(options.minNgram ?? 2, this.maxN));
    this.maxDraft = Math.max(1, options.maxDraft ?? 16);
    this.k = Math.max(1, Math.min(options.initialDraft ?? 4, this.maxDraft));
    this.missesBeforePause = Math.max(1, options.missesBeforePause ?? 2);
    this.maxPause = Math.max(1, options.maxPause ?? 64);
    this.prompt = sources.prompt;
    if (sources.prediction && sources.prediction.length > 0) this.replies.push(new ReplySource(sources.prediction, "prediction", this.minN, this.maxN));
    for (const reply of sources.cachedReplies ?? []) if (reply.length > 0) this.replies.push(new ReplySource(reply, "cache", this.minN, this.maxN));
    for (let n = this.minN; n <= this.maxN; n++) this.context.push(new Map());
  }

  /**
   * The prediction's tokens that appeared in the output where it lined up
   * with it (each counted once): OpenAI's `accepted_prediction_tokens`. Counts
   * the output as of the last `propose` or `observe`.
   */
  get predictionTokensMatched(): number {
    return this.replies.find((r) => r.kind === "prediction")?.matchedCount ?? 0;
  }

  /** Takes in output generated since the last call without proposing (the end of a generation). */
  observe(output: readonly number[]): void {
    this.output = output;
    this.advance(output);
  }

  /** The current draft length (what `propose` asks for at most). */
  get draftLength(): number {
    return this.k;
  }

  /**
   * Up to k tokens that may follow `output` (the tokens generated so far; each
   * call's `output` extends the previous one). `limit` caps the draft (tokens
   * the request may still generate, minus the one the verify pass adds).
   */
  propose(output: readonly number[], limit = Infinity): number[] {
    this.output = output;
    this.advance(output);
    this.lastSource = null;
    const k = Math.min(this.k, Math.floor(limit));
    if (k <= 0) return [];
    if (this.pause > 0) {
      this.pause--;
      return [];
    }
    // A reply the output still agrees with: what follows is the draft.
    for (const reply of this.replies) {
      if (reply.aligned !== null && reply.aligned < reply.tokens.length) return this.take(reply.tokens, reply.aligned, k, reply.kind);
    }
    const total = this.prompt.length + output.length;
    for (let n = this.maxN; n >= this.minN; n--) {
      if (n > total) continue;
      const key = hashAt((i) => this.at(i), total - n, n);
      for (const reply of this.replies) {
        const at = this.findInReply(reply, n, key, total);
        if (at !== null) {
          reply.mark(at - n, at);
          reply.aligned = at;
          reply.cursor = at;
          if (at < reply.tokens.length) return this.take(reply.tokens, at, k, reply.kind);
        }
      }
      const at = this.context[n - this.minN].get(key);
      if (at !== undefined && this.sameNgram(at, total, n)) return this.takeContext(at, total, k);
    }
    return [];
  }

  /** The verify pass's result for the last proposal: `drafted` tokens, of which the first `accepted` were kept. */
  record(drafted: number, accepted: number): void {
    if (drafted <= 0) return;
    if (accepted >= drafted) {
      this.k = Math.min(this.maxDraft, this.k * 2);
    } else {
      this.k = Math.max(1, accepted + 1, Math.floor(this.k / 2));
    }
    if (accepted > 0) {
      this.misses = 0;
      this.pauseLength = 0;
      return;
    }
    if (++this.misses >= this.missesBeforePause) {
      this.misses = 0;
      this.pauseLength = Math.min(this.maxPause, Math.max(1, this.pauseLength * 2));
      this.pause = this.pauseLength;
    }
  }

  /** Walks new output tokens through the replies' alignment and indexes the context up to the output's end. */
  private advance(output: readonly number[]): void {
    for (let i = this.seen; i < output.length; i++) {
      const token = output[i];
      for (const reply of this.replies) {
        if (reply.aligned === null) continue;
        if (reply.aligned < reply.tokens.length && reply.tokens[reply.aligned] === token) {
          reply.mark(reply.aligned, reply.aligned + 1);
          reply.cursor = ++reply.aligned;
        } else reply.aligned = null;
      }
    }
    this.seen = output.length;
    // Positions that something follows: a lookup at the end never matches itself.
    const total = this.prompt.length + output.length;
    for (let end = Math.max(this.indexedTo, this.minN); end < total; end++) {
      for (let n = this.minN; n <= this.maxN && n <= end; n++) {
        this.context[n - this.minN].set(hashAt((i) => this.at(i), end - n, n), end);
      }
    }
    this.indexedTo = Math.max(this.indexedTo, total);
  }

  /** A position in `reply` following the context's last n tokens: the first at or after its cursor, else the last before it. */
  private findInReply(reply: ReplySource, n: number, key: number, total: number): number | null {
    const list = reply.index[n - this.minN].get(key);
    if (!list) return null;
    const same = (end: number) => {
      for (let j = 1; j <= n; j++) if (reply.tokens[end - j] !== this.at(total - j)) return false;
      return true;
    };
    const from = lowerBound(list, reply.cursor);
    // A hash collision is rare: a few candidates each way are enough.
    for (let i = from; i < list.length && i < from + 4; i++) if (same(list[i])) return list[i];
    for (let i = from - 1; i >= 0 && i >= from - 4; i--) if (same(list[i])) return list[i];
    return null;
  }

  private sameNgram(end: number, total: number, n: number): boolean {
    for (let j = 1; j <= n; j++) if (this.at(end - j) !== this.at(total - j)) return false;
    return true;
  }

  private take(tokens: readonly number[], from: number, k: number, kind: DraftSource): number[] {
    this.lastSource = kind;
    return tokens.slice(from, Math.min(tokens.length, from + k));
  }

  private takeContext(from: number, total: number, k: number): number[] {
    const draft: number[] = [];
    for (let i = from; i < total && draft.length < k; i++) draft.push(this.at(i));
    if (draft.length > 0) this.lastSource = "context";
    return draft;
  }

  /** Token `i` of the context (the prompt, then the output). */
  private at(i: number): number {
    const p = this.prompt.length;
    return i < p ? this.prompt[i] : this.output[i - p];
  }
}

/** FNV-style hash of `n` tokens from `start`, read through `at` (collisions are checked by the caller). */
function hashAt(at: (i: number) => number, start: number, n: number): number {
  let h = 0x811c9dc5 ^ n;
  for (let i = start; i < start + n; i++) {
    h = Math.imul(h ^ (at(i) & 0xffff), 0x01000193);
    h = Math.imul(h ^ (at(i) >>> 16), 0x01000193);
  }
  return h >>> 0;
}

/** First index of sorted `list` whose value is ≥ `value`. */
function lowerBound(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
