/**
 * Prompt-cache policy: which cached KV sequence a request runs in, how much of
 * its prompt is already there, and what to evict. Pure (no web-llm, no DOM):
 * the web-llm binding applies its plans to the paged KV cache and the scripted
 * engine simulates them, so both make the same decisions (same test cases).
 *
 * Model. The KV cache holds several sequences (small integer ids, the smallest
 * free one is reused). Each holds token ids — what was fed: prompt tokens plus
 * generated tokens but the last, which is sampled and never fed back — an
 * optional `prompt_cache_key`, and a last-use stamp (a counter, not a clock).
 *
 * Storage and budget. Forking is copy-on-write, as in TVM's paged KV cache:
 * a child forked at position p shares the parent's storage for its first p
 * tokens, and appends go to storage of its own. The policy tracks that
 * storage as segments shared by reference; a segment is a run of tokens that
 * the same set of sequences holds. The budget counts every distinct segment
 * once (so a system prompt shared by ten forked chats counts once), each
 * rounded up to whole pages of `pageSize` tokens (1 = count tokens exactly;
 * the binding uses the cache's page size, which makes the count a slight
 * over-estimate when a fork splits a page). Sharing comes only from forks:
 * two sequences that hold equal tokens prefilled separately count twice,
 * which is what the cache really stores. Before a request runs, the plan
 * evicts least recently used sequences until the storage after the request —
 * its prefill plus `maxNewTokens` reserved for the reply — fits the budget
 * and the number of sequences fits `maxSequences`.
 *
 * Keys. A `prompt_cache_key` is a boundary: a request reuses only sequences
 * filled under its own key (one without a key: only sequences filled without
 * one), never forks from nor takes over another key's, and is given only its
 * own key's replies as drafts (`continuations`). Copy-on-write sharing across
 * keys is refused too: its storage, counts and timing would tell one user what
 * another sent. Eviction is least recently used across all keys alike.
 *
 * Choice. The request runs from the sequence of its key with the longest
 * reusable common prefix (ties: a sequence it can extend in place, then the
 * most recent). Reuse stops at the request's
 * `reusableUpTo` and at the sequence's own bound (an image or other part whose
 * tokens are not exact ends the reusable prefix at its position), and always
 * leaves at least one token to prefill (the logits of the next token come from
 * the last prefilled one). The request then:
 * - `same`: runs in that sequence, after dropping (popn) `popn` tokens from
 *   its end — when the request covers all of it (popn ≤ 1) or when keeping its
 *   tail would force evicting it anyway;
 * - `fork`: runs in a new sequence forked from `parent` at `reused`, so the
 *   parent keeps its tail (regenerate, edit, a new chat sharing the system
 *   prompt): the tail costs only its own tokens;
 * - `new`: runs in a new empty sequence (nothing to reuse).
 *
 * Protocol. `begin(request)` returns the plan and applies it to the model;
 * the caller removes `evict` (in order), then popn / fork / adds the sequence,
 * prefills `tokens[reused:]` and generates. A reply longer than the room
 * reserved with `maxNewTokens` asks `makeRoom(seq, tokens)` as it grows (the
 * sequences to remove before the cache runs out; a caller that reserves the
 * whole reply up front never needs it, but then keeps less: with the default
 * `max_tokens` of a whole window, a budget of one window would hold nothing
 * else). Then `record(seq, fed)` with the tokens the sequence now holds — it
 * returns the sequences evicted to bring storage back within the budget — or
 * `drop(seq)` when they are uncertain (abort during prefill, an error).
 * `clear()` forgets everything (unload, reload, device loss, context
 * overflow).
 */
import { SegmentStore } from "./segments.js";

export interface PromptCacheOptions {
  /** Total tokens the paged cache holds, all sequences together (its total length). */
  budgetTokens: number;
  /** Most sequences the cache holds at once (the paged cache's sequence count). Default 16. */
  maxSequences?: number;
  /** Storage is counted in whole pages of this many tokens. Default 1 (exact tokens). */
  pageSize?: number;
}

export interface CacheRequest {
  /** The request's full prompt, as token ids. */
  tokens: readonly number[];
  /** `prompt_cache_key`: only sequences filled under this key are reused (none given: only unkeyed ones). */
  key?: string;
  /** Tokens at this index and after are never reused (an image part starts there). Default: all. */
  reusableUpTo?: number;
  /** Room to keep free for the reply (tokens); counted against the budget. Default 0. */
  maxNewTokens?: number;
}

export interface CachePlan {
  /** The sequence the request runs in. */
  seq: number;
  /** `same`: in `seq`, after popn; `fork`: `seq` is forked from `parent` at `reused`; `new`: `seq` starts empty. */
  from: "same" | "fork" | "new";
  parent?: number;
  /** `same` only: tokens to remove from the end of `seq` before prefill. */
  popn: number;
  /** Prompt tokens not prefilled again: `tokens[0:reused]` is already in `seq` (after popn / fork). */
  reused: number;
  /** Tokens to prefill: `tokens.length - reused`, at least 1. */
  prefill: number;
  /** Sequences to remove first, in this order. Never `seq` or `parent`. */
  evict: number[];
}

export interface CachedSequence {
  id: number;
  tokens: readonly number[];
  key?: string;
  lastUse: number;
  /** Tokens at this index and after are not reusable. */
  reusableUpTo: number;
  /** Between `begin` and `record`/`drop`. */
  busy: boolean;
}

interface Sequence extends CachedSequence {
  tokens: number[];
}

export const DEFAULT_MAX_SEQUENCES = 16;

/** Length of the common prefix of two token lists. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

export class PromptCachePolicy {
  readonly budgetTokens: number;
  readonly maxSequences: number;
  readonly pageSize: number;
  private readonly seqs = new Map<number, Sequence>();
  private store = new SegmentStore();
  private clock = 0;

  constructor(options: PromptCacheOptions) {
    this.budgetTokens = options.budgetTokens;
    this.maxSequences = Math.max(1, options.maxSequences ?? DEFAULT_MAX_SEQUENCES);
    this.pageSize = Math.max(1, options.pageSize ?? 1);
  }

  /** Chooses where `request` runs, applies the choice to the model, and returns the plan to execute. */
  begin(request: CacheRequest): CachePlan {
    const { tokens, key } = request;
    const bound = Math.max(0, Math.min(request.reusableUpTo ?? tokens.length, tokens.length - 1));
    const best = this.bestMatch(tokens, key, bound);
    let plan: CachePlan;
    if (!best || best.reused === 0) {
      plan = { seq: -1, from: "new", popn: 0, reused: 0, prefill: tokens.length, evict: [] };
    } else {
      const { seq, reused } = best;
      const inPlace = seq.tokens.length - reused <= 1;
      plan = inPlace
        ? { seq: seq.id, from: "same", popn: seq.tokens.length - reused, reused, prefill: tokens.length - reused, evict: [] }
        : { seq: -1, from: "fork", parent: seq.id, popn: 0, reused, prefill: tokens.length - reused, evict: [] };
    }
    plan = this.fit(plan, request);
    this.apply(plan, request);
    return plan;
  }

  /**
   * After generation: `fed` is every token `seq` now holds (the prompt, then
   * the reply's tokens but the last). Returns the sequences evicted (least
   * recently used) to bring storage back within the budget; the caller removes them.
   */
  record(seq: number, fed: readonly number[]): number[] {
    const s = this.seqs.get(seq);
    if (!s) return [];
    const held = this.store.length(seq);
    const evicted = fed.length > held ? this.makeRoom(seq, fed.length - held) : [];
    if (fed.length >= held) this.store.append(seq, fed.length - held);
    else this.store.popn(seq, held - fed.length);
    s.tokens = [...fed];
    s.busy = false;
    s.lastUse = ++this.clock;
    return evicted;
  }

  /**
   * Evicts least recently used idle sequences until `seq`
   * can hold `tokens` more than its prompt (the reply so far and what comes next) within the budget; returns them, for the caller to
   * remove. Stops when none is left (the cache then holds `seq` alone).
   */
  makeRoom(seq: number, tokens: number): number[] {
    const s = this.seqs.get(seq);
    if (!s) return [];
    const evicted: number[] = [];
    for (const victim of this.victims(seq)) {
      if (this.store.usage(this.pageSize) + this.store.appendCost(seq, tokens, this.pageSize) <= this.budgetTokens) break;
      this.drop(victim.id);
      evicted.push(victim.id);
    }
    return evicted;
  }

  /** Forgets a sequence whose contents are uncertain (abort during prefill, an error). The caller removes it from the cache. */
  drop(seq: number): void {
    this.seqs.delete(seq);
    this.store.remove(seq);
  }

  /** Forgets every sequence (unload, reload, device loss, context overflow). */
  clear(): void {
    this.seqs.clear();
    this.store = new SegmentStore();
  }

  /**
   * What idle sequences of `key` (none: unkeyed ones) were fed after the
   * whole of `tokens` (most recently used first): the replies cached after
   * this same prompt, a source of speculative drafts (a regenerate finds the
   * previous reply here). Another key's replies are never given: how many
   * drafts are accepted, and how fast, would reveal them. Ask before `begin`,
   * which may take such a sequence over.
   */
  continuations(tokens: readonly number[], key?: string): number[][] {
    const found: Array<{ tail: number[]; lastUse: number }> = [];
    for (const s of this.seqs.values()) {
      if (s.busy || s.key !== key || s.tokens.length <= tokens.length || commonPrefix(s.tokens, tokens) < tokens.length) continue;
      found.push({ tail: s.tokens.slice(tokens.length), lastUse: s.lastUse });
    }
    return found.sort((a, b) => b.lastUse - a.lastUse).map((f) => f.tail);
  }

  /** Tokens of storage in use (distinct segments, rounded to pages). */
  usedTokens(): number {
    return this.store.usage(this.pageSize);
  }

  /**
   * The idle cached sequence of `key` that shares the longest prefix with
   * `tokens` (at most `bound` tokens of it), for a reader that forks it
   * without the policy taking it over (continuous batching's rows); it counts
   * as used. Null when none shares a token.
   */
  longestPrefix(tokens: readonly number[], key: string | undefined, bound: number): { seq: number; reused: number; length: number } | null {
    const best = this.bestMatch(tokens, key, Math.max(0, Math.min(bound, tokens.length - 1)));
    if (!best || best.reused === 0) return null;
    best.seq.lastUse = ++this.clock;
    return { seq: best.seq.id, reused: best.reused, length: best.seq.tokens.length };
  }

  /**
   * A sequence filled elsewhere comes into the cache (a batching row's prompt
   * and reply, which its runtime sequence holds): `tokens` under `key`, as
   * the most recently used. Idle sequences of the same key that it covers
   * (the conversation's earlier turn: a prefix of `tokens`) go, since it holds
   * all they held; then least recently used ones, until it fits. Returns the
   * sequence to copy it into and those to remove first, or null where it
   * cannot fit the budget at all.
   */
  adopt(tokens: readonly number[], key: string | undefined): { seq: number; evict: number[] } | null {
    if (tokens.length < 2 || tokens.length > this.budgetTokens) return null;
    const covered = [...this.seqs.values()].filter((s) => !s.busy && s.key === key && s.reusableUpTo === Infinity && commonPrefix(s.tokens, tokens) === s.tokens.length);
    const request = { tokens, ...(key !== undefined ? { key } : {}) };
    const plan = this.fit({ seq: -1, from: "new", popn: 0, reused: 0, prefill: tokens.length, evict: covered.map((s) => s.id) }, request);
    this.apply(plan, request);
    const seq = this.seqs.get(plan.seq) as Sequence;
    seq.busy = false;
    return { seq: plan.seq, evict: plan.evict };
  }

  /** A snapshot of the sequences, most recently used first. */
  sequences(): CachedSequence[] {
    return [...this.seqs.values()].sort((a, b) => b.lastUse - a.lastUse).map((s) => ({ ...s, tokens: [...s.tokens] }));
  }

  private bestMatch(tokens: readonly number[], key: string | undefined, bound: number): { seq: Sequence; reused: number } | null {
    let best: { seq: Sequence; reused: number } | null = null;
    const rank = (s: Sequence, reused: number) => [reused, s.tokens.length - reused <= 1 ? 1 : 0, s.lastUse];
    for (const s of this.seqs.values()) {
      if (s.busy || s.key !== key) continue;
      const reused = Math.min(commonPrefix(s.tokens, tokens), bound, s.reusableUpTo);
      if (!best || greater(rank(s, reused), rank(best.seq, best.reused))) best = { seq: s, reused };
    }
    return best;
  }

  /** Adds evictions (least recently used) until the request fits; a fork whose parent must go becomes a popn of the parent. */
  private fit(plan: CachePlan, request: CacheRequest): CachePlan {
    const victims = this.victims(plan.seq);
    const reserve = plan.prefill + Math.max(0, request.maxNewTokens ?? 0);
    for (;;) {
      const trial = this.store.clone();
      for (const id of plan.evict) trial.remove(id);
      const target = this.applyStorage(trial, plan);
      const count = this.seqs.size - plan.evict.length + (plan.from === "same" ? 0 : 1);
      const used = trial.usage(this.pageSize) + trial.appendCost(target, reserve, this.pageSize);
      if (used <= this.budgetTokens && count <= this.maxSequences) return plan;
      const victim = victims.find((s) => !plan.evict.includes(s.id) && s.id !== plan.seq);
      if (!victim) return plan; // nothing left to evict: the request alone exceeds the budget (the engine's context check decides)
      if (victim.id === plan.parent) {
        // Keeping the parent is what costs: take it over instead (fork + remove parent = popn in place).
        plan = { ...plan, seq: victim.id, from: "same", parent: undefined, popn: victim.tokens.length - plan.reused };
        delete plan.parent;
      } else {
        plan = { ...plan, evict: [...plan.evict, victim.id] };
      }
    }
  }

  /** Idle sequences in eviction order: least recently used first, whatever their key. */
  private victims(except: number): Sequence[] {
    return [...this.seqs.values()].filter((s) => !s.busy && s.id !== except).sort((a, b) => a.lastUse - b.lastUse);
  }

  /** The storage change of a plan's popn / fork / new (evictions aside); returns the sequence's id in `store`. */
  private applyStorage(store: SegmentStore, plan: CachePlan): number {
    if (plan.from === "same") {
      store.popn(plan.seq, plan.popn);
      return plan.seq;
    }
    const id = plan.seq >= 0 ? plan.seq : -2; // a placeholder id for trials
    if (plan.from === "fork") store.fork(plan.parent!, id, plan.reused);
    else store.add(id);
    return id;
  }

  private apply(plan: CachePlan, request: CacheRequest): void {
    for (const id of plan.evict) this.drop(id);
    if (plan.from !== "same") plan.seq = this.freeId();
    this.applyStorage(this.store, plan);
    // The prompt is in the cache once prefilled: storage counts it from now on (makeRoom grows from there).
    this.store.append(plan.seq, plan.prefill);
    const seq: Sequence = this.seqs.get(plan.seq) ?? { id: plan.seq, tokens: [], lastUse: 0, reusableUpTo: 0, busy: false };
    seq.tokens = [...request.tokens];
    seq.key = request.key;
    seq.busy = true;
    seq.lastUse = ++this.clock;
    // Tokens past the request's own bound (an image) are never reusable, whatever they hold.
    seq.reusableUpTo = request.reusableUpTo === undefined ? Infinity : Math.max(request.reusableUpTo, 0);
    if (seq.key === undefined) delete seq.key;
    this.seqs.set(plan.seq, seq);
  }

  private freeId(): number {
    let id = 0;
    while (this.seqs.has(id)) id++;
    return id;
  }
}

function greater(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}
