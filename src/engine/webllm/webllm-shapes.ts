/**
 * The slices of web-llm this adapter uses (the same in 0.2.79 and 0.2.86):
 * the engine, the module, a streamed chunk, and the internals it reads
 * (guarded; absent → graceful fallback): `loadedModelIdToPipeline`
 * (tokenizer, filledKVCacheLength, logitProcessor) and
 * `loadedModelIdToChatConfig` (conversation template).
 */
import type { WebLlmEmbeddings } from "./webllm-embed.js";
import type { WebLlmModuleShape } from "./webllm-compat.js";
import type { WebLlmProgressReport } from "./webllm-progress.js";
import type { ConvTemplate } from "./webllm-request.js";

/** The slice of web-llm's MLCEngine this adapter uses (the same in 0.2.79 and 0.2.86). */
export interface WebLlmEngineLike {
  setAppConfig(appConfig: unknown): void;
  setInitProgressCallback(callback: (report: WebLlmProgressReport) => void): void;
  setLogitProcessorRegistry?(registry: Map<string, unknown>): void;
  reload(modelId: string | string[], chatOpts?: unknown): Promise<void>;
  /** Internal in 0.2.79–0.2.86: loads one more model without unloading the others (what `reload` loops over). */
  reloadInternal?(modelId: string, chatOpts?: unknown): Promise<void>;
  embeddings?: WebLlmEmbeddings;
  unload(): Promise<void>;
  interruptGenerate(): void;
  resetChat(...args: unknown[]): Promise<void>;
  getMessage(modelId?: string): Promise<string>;
  chat: { completions: { create(body: unknown): Promise<AsyncIterable<WebLlmChunk>> } };
  completions: { create(body: unknown): Promise<AsyncIterable<WebLlmChunk>> };
}

/** The slice of the web-llm module this adapter uses. */
export interface WebLlmModule extends WebLlmModuleShape {
  MLCEngine: new (config?: Record<string, unknown>) => WebLlmEngineLike;
}

export interface WebLlmLogprob {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: Array<{ token: string; logprob: number; bytes?: number[] | null }>;
}

/** A streamed chunk of either API. */
export interface WebLlmChunk {
  choices: Array<{
    delta?: { content?: string | null };
    text?: string;
    finish_reason?: string | null;
    logprobs?: { content?: WebLlmLogprob[] | null } | null;
  }>;
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    extra?: { prefill_tokens_per_s?: number; decode_tokens_per_s?: number; time_to_first_token_s?: number; e2e_latency_s?: number };
  };
}

/**
 * A model web-llm holds loaded (its own `LLMChatPipeline` or
 * `EmbeddingPipeline`; in this library "pipeline" means the host's,
 * host/pipeline-core.ts), as far as this adapter reads it.
 */
export interface WebLlmLoadedModel {
  tokenizer?: { encode(text: string): ArrayLike<number>; decode(ids: Int32Array): string };
  filledKVCacheLength?: number;
  logitProcessor?: unknown;
}

interface Internals {
  loadedModelIdToPipeline?: Map<string, WebLlmLoadedModel>;
  loadedModelIdToChatConfig?: Map<string, { conv_template?: ConvTemplate; conv_config?: Partial<ConvTemplate> }>;
}

const internals = (engine: WebLlmEngineLike | null) => engine as unknown as Internals;

/** web-llm's loaded `modelId` (undefined where this web-llm does not expose it). */
export const loadedModelOf = (engine: WebLlmEngineLike | null, modelId: string): WebLlmLoadedModel | undefined => internals(engine).loadedModelIdToPipeline?.get(modelId);

/** The chat config of `modelId`, with its conversation template where this web-llm exposes it. */
export const chatConfigOf = (engine: WebLlmEngineLike | null, modelId: string) => internals(engine).loadedModelIdToChatConfig?.get(modelId);
