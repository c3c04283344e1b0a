/**
 * Prompt caching on web-llm's loaded pipeline: the policy (policy.ts) applied
 * to the real paged KV cache, below web-llm's chat API.
 *
 * web-llm keeps one conversation in KV sequence 0 and reuses it only when the
 * next request extends it byte for byte. The binding hooks four members of
 * the pipeline instance (the same in 0.2.79 and 0.2.86):
 * - `getInputData` (tokenizes the conversation before prefill): run with
 *   `filledKVCacheLength` 0 it yields the request's FULL prompt as token ids,
 *   exactly as web-llm would feed them (its template, system prefix ids, its
 *   tokenizer, image slots). The policy picks the cached sequence with the
 *   longest common prefix; the binding evicts, pops, forks or adds sequences
 *   with the runtime (webllm-kv-ops.ts), sets `filledKVCacheLength` to the
 *   reused length and hands web-llm only the rest (at least one token).
 * - `resetKVCache`: web-llm clears the whole cache whenever the conversation
 *   is not its previous one; during a request the binding has already placed
 *   the right sequence, so the clear is skipped. Outside a request it runs
 *   and the binding forgets everything (the cache is empty again).
 * - `embedAndForward`: records every token really fed (prompt rest, then
 *   each generated token but the last), so the sequence's contents are known
 *   token for token — web-llm's incremental rounds skip the assistant's
 *   closing markup, which only a token comparison sees.
 * - `fKVCacheBeginForward`: web-llm always forwards sequence 0; the binding
 *   substitutes the sequence the request runs in.
 * The paged cache is re-created with room for the budget (web-llm makes it
 * one context window long). Usage is read from the pipeline: cached = the
 * filled length after the rewind, prefilled = what prefill added to it.
 *
 * Not managed (web-llm's own reuse, counted from the pipeline the same way):
 * prompt caching off, sliding-window models, models with recurrent state
 * (Qwen3.5's hybrid cache cannot be rewound), 0.2.86 manifest models, a
 * library without the runtime functions.
 *
 * Runtime constraints honoured here (TVM paged KV cache in these libraries):
 * a sequence that another was forked from AT ITS END cannot take new tokens
 * ("referenced by other blocks"), so such a sequence is extended after
 * popping its last token and feeding it again; `popn` reaching into storage
 * shared with a fork is handled by the runtime itself.
 */
import { PromptCachePolicy, type CachePlan } from "../../prompt-cache/policy.js";
import { kvOpsOf, recreateKvCache, WEBLLM_PAGE_SIZE, type KvCacheHost, type KvOps } from "./webllm-kv-ops.js";

/** One prefill input element: token ids, or an image web-llm embeds. */
type InputChunk = number[] | object;
/** `getInputData()`'s result: chunks, prompt length, and (0.2.86) the image size function. */
export type InputData = [InputChunk[], number, ...unknown[]];

/** The slice of web-llm's `LLMChatPipeline` the binding hooks and reads. */
export interface WebLlmPipeline extends KvCacheHost {
  filledKVCacheLength: number;
  contextWindowSize?: number;
  /** 0.2.86 hybrid models (recurrent state): not rewindable. */
  rnnState?: unknown;
  getInputData(): InputData | Promise<InputData>;
  embedAndForward(inputData: InputChunk[], inputDataLen: number): Promise<unknown>;
  resetKVCache(): void;
  fKVCacheBeginForward: (...args: unknown[]) => unknown;
}

export interface PromptCacheBudget {
  /** Tokens all sequences hold together (shared prefixes once, whole pages). */
  budgetTokens: number;
  maxSequences: number;
  /** Storage counted in pages of this many tokens; default the cache's page size. */
  pageSize?: number;
  /** Room the runtime's cache keeps beyond the budget for the running request's reply (a context window). Default 0. */
  replyRoom?: number;
  /** Sequences and tokens the cache keeps for others beside it (continuous batching's rows). Default none. */
  reserve?: { sequences: number; tokens: number };
}

/** What a request's prefill cost, read from the pipeline. */
export interface PrefillCount {
  /** Full prompt length. */
  promptTokens: number;
  /** Tokens already in the KV cache (not prefilled). Always < promptTokens. */
  cachedTokens: number;
}

export interface RequestCacheOptions {
  key?: string;
  /** Reply room the budget must keep free. */
  maxNewTokens?: number;
}

interface Active {
  plan: CachePlan;
  seq: number;
  prompt: number;
  /** The full prompt, as token ids. */
  tokens: number[];
  /** What other sequences held after this same prompt when the request began. */
  replies: number[][];
  /** Tokens the sequence holds, as fed. */
  fed: number[];
  cached: number;
  prefilled: number | null;
  uncertain: boolean;
}

/** Why the binding left a pipeline to web-llm's own reuse (null: it manages the cache). */
export function unmanagedReason(pipeline: WebLlmPipeline): string | null {
  if ((pipeline.slidingWindowSize ?? -1) !== -1) return "sliding-window model";
  if (pipeline.rnnState !== undefined) return "model with recurrent state";
  if (pipeline.artifact !== undefined) return "manifest model";
  return null;
}

/**
 * The runtime cache the binding re-creates for `budget`: room for the budget,
 * the reply and the reserve, plus one partly filled page per sequence (fork
 * copies a split page); web-llm's sequence 0 counts as one.
 */
export function managedCacheSize(budget: PromptCacheBudget): { tokens: number; sequences: number } {
  const reserve = budget.reserve ?? { sequences: 0, tokens: 0 };
  const sequences = budget.maxSequences + 1 + reserve.sequences;
  return { tokens: budget.budgetTokens + (budget.replyRoom ?? 0) + reserve.tokens + WEBLLM_PAGE_SIZE * sequences, sequences };
}

export class WebLlmPromptCache {
  readonly policy: PromptCachePolicy | null;
  /** Why the cache is web-llm's own (prompt caching off or not possible), else null. */
  readonly unmanaged: string | null;
  private readonly ops: KvOps | null;
  /** Sequences that exist in the runtime's cache. */
  private readonly present = new Set<number>([0]);
  /**
   * Sequences another was forked from at their very end: they take no new tokens until popped.
   * The policy plans no such fork now (a key's own sequence that a request covers is taken over in
   * place, and other keys' are never forked); kept so a plan that does one stays valid in the runtime.
   */
  private readonly sealed = new Set<number>();
  /** The last request's plan (for logs and tests). */
  lastPlan: CachePlan | null = null;
  private armed: RequestCacheOptions | null = null;
  private active: Active | null = null;
  private observed: PrefillCount | null = null;

  /**
   * Hooks `pipeline` (just loaded, empty cache). `budget` null = prompt
   * caching off: web-llm's own reuse, only counted.
   */
  constructor(
    private readonly pipeline: WebLlmPipeline,
    budget: PromptCacheBudget | null,
  ) {
    let reason = budget ? unmanagedReason(pipeline) : "prompt caching off";
    const ops = reason ? null : kvOpsOf(pipeline);
    if (!reason && !ops) reason = "model library without KV sequence functions";
    if (!reason && budget) {
      try {
        const size = managedCacheSize(budget);
        recreateKvCache(pipeline, size.tokens, size.sequences);
        pipeline.resetKVCache.call(pipeline);
      } catch (error) {
        reason = `the KV cache could not be re-created (${(error as Error).message})`;
      }
    }
    this.unmanaged = reason;
    this.ops = reason ? null : ops;
    this.policy = reason || !budget ? null : new PromptCachePolicy({ budgetTokens: budget.budgetTokens, maxSequences: budget.maxSequences, pageSize: budget.pageSize ?? WEBLLM_PAGE_SIZE });
    this.hook();
  }

  /** The next prefill on this pipeline belongs to a request with these options. */
  begin(options: RequestCacheOptions = {}): void {
    // A request left without end() (its consumer stopped reading): settled as aborted.
    if (this.active) this.end("abort");
    this.armed = options;
    this.active = null;
    this.observed = null;
  }

  /**
   * The request ended. `done`/`abort`: the sequence keeps what was fed (an
   * abort before prefill finished leaves it uncertain: dropped); `error`:
   * dropped, and a context-window error clears every sequence.
   * Returns what the prefill cost, or null when no prefill ran.
   */
  end(outcome: "done" | "abort" | "error", error?: unknown): PrefillCount | null {
    this.armed = null;
    const active = this.active;
    this.active = null;
    if ((error as { name?: string } | undefined)?.name === "ContextWindowSizeExceededError") this.clear();
    if (!active) {
      const seen = this.observed;
      this.observed = null;
      return seen;
    }
    const complete = active.prefilled !== null;
    const exact = !active.uncertain && this.pipeline.filledKVCacheLength === active.fed.length;
    // Recording may evict least recently used sequences to bring storage back within the budget.
    if (outcome !== "error" && complete && exact) for (const id of this.policy?.record(active.seq, active.fed) ?? []) this.removeSequence(id);
    else this.dropSequence(active.seq);
    return complete ? { promptTokens: active.cached + (active.prefilled as number), cachedTokens: active.cached } : null;
  }

  /** The KV sequence the running request's forwards go to (web-llm's 0 when none is placed). */
  sequence(): number {
    return this.active?.seq ?? 0;
  }

  /** The running request's full prompt as token ids (null: the cache is web-llm's own, only the prefilled tail is seen). */
  prompt(): readonly number[] | null {
    return this.active?.tokens ?? null;
  }

  /** Replies cached sequences held after the running request's prompt (a regenerate finds the previous one). */
  cachedReplies(): ReadonlyArray<readonly number[]> {
    return this.active?.replies ?? [];
  }

  /**
   * Replies idle cached sequences of `key` hold after the whole prompt
   * `tokens` (promptTokens' ids), most recently used first: a draft source
   * for a request run alone (read as it is placed) and for continuous
   * batching's rows (read before the row forks its prefix). Only `key`'s
   * own: how many drafts are accepted, and how fast, would reveal another's.
   */
  repliesAfter(tokens: readonly number[], key: string | undefined): number[][] {
    return this.policy?.continuations(tokens, key) ?? [];
  }

  /**
   * Continuous batching's rows read the cache: the full prompt `full` (as
   * getInputData gave it) of a row that runs in KV sequence `child` (which
   * must not exist) is forked from the cached sequence of `key` with the
   * longest common prefix, up to one token short of that sequence's end (so
   * the parent never becomes a sequence that takes no new tokens). Returns how
   * many tokens the child holds (0: no prefix; the caller adds the sequence).
   * Only between requests of this binding: the rows run while no request of
   * its own does.
   */
  forkInto(child: number, full: InputData, key: string | undefined): number {
    if (!this.policy || !this.ops || this.active) return 0;
    const { tokens, firstImage } = promptTokens(full[0], full[1], full[2]);
    const match = this.policy.longestPrefix(tokens, key, firstImage ?? tokens.length);
    if (!match || !this.present.has(match.seq)) return 0;
    const reused = Math.min(match.reused, match.length - 1);
    if (reused <= 0) return 0;
    this.ops.fork(match.seq, child, reused);
    return reused;
  }

  /**
   * Continuous batching's rows hand their KV back: the row's sequence `from`
   * holds exactly `tokens` (its prompt and reply); they are copied (forked
   * whole) into a cache sequence of `key`, so the conversation's next turn
   * starts from them as it would after a request run alone. Returns whether
   * the cache took them (not while a request of its own runs, nor past the
   * budget).
   */
  keep(from: number, tokens: readonly number[], key: string | undefined): boolean {
    if (!this.policy || !this.ops || this.active) return false;
    const placed = this.policy.adopt(tokens, key);
    if (!placed) return false;
    for (const id of placed.evict) this.removeSequence(id);
    if (this.present.has(placed.seq)) this.removeSequence(placed.seq);
    this.ops.fork(from, placed.seq, tokens.length);
    this.present.add(placed.seq);
    return true;
  }

  /** Empties the cache: every sequence goes (context overflow, device trouble). */
  clear(): void {
    this.armed = null;
    this.active = null;
    this.pipeline.resetKVCache();
  }

  private hook(): void {
    const pipe = this.pipeline;
    const getInputData = pipe.getInputData;
    const resetKVCache = pipe.resetKVCache;
    const embedAndForward = pipe.embedAndForward;
    const beginForward = pipe.fKVCacheBeginForward;
    pipe.resetKVCache = () => {
      if (this.armed && this.policy) return; // the request's sequence is placed at getInputData
      resetKVCache.call(pipe);
      this.forgetAll();
    };
    pipe.getInputData = () => {
      if (!this.armed) return getInputData.call(pipe);
      if (!this.policy) {
        const reused = pipe.filledKVCacheLength;
        return then(getInputData.call(pipe), (data) => {
          this.observed = { promptTokens: reused + data[1], cachedTokens: reused };
          return data;
        });
      }
      const before = pipe.filledKVCacheLength;
      pipe.filledKVCacheLength = 0; // the full prompt, system prefix ids included
      let data: InputData | Promise<InputData>;
      try {
        data = getInputData.call(pipe);
      } catch (error) {
        pipe.filledKVCacheLength = before;
        throw error;
      }
      return then(data, (full) => this.place(full), () => (pipe.filledKVCacheLength = before));
    };
    pipe.embedAndForward = async (inputData: InputChunk[], inputDataLen: number) => {
      const active = this.active;
      let logits: unknown;
      try {
        logits = await embedAndForward.call(pipe, inputData, inputDataLen);
      } catch (error) {
        if (active) active.uncertain = true;
        throw error;
      }
      if (active) {
        // One by one: a prompt can be longer than the engine's argument limit (spreading it overflows the stack).
        for (const token of flatten(inputData, inputDataLen)) active.fed.push(token);
        if (active.prefilled === null && active.fed.length >= active.prompt) active.prefilled = pipe.filledKVCacheLength - active.cached;
      }
      return logits;
    };
    const forward = (...args: unknown[]) => {
      const seq = this.active?.seq ?? 0;
      if (seq !== 0) args[1] = pipe.tvm.makeShapeTuple([seq]);
      return beginForward(...args);
    };
    pipe.fKVCacheBeginForward = Object.assign(forward, { dispose: () => (beginForward as { dispose?: () => void }).dispose?.() });
  }

  /** Applies the policy to the full prompt; returns the part web-llm still prefills. */
  private place(full: InputData): InputData {
    const policy = this.policy as PromptCachePolicy;
    const ops = this.ops as KvOps;
    const [chunks, length] = full;
    const { tokens, firstImage } = promptTokens(chunks, length, full[2]);
    const lengths = new Map(policy.sequences().map((s) => [s.id, s.tokens.length]));
    const replies = this.repliesAfter(tokens, this.armed?.key); // before begin(), which may take such a sequence over
    const plan = policy.begin({ tokens, key: this.armed?.key, reusableUpTo: firstImage, maxNewTokens: this.armed?.maxNewTokens });
    this.lastPlan = plan;
    let reused = plan.reused;
    for (const id of plan.evict) this.removeSequence(id);
    if (plan.from === "same") {
      if (plan.popn > 0) ops.popn(plan.seq, plan.popn);
      else if (this.sealed.has(plan.seq) && reused > 0) {
        // A fork holds this sequence's last storage block: pop one token (the runtime gives the
        // sequence a block of its own) and feed it again.
        ops.popn(plan.seq, 1);
        reused -= 1;
      }
      if (plan.popn > 0 || reused < plan.reused) this.sealed.delete(plan.seq);
    } else {
      if (this.present.has(plan.seq)) this.removeSequence(plan.seq);
      if (plan.from === "fork") {
        const parent = plan.parent as number;
        ops.fork(parent, plan.seq, plan.reused);
        if (plan.reused === lengths.get(parent)) this.sealed.add(parent);
      } else ops.add(plan.seq);
      this.present.add(plan.seq);
    }
    this.pipeline.filledKVCacheLength = reused;
    this.active = { plan, seq: plan.seq, prompt: tokens.length, tokens, replies, fed: tokens.slice(0, reused), cached: this.pipeline.filledKVCacheLength, prefilled: null, uncertain: false };
    return [cut(chunks, reused), length - reused, ...full.slice(2)] as InputData;
  }

  private removeSequence(id: number): void {
    if (this.present.has(id)) (this.ops as KvOps).remove(id);
    this.present.delete(id);
    this.sealed.delete(id);
  }

  /** A sequence whose contents are uncertain leaves the policy and the runtime. */
  private dropSequence(id: number): void {
    this.policy?.drop(id);
    if (this.policy) this.removeSequence(id);
  }

  /** web-llm cleared the cache (it holds an empty sequence 0 again). */
  private forgetAll(): void {
    this.policy?.clear();
    this.present.clear();
    this.present.add(0);
    this.sealed.clear();
    this.active = null;
  }
}

/** Runs `next` on a value or on the promise of one (getInputData is synchronous in 0.2.79, async in 0.2.86). */
function then<T, R>(value: T | Promise<T>, next: (v: T) => R, onError?: () => void): R | Promise<R> {
  if (value && typeof (value as Promise<T>).then === "function") {
    return (value as Promise<T>).then(next, (error) => {
      onError?.();
      throw error;
    });
  }
  return next(value as T);
}

/** Placeholder id for a position an image fills (never equal to a token id). */
const IMAGE_SLOT = -1;

/** The prompt's token ids (image slots as placeholders) and the position of its first image. */
export function promptTokens(chunks: InputChunk[], length: number, embedSize?: unknown): { tokens: number[]; firstImage?: number } {
  const images = chunks.filter((c) => !Array.isArray(c));
  const textTokens = chunks.reduce((n, c) => n + (Array.isArray(c) ? c.length : 0), 0);
  const sizeOf = (image: object) => (typeof embedSize === "function" ? (embedSize as (i: object) => number)(image) : (length - textTokens) / images.length);
  const tokens: number[] = [];
  let firstImage: number | undefined;
  for (const chunk of chunks) {
    if (Array.isArray(chunk)) for (const token of chunk) tokens.push(token); // not spread: a chunk can exceed the argument limit
    else {
      firstImage ??= tokens.length;
      for (let i = sizeOf(chunk); i > 0; i--) tokens.push(IMAGE_SLOT);
    }
  }
  return firstImage === undefined ? { tokens } : { tokens, firstImage };
}

/** What one forward fed, as ids (image positions as placeholders). */
function flatten(inputData: InputChunk[], inputDataLen: number): number[] {
  return promptTokens(inputData, inputDataLen).tokens;
}

/** The chunks without their first `n` tokens (reuse never reaches an image). */
export function cut(chunks: InputChunk[], n: number): InputChunk[] {
  const out: InputChunk[] = [];
  let skip = n;
  for (const chunk of chunks) {
    if (skip > 0 && Array.isArray(chunk)) {
      if (chunk.length <= skip) {
        skip -= chunk.length;
        continue;
      }
      out.push(chunk.slice(skip));
      skip = 0;
    } else out.push(chunk);
  }
  return out;
}
