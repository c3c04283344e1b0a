/**
 * The OpenAI Chat Completions wire types this library speaks, as in
 * `reference/api-contract.md`. Only what we read or write is typed; unknown
 * request fields are accepted and ignored, as hosted APIs do.
 */

export type Role = "system" | "developer" | "user" | "assistant" | "tool";

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export type ContentPart = TextPart | ImagePart;

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Reasoning sent back by apps that keep it (vLLM / DeepSeek style). */
  reasoning_content?: string | null;
}

export interface FunctionTool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

export type ToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      json_schema: { name?: string; schema?: Record<string, unknown>; strict?: boolean; description?: string };
    };

/** Requirements on the local GPU (the local meaning of the hosted `provider` field). */
export interface ProviderPreferences {
  require_features?: string[];
  min_memory_mb?: number;
  /** false: never serve this request remotely. */
  allow_fallbacks?: boolean;
  /** true: the request must run on this device. */
  require_local?: boolean;
}

export interface ChatCompletionCreateParams {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  repetition_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  tools?: FunctionTool[] | null;
  tool_choice?: ToolChoice | null;
  parallel_tool_calls?: boolean | null;
  response_format?: ResponseFormat | null;
  reasoning_effort?: ReasoningEffort | null;
  reasoning?: { effort?: ReasoningEffort; enabled?: boolean; max_tokens?: number } | null;
  chat_template_kwargs?: { enable_thinking?: boolean; [key: string]: unknown } | null;
  prompt_cache_key?: string | null;
  user?: string | null;
  provider?: ProviderPreferences | null;
  n?: number | null;
  [unknownField: string]: unknown;
}

export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

export interface TokenLogprob extends TopLogprob {
  top_logprobs: TopLogprob[];
}

export interface ChoiceLogprobs {
  content: TokenLogprob[] | null;
  refusal?: null;
}

export type FinishReason = "stop" | "length" | "tool_calls";

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  reasoning_content?: string | null;
  tool_calls?: ToolCall[];
  refusal: null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** Local extension, in place of the hosted API's vendor field. */
export interface WebGpuStats {
  request_id: string;
  queue_ms: number;
  ttft_ms: number;
  prefill_tokens_per_s: number;
  decode_tokens_per_s: number;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: Array<{
    index: number;
    message: AssistantMessage;
    finish_reason: FinishReason;
    logprobs: ChoiceLogprobs | null;
  }>;
  usage: Usage;
  x_webgpu: WebGpuStats;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

export interface ChunkDelta {
  role?: "assistant";
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: Array<{
    index: number;
    delta: ChunkDelta;
    finish_reason: FinishReason | null;
    logprobs: ChoiceLogprobs | null;
  }>;
  usage?: Usage | null;
  x_webgpu?: WebGpuStats;
}

export interface ModelObject {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** Local extras: what a UI needs to pick a model. */
  /** `embedding`: serves POST /embeddings only; `chat`: chat completions. */
  type: "chat" | "embedding";
  family: string;
  vram_required_mb: number | null;
  /** Tokens per request (chat) or per input (embedding). */
  context_window: number;
  capabilities: { tools: boolean; reasoning: boolean; vision: boolean; embeddings: boolean };
  quantization: string | null;
  /** Embedding models: the vector size (null when the record does not say). */
  dimensions?: number | null;
}

export interface ModelList {
  object: "list";
  data: ModelObject[];
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
