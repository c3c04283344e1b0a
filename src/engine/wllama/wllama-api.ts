/**
 * The part of `@wllama/wllama` 3.8.1's API this engine uses, written out so
 * the binding type-checks against what it relies on (and a change in wllama
 * shows up here). Shapes are wllama's OpenAI-compatible ones
 * (esm/types/oai-compat.d.ts); `timings` is llama-server's.
 */

export interface WllamaTimings {
  /** Prompt tokens served from the slot's KV cache (llama-server's prefix reuse). */
  cache_n: number;
  /** Prompt tokens prefilled. */
  prompt_n: number;
  prompt_per_second: number;
  /** Tokens generated. */
  predicted_n: number;
  predicted_per_second: number;
}

export interface WllamaUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export type WllamaFinish = "stop" | "length" | "tool_calls" | "content_filter" | null;

export interface WllamaChatChunk {
  choices: Array<{ delta: { content?: string | null }; finish_reason: WllamaFinish }>;
  usage?: WllamaUsage | null;
  timings?: WllamaTimings;
}

export interface WllamaRawChunk {
  choices: Array<{ text: string; finish_reason: WllamaFinish }>;
  usage?: WllamaUsage | null;
  timings?: WllamaTimings;
}

export interface WllamaMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Sampling as llama-server's OpenAI-compatible endpoints take it. */
export interface WllamaSampling {
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repeat_penalty?: number;
  stop?: string[];
  abortSignal?: AbortSignal;
  cache_prompt?: boolean;
  /** A GBNF grammar (root rule `root`) that llama.cpp's sampler holds every generated token to. */
  grammar?: string;
}

export interface WllamaInstance {
  loadModel(blobs: Blob[], params?: { n_ctx?: number; n_threads?: number; seed?: number }): Promise<void>;
  createChatCompletion(options: WllamaSampling & { messages: WllamaMessage[]; stream: true }): Promise<AsyncIterable<WllamaChatChunk>>;
  createCompletion(options: WllamaSampling & { prompt: string; stream: true }): Promise<AsyncIterable<WllamaRawChunk>>;
  isMultithread(): boolean;
  getNumThreads(): number;
  exit(): Promise<void>;
}

export interface WllamaLogger {
  debug: (...args: unknown[]) => void;
  log: (...args: unknown[]) => void;
  warn: (...args: unknown[]) => void;
  error: (...args: unknown[]) => void;
}

export interface WllamaModule {
  Wllama: new (paths: { default: string }, config?: { suppressNativeLog?: boolean; logger?: WllamaLogger }) => WllamaInstance;
}
