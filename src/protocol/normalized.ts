/**
 * What request validation hands the pipeline: the normalized chat request
 * and its messages. Types only, in a file of their own, so the modules that
 * read a request (the host, the families, the store, tool-pairing.ts) name
 * them without importing the validator (validate.ts), which imports some of
 * them back.
 */
import type { ContentPart, FunctionTool, ProviderPreferences, ReasoningEffort, ToolCall, ToolChoice } from "./types.js";
import type { CustomTools } from "./custom-tools.js";

export interface NormalizedMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** Text, or parts when a user message carries images. */
  content: string | ContentPart[];
  toolCalls: ToolCall[];
  toolCallId: string | null;
  name: string | null;
  /** An assistant message's `reasoning_content` (or `reasoning`) as the app sent it back, when it did. */
  reasoning?: string;
  /** Where the message came from in the request (`messages[2]`, `input[0]`): errors about its parts name `${param}.content[j]`. */
  param?: string;
}

export interface NormalizedRequest {
  /** Exactly as sent: echoed in responses. */
  model: string;
  messages: NormalizedMessage[];
  /** Requested output limit; the host caps it at the model's maximum. */
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  logit_bias?: Record<string, number>;
  seed?: number;
  stop: string[];
  /** undefined = no logprobs; else the number of alternatives per token (0 = chosen token only). */
  topLogprobs: number | undefined;
  tools: FunctionTool[];
  /** Custom tools among `tools` (as functions with one `input` string), by name. */
  customTools?: CustomTools;
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  responseFormat: EngineResponseFormat | undefined;
  /** The parameter errors about `responseFormat` name: `text.format` for a Responses request; absent: `response_format` (chat). */
  responseFormatParam?: "text.format";
  /** undefined: the model's default. */
  reasoningEffort: ReasoningEffort | undefined;
  cacheKey: string | undefined;
  /** The connection (a tab of a shared worker) that sent it, set by the host: remembered raw replies are restored only for it. */
  client?: string;
  provider: ProviderPreferences | undefined;
  n: number;
  /** The last message is an assistant message to be continued. */
  continueFinalMessage: boolean;
  /** `prediction`'s text: the expected output, a source of speculative drafts. */
  prediction?: string;
}

/** The constrained-decoding forms an engine can be given (web-llm's grammar engine, xgrammar, takes all three; `EngineCapabilities.responseFormats` says which an engine takes). */
export type EngineResponseFormat =
  | { type: "json_object"; schema: string }
  | { type: "structural_tag"; structural_tag: Record<string, unknown> }
  /** An xgrammar EBNF (root rule `root`): what a web-llm without structural tags (0.2.79) takes instead. */
  | { type: "grammar"; grammar: string };
