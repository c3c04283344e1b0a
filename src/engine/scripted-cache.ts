/**
 * The scripted engine's KV cache, simulated: with prompt caching on, the same
 * policy web-llm's binding applies (engine/prompt-cache/policy.ts) on the
 * scripted engine's token ids, so apps' tests see the `cached_tokens` web-llm
 * would give; off, web-llm's own rule (the previous conversation, extended
 * byte for byte by one user or tool message, reused whole).
 */
import { PromptCachePolicy } from "./prompt-cache/policy.js";
import { KV_PAGE_SIZE, defaultBudgetTokens, mergeSettings, type PromptCacheOption, type PromptCacheSettings } from "./prompt-cache/config.js";
import type { EngineRequest } from "./types.js";
import type { ScriptedPrompt } from "./scripted-prompt.js";
import { KvTracker } from "./webllm/webllm-kv.js";

/** A request in flight: what it reuses, and where its tokens go. */
export interface CacheTurn {
  cached: number;
  seq: number | null;
  /** Recorded or dropped. */
  settled?: boolean;
}

export class ScriptedCache {
  private policy: PromptCachePolicy | null = null;
  /** Caching off: web-llm's own rule, as its adapter tracks it. */
  private readonly stock = new KvTracker();

  constructor(private readonly own: PromptCacheOption | PromptCacheSettings | undefined) {}

  /** At load: a fresh cache sized for the model's window. */
  configure(host: PromptCacheSettings | undefined, contextWindow: number): void {
    const settings = mergeSettings(host, this.own);
    this.stock.forget();
    this.policy =
      settings.enabled === false
        ? null
        : new PromptCachePolicy({
            budgetTokens: settings.budgetTokens ?? defaultBudgetTokens({ contextWindow, deviceMemoryGb: settings.deviceMemoryGb }),
            maxSequences: settings.maxSequences,
            pageSize: KV_PAGE_SIZE,
          });
  }

  begin(request: EngineRequest, prompt: ScriptedPrompt): CacheTurn {
    if (this.policy) {
      // No room reserved for the reply: it is made as the reply grows (at record), as a binding does with makeRoom.
      const plan = this.policy.begin({ tokens: prompt.ids, key: request.promptCacheKey, reusableUpTo: prompt.imageAt });
      return { cached: plan.reused, seq: plan.seq };
    }
    const cached = this.stock.reusedTokens(request);
    this.stock.forget();
    return { cached, seq: null };
  }

  /** Replies the cache holds after this whole prompt under the request's key (a source of speculative drafts); ask before `begin`. */
  continuations(request: EngineRequest, prompt: ScriptedPrompt): number[][] {
    return this.policy?.continuations(prompt.ids, request.promptCacheKey) ?? [];
  }

  /**
   * The turn ended with `fed` in the cache (prompt and reply tokens but the
   * last). Off: only a `stop` outside a continuation is kept, as web-llm does.
   */
  finish(turn: CacheTurn, request: EngineRequest, fed: number[], reply: string, finish: "stop" | "length" | "abort"): void {
    turn.settled = true;
    // Evictions the reply's growth needed are applied at record: a simulation never runs out mid-reply.
    if (this.policy && turn.seq !== null) this.policy.record(turn.seq, fed);
    // web-llm continues a final message, and serves raw prompts, through its completion API, which resets the cache.
    else if (!this.policy && !request.continueFinalMessage && request.rawPrompt === undefined) this.stock.record(request, reply, finish, 0, 0, fed.length);
  }

  /** The turn's cache contents are uncertain (abort during prefill, an error). */
  drop(turn: CacheTurn): void {
    turn.settled = true;
    if (turn.seq !== null) this.policy?.drop(turn.seq);
    this.stock.forget();
  }

  /** Unload, reload, context overflow. */
  clear(): void {
    this.policy?.clear();
    this.stock.forget();
  }
}
