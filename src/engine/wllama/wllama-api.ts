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

/** One alternative of a token, as llama-server's `probs_to_json` writes it (log-softmax of the model's logits before sampling). */
export interface WllamaTopLogprob {
  id?: number;
  token: string;
  logprob: number;
  bytes?: number[] | null;
}

/** The sampled token with its `top_logprobs` (as many as `n_probs`, most likely first). */
export interface WllamaTokenLogprob extends WllamaTopLogprob {
  top_logprobs?: WllamaTopLogprob[];
}

/** A streamed chunk's logprobs (llama-server sends them where `n_probs` > 0, for chat and raw completions alike). */
export interface WllamaChunkLogprobs {
  content?: WllamaTokenLogprob[] | null;
}

export interface WllamaChatChunk {
  choices: Array<{ delta: { content?: string | null }; finish_reason: WllamaFinish; logprobs?: WllamaChunkLogprobs | null }>;
  usage?: WllamaUsage | null;
  timings?: WllamaTimings;
}

export interface WllamaRawChunk {
  choices: Array<{ text: string; finish_reason: WllamaFinish; logprobs?: WllamaChunkLogprobs | null }>;
  usage?: WllamaUsage | null;
  timings?: WllamaTimings;
}

/** A chat message for llama.cpp's Jinja template; a `tool` turn is rendered by the GGUF's template as it writes tool results. */
export interface WllamaMessage {
  role: "system" | "user" | "assistant" | "tool";
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
  /** Token id (digits) → bias added to its logit before sampling (OpenAI's form; llama-server parses the ids). */
  logit_bias?: Record<string, number>;
}

/** Logprobs as llama-server's chat endpoint takes them (it sets `n_probs` = `top_logprobs`). */
export interface WllamaChatLogprobs {
  logprobs?: boolean;
  top_logprobs?: number;
}

/** Logprobs as llama-server's raw completion endpoint takes them: the number of alternatives (`n_probs`). */
export interface WllamaRawLogprobs {
  logprobs?: number;
}

/**
 * How llama-server returns a reasoning template's think block (per request, in the body it parses):
 * its default moves it out of `content` into a `reasoning_content` field; `"none"` leaves the text raw.
 */
export interface WllamaChatParsing {
  reasoning_format?: "none" | "deepseek" | "deepseek-legacy";
  /** Variables for the GGUF's Jinja chat template (`enable_thinking`). */
  chat_template_kwargs?: Record<string, unknown>;
}

export interface WllamaEmbeddings {
  data: Array<{ index: number; embedding: number[] | string }>;
  usage: { prompt_tokens: number };
}

export interface WllamaInstance {
  /** `embeddings`: load for `createEmbedding` (pooled as the GGUF declares, `<arch>.pooling_type`). */
  loadModel(blobs: Blob[], params?: { n_ctx?: number; n_threads?: number; seed?: number; embeddings?: boolean }): Promise<void>;
  /** llama-server's OpenAI embeddings: one pooled, L2-normalized vector per input. */
  createEmbedding(options: { input: string[] }): Promise<WllamaEmbeddings>;
  createChatCompletion(options: WllamaSampling & WllamaChatLogprobs & WllamaChatParsing & { messages: WllamaMessage[]; stream: true }): Promise<AsyncIterable<WllamaChatChunk>>;
  createCompletion(options: WllamaSampling & WllamaRawLogprobs & { prompt: string; stream: true }): Promise<AsyncIterable<WllamaRawChunk>>;
  /**
   * What llama.cpp loaded: `n_vocab` bounds the token ids `logit_bias` may name; `metadata`, the GGUF's
   * scalar key-values as text (`tokenizer.chat_template`; arrays left out); BOS/EOS ids (-1: none) and
   * whether tokenizing adds BOS, for the chat template (gguf-prompt.ts).
   */
  getLoadedContextInfo(): { n_vocab: number; metadata?: Record<string, string>; token_bos?: number; token_eos?: number; add_bos_token?: boolean };
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
