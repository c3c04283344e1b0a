/**
 * Drafts without a draft model: n-gram lookup over token ids (prompt-lookup
 * decoding). Before each decode step the engine asks for up to k tokens that
 * probably come next; it verifies them in one forward pass and keeps the
 * longest prefix the model agrees with (acceptance.ts). Pure: tested in Node.
 *
 * Sources, in priority order:
 * 0. what the request's grammar forces next (jump-forward, given by the
 *    engine to each `propose`): the only text it allows, so nearly certain,
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
 * In the context the output's own earlier text comes first (the structure
 * it repeats: JSON keys, list markup), then the prompt, each from where the
 * last accepted copy from it ended. When no n-gram matches, the last token
 * alone is looked up in the output's earlier text, for a short draft (the
 * structure that follows a new value).
 *
 * Adaptive: per source, the draft length doubles while whole drafts are
 * accepted and halves (never below what was just accepted, plus one) when
 * part is rejected; a strong lookup (2 or more tokens matched, or a rare
 * token, of a kind this generation accepts at least half the time) drafts at
 * least `lookupDraft` even after misses shrank the length (plain prompt
 * lookup always drafts its k, and a miss costs no pass). Drafting by lookup pauses where it
 * does not pay: after a run of drafts with nothing accepted it pauses for a
 * number of steps that doubles with each further miss (open chat must not
 * get slower), and any accepted token ends the pause. A reply the output
 * still agrees with, a 3-gram match (a copy more often than not), and a kind
 * of lookup this generation keeps accepting (the misses that paused were
 * another kind's) are drafted from even during a pause. A draft found but not proposed is
 * checked against the output as it grows (a "shadow"): its source's
 * acceptance keeps being measured, and two agreeing tokens end a pause.
 *
 * Sized by cost (`sizing`, draft-sizing.ts): with the device's forward costs
 * known, each draft is cut to the length that maximises expected tokens per
 * ms from its source's measured acceptance (per reply kind, and per n-gram
 * length for the context), possibly 0; the adaptive length then no longer
 * caps it (the cost model says how long pays).
 *
 * Cost: the replies are indexed once (O(length × n-gram sizes)); the context
 * is indexed incrementally as the output grows; each `propose` costs
 * O(new output tokens × sources + n-gram sizes × sources + k). Nothing is
 * rescanned per step, so a whole generation is O(prompt + output + drafts).
 */

import { NgramIndex, ngramHash } from "./ngram-index.js";
import { ReplySource, type DraftSource } from "./reply-source.js";
import { AcceptanceEstimate, chooseDraftLength, expectedAccepted } from "./draft-sizing.js";
import type { DraftSizing, ProposerOptions } from "./proposer-options.js";

export { ENGINE_PROPOSER_OPTIONS, type DraftSizing, type ProposerOptions } from "./proposer-options.js";

export interface DraftSources {
  /** The request's prompt, as token ids. */
  prompt: readonly number[];
  /** The expected output (`prediction`), as token ids. */
  prediction?: readonly number[];
  /** Replies the prompt cache holds after this same prompt (what those sequences were fed after it). */
  cachedReplies?: ReadonlyArray<readonly number[]>;
}

export type { DraftSource } from "./reply-source.js";

/** What the engines ask of a draft proposer (DraftProposer; the bench's plain prompt lookup is another). */
export interface Proposer {
  /**
   * Up to `limit` tokens that may follow `output` (each call's `output`
   * extends the previous one); `forced`: the tokens a grammar allows next and
   * nothing else (jump-forward), the first source when given.
   */
  propose(output: readonly number[], limit?: number, forced?: readonly number[]): number[];
  /** The verify pass kept `accepted` of the `drafted` tokens of the last proposal. */
  record(drafted: number, accepted: number): void;
  /** Takes in output without proposing (the end of a generation). */
  observe(output: readonly number[]): void;
  /** The prediction's tokens that appeared in the output (`accepted_prediction_tokens`). */
  readonly predictionTokensMatched: number;
  /** Where the last proposal came from (null: nothing proposed; absent: the proposer does not say). */
  readonly lastSource?: DraftSource | null;
  /** Tokens the last pass was expected to yield, when the proposer sizes drafts by cost. */
  readonly lastExpectedTokens?: number;
}

export class DraftProposer implements Proposer {
  private readonly minN: number;
  private readonly maxN: number;
  private readonly maxDraft: number;
  private readonly missesBeforePause: number;
  private readonly maxPause: number;
  /** Prompt length: context positions below it are the prompt's. */
  private readonly promptLength: number;
  /** The context: the prompt, then the output as it grows. */
  private readonly context: number[] = [];
  private readonly replies: ReplySource[] = [];
  /** Context n-gram index per n (minN..maxN). */
  private readonly contextIndex: NgramIndex[] = [];
  /** Single output tokens (the last-resort lookup). */
  private readonly outputUnigrams: NgramIndex;
  /**
   * Context positions just after the last accepted copy from the prompt and
   * from the output: a lookup prefers matches from there on. Two, because an
   * output interleaves copies from both (values from a document, the
   * structure around them from its own earlier records).
   */
  private promptCursor = 0;
  private outputCursor = 0;
  /** Where the last context draft started (for `record`). */
  private contextDraftAt: number | null = null;
  /** Context positions indexed so far. */
  private indexedTo = 0;
  /** Output tokens taken in so far. */
  private seen = 0;
  /** Draft length per source: a good prediction keeps its long drafts while context lookups miss. */
  private readonly lengths: Record<DraftSource, number>;
  /** A strong context match drafts at least this much even after misses (ProposerOptions.lookupDraft). */
  private readonly lookupDraft: number;
  /** How often each token occurs in the indexed context: a single-token match on a rare one is an anchor, on a common one chance. */
  private readonly tokenCounts = new Map<number, number>();
  private misses = 0;
  private pause = 0;
  private pauseLength = 0;
  /** Where the last proposal came from (null: none). */
  lastSource: DraftSource | null = null;
  /** Tokens the last pass is expected to yield by the cost model's estimate (1 without a draft, or without `sizing`). */
  lastExpectedTokens = 1;
  /** The acceptance key of the last proposal. */
  private lastKey: string | null = null;
  /** Measured acceptance per key (Found.key). */
  private readonly acceptance = new Map<string, AcceptanceEstimate>();
  /** Keys whose drafts had a token accepted in this generation (measured, not the prior). */
  private readonly acceptedKinds = new Set<string>();
  /** A draft found but not proposed, until the output settles how far it agreed. */
  private shadowed: { tokens: number[]; at: number; key: string } | null = null;
  /** Sizes drafts by cost (draft-sizing.ts); absent: the adaptive length alone. */
  private readonly sizing: DraftSizing | undefined;

  constructor(sources: DraftSources, options: ProposerOptions = {}) {
    this.maxN = Math.max(1, options.maxNgram ?? 4);
    this.minN = Math.max(1, Math.min(options.minNgram ?? 2, this.maxN));
    this.maxDraft = Math.max(1, options.maxDraft ?? 16);
    const k = Math.max(1, Math.min(options.initialDraft ?? 4, this.maxDraft));
    this.lookupDraft = Math.max(1, Math.min(options.lookupDraft ?? k, this.maxDraft));
    this.lengths = { grammar: this.maxDraft, prediction: k, cache: k, context: this.lookupDraft };
    this.missesBeforePause = Math.max(1, options.missesBeforePause ?? 2);
    this.maxPause = Math.max(1, options.maxPause ?? 64);
    this.sizing = options.sizing;
    this.promptLength = sources.prompt.length;
    // Copied one by one (a prompt can exceed the argument limit of push(...)).
    for (const token of sources.prompt) this.context.push(token);
    if (sources.prediction && sources.prediction.length > 0) this.replies.push(new ReplySource(sources.prediction, "prediction", this.minN, this.maxN));
    for (const reply of sources.cachedReplies ?? []) if (reply.length > 0) this.replies.push(new ReplySource(reply, "cache", this.minN, this.maxN));
    for (let n = this.minN; n <= this.maxN; n++) this.contextIndex.push(new NgramIndex(n, this.promptLength + 1024));
    this.outputUnigrams = new NgramIndex(1, 1024);
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
    this.advance(output);
  }

  /** The current draft length of the last proposal's source (the context's before any). */
  get draftLength(): number {
    return this.lengths[this.lastSource ?? "context"];
  }

  /**
   * Up to k tokens that may follow `output` (the tokens generated so far; each
   * call's `output` extends the previous one). `limit` caps the draft (tokens
   * the request may still generate, minus the one the verify pass adds).
   */
  propose(output: readonly number[], limit = Infinity, forced?: readonly number[]): number[] {
    this.advance(output);
    this.lastSource = null;
    this.lastKey = null;
    this.lastExpectedTokens = 1;
    this.contextDraftAt = null;
    const cap = Math.floor(limit);
    if (cap <= 0) return [];
    // What a grammar forces next comes first: nothing else can follow.
    const found = forced && forced.length > 0 ? this.fromGrammar(forced, cap) : this.find(cap);
    if (!found) {
      if (this.pause > 0) this.pause--;
      return [];
    }
    // A pause holds back lookups; a grammar's or an agreeing reply's draft, a 3-gram copy, or a kind of lookup this
    // generation keeps accepting (the misses that paused were another kind's) is a good bet even then.
    if (this.pause > 0 && !found.aligned && found.key !== STRONG_KEY && !this.provenKind(found.key)) {
      this.pause--;
      this.shadow(found);
      return [];
    }
    let length = found.tokens.length;
    if (this.sizing) {
      const acceptance = this.acceptanceOf(found.key).rate;
      length = chooseDraftLength(length, acceptance, this.sizing.cost, this.sizing.served?.() ?? 0, undefined, this.sizing.others?.() ?? 0).length;
      this.lastExpectedTokens = 1 + expectedAccepted(acceptance, length);
      if (length === 0) {
        this.shadow(found);
        return [];
      }
    }
    this.lastSource = found.kind;
    this.lastKey = found.key;
    this.contextDraftAt = found.contextAt;
    return found.tokens.slice(0, length);
  }

  /** The draft the sources give after the output (longest n-gram first, sources in order), or null. */
  private find(cap: number): Found | null {
    // A reply the output still agrees with: what follows is the draft.
    for (const reply of this.replies) {
      if (reply.aligned !== null && reply.aligned < reply.tokens.length) return this.fromReply(reply, reply.aligned, cap, true);
    }
    const ctx = this.context;
    const total = ctx.length;
    for (let n = this.maxN; n >= this.minN; n--) {
      if (n > total) continue;
      const hash = ngramHash(ctx, total - n, n);
      for (const reply of this.replies) {
        const tokens = reply.tokens;
        const at = reply.index[n - this.minN].pick(hash, (end) => sameEnding(tokens, end, ctx, total, n), 0, reply.cursor, 0);
        if (at !== null) {
          reply.mark(at - n, at);
          reply.aligned = at;
          reply.cursor = at;
          if (at < tokens.length) return this.fromReply(reply, at, cap, false);
        }
      }
      // The output's own earlier text first (positions past the prompt's last), then the prompt.
      const at = this.contextIndex[n - this.minN].pick(hash, (end) => sameEnding(ctx, end, ctx, total, n), this.promptLength + 1, this.outputCursor, this.promptCursor);
      if (at !== null) return this.fromContext(at, cap, contextKey(n, this.tokenCounts.get(ctx[total - 1]) ?? 0));
    }
    // Last resort: the last token alone, in the output's own earlier text (the structure it repeats around new values).
    if (total - 1 >= this.promptLength) {
      const at = this.outputUnigrams.pick(ngramHash(ctx, total - 1, 1), (end) => ctx[end - 1] === ctx[total - 1], 0, this.outputCursor, 0);
      if (at !== null) return this.fromContext(at, Math.min(cap, 2), COMMON_TOKEN_KEY);
    }
    return null;
  }

  /** The verify pass's result for the last proposal: `drafted` tokens, of which the first `accepted` were kept. */
  record(drafted: number, accepted: number): void {
    if (drafted <= 0) return;
    if (this.lastSource === "context" && this.contextDraftAt !== null && accepted > 0) {
      const end = this.contextDraftAt + accepted;
      if (this.contextDraftAt < this.promptLength) this.promptCursor = end;
      else this.outputCursor = end;
    }
    if (this.lastKey) this.acceptanceOf(this.lastKey).record(drafted, accepted);
    if (this.lastKey && accepted > 0) this.acceptedKinds.add(this.lastKey);
    const source = this.lastSource ?? "context";
    const k = this.lengths[source];
    // From the longer of the source's length and the draft (a strong match drafts past a length that misses shrank).
    const from = Math.max(k, drafted);
    this.lengths[source] = accepted >= drafted ? Math.min(this.maxDraft, from * 2) : Math.max(1, accepted + 1, Math.floor(from / 2));
    this.verdict(accepted);
  }

  /** Pauses after a run of misses; an accepted token (drafted, or one a paused draft would have had) ends them. */
  private verdict(accepted: number): void {
    if (accepted > 0) {
      this.misses = 0;
      this.pauseLength = 0;
      this.pause = 0;
      return;
    }
    if (++this.misses >= this.missesBeforePause) {
      this.misses = 0;
      this.pauseLength = Math.min(this.maxPause, Math.max(1, this.pauseLength * 2));
      this.pause = this.pauseLength;
    }
  }

  /** The longest draft from a reply: the adaptive length, or with costs known, as long as the cost model finds worth it. */
  private lengthFor(kind: DraftSource): number {
    return this.sizing ? this.maxDraft : this.lengths[kind];
  }

  /**
   * A kind of lookup this generation has had drafts accepted from, at least
   * half its tokens: a rare token's match in a text the reply quotes from
   * (`"about 60` → `,000 vehicles per day`). Open chat never gets here: none of
   * its drafts is accepted. A common token's match is chance, never proven.
   */
  private provenKind(key: string): boolean {
    return key !== COMMON_TOKEN_KEY && this.acceptedKinds.has(key) && this.acceptanceOf(key).rate >= STRONG_MATCH_ACCEPTANCE;
  }

  private acceptanceOf(key: string): AcceptanceEstimate {
    let estimate = this.acceptance.get(key);
    if (!estimate) this.acceptance.set(key, (estimate = new AcceptanceEstimate({ prior: PRIOR_ACCEPTANCE[key] ?? 0.5 })));
    return estimate;
  }

  /**
   * A draft found but not proposed (paused, or not worth its cost): the
   * output, as it grows, says how much of it would have been accepted — the
   * source's acceptance keeps being measured, and a would-be hit ends a pause.
   */
  private shadow(found: Found): void {
    if (this.shadowed) return;
    this.shadowed = { tokens: found.tokens, at: this.context.length, key: found.key };
  }

  /** Settles the shadowed draft once the output shows how far it agreed. */
  private settleShadow(): void {
    const shadow = this.shadowed;
    if (!shadow) return;
    const ctx = this.context;
    let agreed = 0;
    while (agreed < shadow.tokens.length && shadow.at + agreed < ctx.length && ctx[shadow.at + agreed] === shadow.tokens[agreed]) agreed++;
    const decided = agreed === shadow.tokens.length || shadow.at + agreed < ctx.length;
    if (!decided) return;
    this.shadowed = null;
    this.acceptanceOf(shadow.key).record(shadow.tokens.length, agreed);
    // Two agreeing tokens are a copy, not chance: drafting resumes.
    if (agreed >= 2) this.verdict(agreed);
  }

  /** Takes in new output tokens: the replies' alignment, the context and its indexes. */
  private advance(output: readonly number[]): void {
    const ctx = this.context;
    for (let i = this.seen; i < output.length; i++) {
      const token = output[i];
      ctx.push(token);
      for (const reply of this.replies) {
        if (reply.aligned === null) continue;
        if (reply.aligned < reply.tokens.length && reply.tokens[reply.aligned] === token) {
          reply.mark(reply.aligned, reply.aligned + 1);
          reply.cursor = ++reply.aligned;
        } else reply.aligned = null;
      }
    }
    this.seen = Math.max(this.seen, output.length);
    this.settleShadow();
    // Positions that something follows: a lookup at the end never matches itself.
    const total = ctx.length;
    for (let end = Math.max(this.indexedTo, 1); end < total; end++) {
      for (const index of this.contextIndex) if (index.n <= end) index.add(end, ngramHash(ctx, end - index.n, index.n));
      if (end > this.promptLength) this.outputUnigrams.add(end, ngramHash(ctx, end - 1, 1));
      this.tokenCounts.set(ctx[end - 1], (this.tokenCounts.get(ctx[end - 1]) ?? 0) + 1);
    }
    this.indexedTo = Math.max(this.indexedTo, total);
  }

  /** A grammar's forced tokens, as the first source (`aligned`: like an agreeing reply, not held back by a pause). */
  private fromGrammar(forced: readonly number[], cap: number): Found {
    return { tokens: forced.slice(0, Math.min(cap, this.maxDraft)), kind: "grammar", key: "grammar", aligned: true, contextAt: null };
  }

  private fromReply(reply: ReplySource, from: number, cap: number, aligned: boolean): Found {
    const tokens = reply.tokens.slice(from, Math.min(reply.tokens.length, from + Math.min(cap, this.lengthFor(reply.kind))));
    return { tokens, kind: reply.kind, key: reply.kind, aligned, contextAt: null };
  }

  private fromContext(from: number, cap: number, key: string): Found | null {
    // Misses shrink the length, but a lookup drafts at least the first length: a miss costs no pass, and a copy that
    // starts after misses would otherwise be drafted a token or two at a time (plain lookup always drafts its k).
    // Strong: not a common token's chance match, and its kind of match is being accepted in this generation (open chat's are not).
    const strong = key !== COMMON_TOKEN_KEY && this.acceptanceOf(key).rate >= STRONG_MATCH_ACCEPTANCE;
    const k = Math.min(cap, this.sizing ? this.maxDraft : strong ? Math.max(this.lookupDraft, this.lengths.context) : this.lengths.context);
    const tokens = this.context.slice(from, Math.min(this.context.length, from + k));
    return tokens.length > 0 ? { tokens, kind: "context", key, aligned: false, contextAt: from } : null;
  }
}

/** A draft the sources give, before the pause and the cost decide on it. */
interface Found {
  tokens: number[];
  kind: DraftSource;
  /** Whose acceptance sizes it: the reply kind, or the context lookup by its n-gram length. */
  key: string;
  /** Drafted from a reply the output agrees with (not a lookup). */
  aligned: boolean;
  /** A context draft's position. */
  contextAt: number | null;
}

/** Context lookups by n-gram length: a 3-gram match copies far more reliably than a single token, a rare token more than a common one. */
function contextKey(n: number, lastTokenCount: number): string {
  if (n === 1) return lastTokenCount <= RARE_TOKEN_COUNT ? RARE_TOKEN_KEY : COMMON_TOKEN_KEY;
  return `context:${Math.min(n, 3)}`;
}

/** A token the context holds at most this often is rare: a match on it alone is an anchor (a name, a quote's first word). */
const RARE_TOKEN_COUNT = 2;
const RARE_TOKEN_KEY = "context:1-rare";
/** A lookup kind accepted at least this often (per token) drafts at least `lookupDraft` after misses. */
const STRONG_MATCH_ACCEPTANCE = 0.5;
const COMMON_TOKEN_KEY = "context:1";

const STRONG_KEY = "context:3";
/** What plain prompt lookup drafts after a match (k = 8): a strong match drafts at least this much. */
const LOOKUP_DRAFT = 8;

/** First guesses of each key's per-token acceptance, before it is measured on the request. */
const PRIOR_ACCEPTANCE: Record<string, number> = { grammar: 0.95, prediction: 0.9, cache: 0.9, "context:3": 0.7, "context:2": 0.5, [RARE_TOKEN_KEY]: 0.5, [COMMON_TOKEN_KEY]: 0.3 };

/** Whether the n tokens of `tokens` before `end` equal the n tokens of `ctx` before `total`. */
function sameEnding(tokens: ArrayLike<number>, end: number, ctx: ArrayLike<number>, total: number, n: number): boolean {
  for (let j = 1; j <= n; j++) if (tokens[end - j] !== ctx[total - j]) return false;
  return true;
}
