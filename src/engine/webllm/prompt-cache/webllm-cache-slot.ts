/**
 * The web-llm engine's prompt cache across loads: the binding
 * (webllm-binding.ts) of the loaded chat pipeline, the budget it gets, and
 * what the adapter asks around each request. Keeps webllm-engine.ts free of
 * KV bookkeeping.
 *
 * - attach after every load of the chat model (a reload makes a new
 *   pipeline, with an empty cache); forget on unload and device loss.
 * - Budget: `promptCache.budgetTokens`, else the default of config.ts from
 *   the model's KV bytes per token (its mlc-chat-config `model_config` and
 *   quantization) and the device memory. The runtime's cache gets that much
 *   plus one context window, so the reply of a request never runs out of
 *   pages whatever is parked (the policy reserves nothing for it).
 * - Counts: what the pipeline reports (binding); without a pipeline (a
 *   stand-in engine), web-llm's round count with nothing cached.
 * - web-llm ≤ 0.2.83 continues its cache after an `abort`/`length` finish;
 *   where the binding does not manage the cache the adapter resets web-llm's
 *   chat before the next request (a managed cache places every request's
 *   sequence itself).
 * - speculative decoding (speculative/webllm-speculative-slot.ts) hooks the
 *   pipeline just before the prompt cache does, so the prompt cache records
 *   what each decode step feeds as without it; it learns from the binding
 *   which sequence the request runs in, and settles its pending draft before
 *   the binding records or places a sequence.
 */
import type { EngineRequest } from "../../types.js";
import { DEFAULT_MAX_SEQUENCES } from "../../prompt-cache/policy.js";
import { defaultBudgetTokens, kvBytesPerToken, mergeSettings, type PromptCacheOption, type PromptCacheSettings } from "../../prompt-cache/config.js";
import type { SpeculationUsage } from "../../speculative/counters.js";
import type { WebLlmSpeculativeSlot } from "../speculative/webllm-speculative-slot.js";
import { managedCacheSize, unmanagedReason, WebLlmPromptCache, type PrefillCount, type PromptCacheBudget, type WebLlmPipeline } from "./webllm-binding.js";

/** The chat config fields the KV size is read from (mlc-chat-config.json). */
export interface ChatConfigLike {
  quantization?: string;
  model_config?: Record<string, unknown>;
}

export class WebLlmCacheSlot {
  private binding: WebLlmPromptCache | null = null;
  private settings: PromptCacheSettings = {};
  private resetPending = false;
  /** The last request's decode counts (null: no pipeline to count on). */
  private decode: SpeculationUsage | null = null;

  constructor(
    private readonly own?: PromptCacheOption | PromptCacheSettings,
    private readonly speculative?: WebLlmSpeculativeSlot,
  ) {}

  /** The binding of the loaded chat model (null before a load or on a stand-in). */
  get current(): WebLlmPromptCache | null {
    return this.binding;
  }

  /**
   * A chat model was (re)loaded: hook its pipeline with the client's settings (kept for reloads that only add a model).
   * `reserve`: KV room the re-created cache keeps beside the prompt cache's (continuous batching's rows).
   */
  attach(pipeline: unknown, settings?: PromptCacheSettings, reserve?: { sequences: number; tokens: number }): void {
    if (settings) this.settings = settings;
    this.resetPending = false;
    this.speculative?.attach(pipeline);
    const budget = isPipeline(pipeline) ? this.budget(pipeline) : null;
    this.binding = isPipeline(pipeline) ? new WebLlmPromptCache(pipeline, budget && reserve ? { ...budget, reserve } : budget) : null;
    this.speculative?.connect(this.binding);
  }

  /**
   * Tokens of the KV cache that `attach(pipeline, settings, reserve)` would
   * re-create, or null where it leaves web-llm's own cache (prompt caching
   * off, a model the binding does not manage). Continuous batching sizes its
   * rows with it before attaching (webllm-kv-fit.ts).
   */
  plannedKvTokens(pipeline: unknown, settings: PromptCacheSettings | undefined, reserve: { sequences: number; tokens: number }): number | null {
    if (!isPipeline(pipeline) || unmanagedReason(pipeline)) return null;
    const budget = this.budget(pipeline, settings ?? this.settings);
    return budget ? managedCacheSize({ ...budget, reserve }).tokens : null;
  }

  /** The model (and its cache) is gone. */
  forget(): void {
    this.speculative?.forget();
    this.binding = null;
    this.resetPending = false;
  }

  /** Before a request: web-llm's pending reset, where it owns the cache. */
  async beforeRequest(reset: () => Promise<void>): Promise<void> {
    if (!this.resetPending) return;
    this.resetPending = false;
    await reset();
  }

  begin(request: EngineRequest): void {
    this.speculative?.begin({ enabled: request.speculative !== false, prediction: request.prediction });
    this.binding?.begin({ key: request.promptCacheKey });
  }

  /** The last ended request's decode passes and drafts (null: not read from a pipeline). */
  get decodeCounts(): SpeculationUsage | null {
    return this.decode;
  }

  /** After a request: what its prefill cost (null: not read from a pipeline). */
  end(finish: "stop" | "length" | "abort", resetsKvAfterAbort: boolean): PrefillCount | null {
    this.decode = this.speculative?.end() ?? null;
    const count = this.binding?.end(finish === "abort" ? "abort" : "done") ?? null;
    if (finish !== "stop" && !resetsKvAfterAbort && !this.binding?.policy) this.resetPending = true;
    return count;
  }

  /** A request failed: its sequence is dropped (a context-window error clears all). */
  fail(error: unknown): void {
    this.decode = this.speculative?.end() ?? null;
    this.binding?.end("error", error);
  }

  private budget(pipeline: WebLlmPipeline, given: PromptCacheSettings = this.settings): PromptCacheBudget | null {
    const settings = mergeSettings(given, this.own);
    if (settings.enabled === false) return null;
    const window = pipeline.contextWindowSize ?? 4096;
    const perToken = kvBytesOf((pipeline as { config?: ChatConfigLike }).config);
    const budgetTokens = settings.budgetTokens ?? defaultBudgetTokens({ contextWindow: window, kvBytesPerToken: perToken, deviceMemoryGb: settings.deviceMemoryGb });
    return { budgetTokens, maxSequences: settings.maxSequences ?? DEFAULT_MAX_SEQUENCES, replyRoom: window };
  }
}

function isPipeline(value: unknown): value is WebLlmPipeline {
  const p = value as Partial<WebLlmPipeline> | undefined;
  return !!p && typeof p.getInputData === "function" && typeof p.embedAndForward === "function" && typeof p.resetKVCache === "function" && !!p.tvm;
}

/** KV bytes per token from the model's config, or undefined when it does not say. */
export function kvBytesOf(config: ChatConfigLike | undefined): number | undefined {
  return kvShapeOf(config)?.bytesPerToken;
}

/** The KV cache's layers and bytes per token (all layers) from the model's config, or undefined when it does not say. */
export function kvShapeOf(config: ChatConfigLike | undefined): { layers: number; bytesPerToken: number } | undefined {
  const m = config?.model_config;
  if (!m) return undefined;
  const num = (...keys: string[]) => keys.map((k) => m[k]).find((v): v is number => typeof v === "number");
  const layers = num("num_hidden_layers", "n_layer", "num_layers");
  const heads = num("num_attention_heads", "n_head");
  const kvHeads = num("num_key_value_heads", "n_head_kv") ?? heads;
  const hidden = num("hidden_size", "n_embd");
  const headDim = num("head_dim") ?? (hidden && heads ? hidden / heads : undefined);
  if (!layers || !kvHeads || !headDim) return undefined;
  return { layers, bytesPerToken: kvBytesPerToken({ layers, kvHeads, headDim, bytesPerElement: /f32/.test(config?.quantization ?? "") ? 4 : 2 }) };
}
