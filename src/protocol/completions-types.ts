/**
 * The legacy Completions API shapes (`POST /completions`), as served
 * locally: a raw prompt in, text out, no chat template. Field for field the
 * openai SDK's `CompletionCreateParams` / `Completion`, so SDK-typed bodies
 * and results pass both ways.
 */
import type { Usage, WebGpuStats } from "./types.js";

export interface CompletionCreateParams {
  /** A catalog id or alias, as for chat. Base models and apps that template their own prompts. */
  model: string;
  /** The text the model continues, as is (no chat template, no BOS added); an array gives one set of `n` choices per prompt. Token-id prompts are refused. */
  prompt: string | string[] | number[] | number[][] | null;
  /** Default 16, as the legacy API; bounded by the model's context window. */
  max_tokens?: number | null;
  /** Choices per prompt (1–8). */
  n?: number | null;
  /** The prompt is put in front of each choice's text. */
  echo?: boolean | null;
  /** 0–5: each generated token's log probability and this many most likely alternatives (`tokens`, `token_logprobs`, `top_logprobs`, `text_offset`). */
  logprobs?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  seed?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  /** Accepted; keys the prompt cache (as chat's `user`). */
  user?: string;
  /** Refused (400): web-llm's completion API has no insertion mode. */
  suffix?: string | null;
  /** Only 1 (or absent): web-llm cannot rank candidates by their log probability. */
  best_of?: number | null;
}

/** The legacy logprobs form: one entry per generated token, parallel arrays. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  /** Per token, its most likely alternatives (token → log probability), `logprobs` of them. */
  top_logprobs: Array<Record<string, number>>;
  /** Where each token starts in prompt + text (the prompt's length counts even without `echo`). */
  text_offset: number[];
}

export interface CompletionChoice {
  index: number;
  text: string;
  logprobs: CompletionLogprobs | null;
  /** `stop` (end of output or a stop sequence) or `length` (max_tokens or the context window). Null in a stream's chunks until the choice ends. */
  finish_reason: "stop" | "length" | null;
}

export interface Completion {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  /** Omitted: there is no hosted backend configuration to fingerprint. */
  system_fingerprint?: string;
  choices: CompletionChoice[];
  /** Summed over every generation (prompts × n). In a stream: only on the last chunk, with `stream_options.include_usage` (null before). */
  usage?: Usage | null;
  /** Local extension: this request's measurements (non-streamed; streamed on the usage chunk). */
  x_webgpu?: WebGpuStats;
}

/** A streamed chunk: the legacy API streams `Completion` objects, one choice's delta text each. */
export type CompletionChunk = Completion;
