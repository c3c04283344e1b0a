/**
 * The OpenAI Chat Completions wire types this library speaks, as in
 * `reference/api-contract.md`. Only what we read or write is typed; unknown
 * request fields are accepted and ignored, as hosted APIs do.
 *
 * Request types are wide enough that values typed with the OpenAI SDK (v6 and
 * v7) are assignable to them, and response types narrow enough that ours are
 * assignable to the SDK's (test/types/ checks both with strict tsc). Shapes the
 * API defines but a local model cannot serve (audio and file parts, refusal
 * parts sent back, the legacy `function` role) are typed in and refused at
 * run time with a 400 naming them (protocol/validate.ts).
 *
 * Response types follow the request: the client's `create` infers the type of
 * `tools`, and a request without custom tools gets replies typed with function
 * calls only (ToolCallFor), as before custom tools existed.
 */

export type Role = "system" | "developer" | "user" | "assistant" | "tool";

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" | (string & {}) };
}

/** Audio containers this library takes: WAV goes to web-llm as it is; the others are decoded to mono PCM in the worker (src/audio/). */
export type AudioFormat = "wav" | "mp3" | "webm" | "ogg";

/** Encoded audio: base64 (or a `data:audio/…;base64,` URL) on the wire; JS callers may pass the bytes. */
export interface EncodedAudio {
  data: string | Uint8Array;
  format: AudioFormat | (string & {});
}

/** web-llm's own raw form for JS callers: mono samples at `sample_rate` Hz. */
export interface PcmAudio {
  data: Float32Array;
  format: "pcm_f32";
  sample_rate: number;
}

/**
 * Audio input (OpenAI's `input_audio` part, plus web-llm's `pcm_f32` form).
 * Taken by models whose inputs include audio (see models/inputs.ts).
 */
export interface InputAudioPart {
  type: "input_audio";
  input_audio: EncodedAudio | PcmAudio;
}

/** Parts a local model can take (which ones a given model takes: models/inputs.ts). */
export type ContentPart = TextPart | ImagePart | InputAudioPart;

/** A file by id or inline data: refused (there is no file store). */
export interface FilePart {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string };
}

/** A refusal sent back in an assistant message's content: refused as input. */
export interface RefusalPart {
  type: "refusal";
  refusal: string;
}

/** Every part a message may carry on the wire; only ContentPart is served. */
export type MessageContentPart = ContentPart | FilePart | RefusalPart;

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A call of a custom (free-text) tool (protocol/custom-tools.ts). */
export interface CustomToolCall {
  id: string;
  type: "custom";
  custom: { name: string; input: string };
  /** Never set: lets code written for function calls read `call.function?.…` on either kind. */
  function?: undefined;
}

/** Either kind of call in a reply: custom calls only answer a request that declares custom tools. */
export type AnyToolCall = ToolCall | CustomToolCall;

/** A message as this library serves it: what apps build their histories from. */
export interface ChatMessage {
  role: Role;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Reasoning sent back by apps that keep it (vLLM / DeepSeek style). */
  reasoning_content?: string | null;
}

/**
 * Every message the OpenAI API defines: what `messages` accepts, so SDK-typed
 * histories compile. A ChatMessage is one. What a local model cannot take
 * (audio and file parts, the legacy `function` role and `function_call`,
 * `audio`, custom tool calls) is refused at run time with a 400 naming it.
 */
export interface ChatCompletionMessageParam {
  /** `function`: the legacy role, refused. */
  role: Role | "function";
  content?: string | MessageContentPart[] | null;
  name?: string;
  tool_calls?: Array<ToolCall | CustomToolCall>;
  tool_call_id?: string;
  reasoning_content?: string | null;
  /** An assistant's refusal sent back: taken as what it said when `content` is empty. */
  refusal?: string | null;
  /** A previous audio reply: refused. */
  audio?: { id: string } | null;
  /** The legacy form of `tool_calls`: refused. */
  function_call?: { name: string; arguments: string } | null;
}

export interface FunctionTool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

/** A free-text (custom) tool, optionally with a grammar: answered with CustomToolCall (protocol/custom-tools.ts). */
export interface CustomTool {
  type: "custom";
  custom: {
    name: string;
    description?: string;
    format?: { type: string; grammar?: { definition: string; syntax: string } };
  };
}

/** Every tool a request may declare. */
export type ChatCompletionTool = FunctionTool | CustomTool;

/**
 * The calls a reply to a request declaring `Tool`s may hold: function calls
 * only, unless some tool may be a custom one. `Tool` is what the client
 * infers from `tools` (FunctionTool when there are none), so code for a
 * function-tools request reads `call.function.name` without a check.
 */
export type ToolCallFor<Tool extends ChatCompletionTool> = [Extract<Tool, { type: "custom" }>] extends [never] ? ToolCall : AnyToolCall;

/** The streamed form of ToolCallFor: the call deltas a chunk of that reply may hold. */
export type ToolCallDeltaFor<Tool extends ChatCompletionTool> = [Extract<Tool, { type: "custom" }>] extends [never] ? ToolCallDelta : AnyToolCallDelta;

/** The tool choices the engine serves (what validation normalizes to). */
export type ToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

/** Restricts the model to a subset of the declared tools (`mode` auto or required). */
export interface AllowedToolsChoice {
  type: "allowed_tools";
  allowed_tools: { mode: "auto" | "required"; tools: Array<Record<string, unknown>> };
}

/** Every `tool_choice` the request may send; a custom-tool choice is refused. */
export type ToolChoiceOption = ToolChoice | AllowedToolsChoice | { type: "custom"; custom: { name: string } };

export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      json_schema: { name?: string; schema?: Record<string, unknown>; strict?: boolean | null; description?: string };
    }
  /** Library extension: output constrained by the app's own regex or Lark grammar (docs/grammars.md). */
  | { type: "grammar"; syntax: "regex" | "lark"; definition: string; /** `regex` only: a RegExp's flags (`u`, `s`; `i`, `m`, `v` are refused). */ flags?: string };

/** Requirements on the local GPU (the local meaning of the hosted `provider` field). */
export interface ProviderPreferences {
  require_features?: string[];
  min_memory_mb?: number;
  /** false: never serve this request remotely. */
  allow_fallbacks?: boolean;
  /** true: the request must run on this device. */
  require_local?: boolean;
}

/** A chat request; `Tool` is the type of its `tools` entries (what the reply's types follow, see ToolCallFor). */
export interface ChatCompletionCreateParams<Tool extends ChatCompletionTool = ChatCompletionTool> {
  model: string;
  messages: ChatCompletionMessageParam[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
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
  tools?: Tool[] | null;
  tool_choice?: ToolChoiceOption | null;
  parallel_tool_calls?: boolean | null;
  response_format?: ResponseFormat | null;
  reasoning_effort?: ReasoningEffort | null;
  reasoning?: { effort?: ReasoningEffort; enabled?: boolean; max_tokens?: number } | null;
  chat_template_kwargs?: { enable_thinking?: boolean; [key: string]: unknown } | null;
  prompt_cache_key?: string | null;
  user?: string | null;
  provider?: ProviderPreferences | null;
  n?: number | null;

  // Fields of the OpenAI API that have no local meaning. Typed (loosely) so
  // SDK-typed bodies compile; other unknown fields are ignored at run time but
  // are a type error in a literal, as with the SDK.
  /** Ignored: nothing is stored. */
  store?: boolean | null;
  /** Ignored (goes with `store`). */
  metadata?: Record<string, string> | null;
  /** Ignored: there is one tier, this device. */
  service_tier?: string | null;
  /** Predicted Outputs: the expected output (e.g. the file being edited), a source of speculative drafts; the output does not depend on it. */
  prediction?: { type: "content"; content: string | Array<{ type: "text"; text: string }> } | null;
  /** Ignored. */
  verbosity?: string | null;
  /** Ignored. */
  safety_identifier?: string | null;
  /** Ignored: the KV cache lives as long as the engine. */
  prompt_cache_retention?: string | null;
  /** Ignored. */
  prompt_cache_options?: object | null;
  /** Ignored. */
  moderation?: object | null;
  /** Refused unless ["text"]: no local model here speaks audio. */
  modalities?: string[] | null;
  /** Refused: audio output. */
  audio?: object | null;
  /** Refused: hosted web search. */
  web_search_options?: object | null;
  /** Refused: the legacy form of `tools`. */
  functions?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  /** Refused: the legacy form of `tool_choice`. */
  function_call?: "none" | "auto" | { name: string };
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
  refusal: null;
}

export type FinishReason = "stop" | "length" | "tool_calls";

/** The reply's message; `Call` narrows to ToolCall for a request without custom tools (ToolCallFor). */
export interface AssistantMessage<Call extends AnyToolCall = AnyToolCall> {
  role: "assistant";
  content: string | null;
  reasoning_content?: string | null;
  tool_calls?: Call[];
  refusal: null;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    /** With `prediction`: the prediction's tokens that appeared in the output (accepted drafts from it), and the rest. */
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  };
}

/** Local extension, in place of the hosted API's vendor field. */
export interface WebGpuStats {
  request_id: string;
  queue_ms: number;
  ttft_ms: number;
  prefill_tokens_per_s: number;
  decode_tokens_per_s: number;
  /** Prompt tokens the engine prefilled (the rest came from its KV cache: `cached_tokens`); summed over choices. */
  prefill_tokens: number;
  /** Forward passes after the prompt's prefill (decode and speculative verify steps); summed over choices. */
  decode_passes: number;
  /** Tokens drafted by speculative decoding, and those the model accepted; summed over choices. */
  draft_tokens: number;
  accepted_draft_tokens: number;
  /** Of `draft_tokens`, those the request's grammar forced (jump-forward); present when there were some. Summed over choices. */
  jump_forward_tokens?: number;
  /**
   * A batching engine only (continuous batching): how many rows (generations) shared the forward passes this
   * request took part in, most and mean (1 when it ran alone), and how many passes that was; over choices.
   */
  batch?: { max_rows: number; mean_rows: number; passes: number };
}

/** A reply; `Call` as in AssistantMessage (the client narrows it to the request's tools). */
export interface ChatCompletion<Call extends AnyToolCall = AnyToolCall> {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  /** Omitted: there is no hosted backend configuration to fingerprint (the SDK types it string | undefined). */
  system_fingerprint?: string;
  choices: Array<{
    index: number;
    message: AssistantMessage<Call>;
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

/**
 * A custom call's delta: the first carries `id`, `custom.name` and, at run
 * time, `type: "custom"` (typed here without it: the openai SDK v6's chunk
 * type knows only function deltas, v7's has this shape); the next ones
 * `custom.input` fragments.
 */
export interface CustomToolCallDelta {
  index: number;
  id?: string;
  custom: { name?: string; input: string };
  /** Never set: lets code written for function deltas read `delta.function?.…` on either kind. */
  function?: undefined;
}

/** Either kind of call delta in a chunk: custom ones only for a request that declares custom tools. */
export type AnyToolCallDelta = ToolCallDelta | CustomToolCallDelta;

/** `Delta` narrows to ToolCallDelta for a request without custom tools (ToolCallDeltaFor). */
export interface ChunkDelta<Delta extends AnyToolCallDelta = AnyToolCallDelta> {
  role?: "assistant";
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: Delta[];
}

/** A streamed chunk; `Delta` as in ChunkDelta (the client narrows it to the request's tools). */
export interface ChatCompletionChunk<Delta extends AnyToolCallDelta = AnyToolCallDelta> {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  /** Omitted: there is no hosted backend configuration to fingerprint (the SDK types it string | undefined). */
  system_fingerprint?: string;
  choices: Array<{
    index: number;
    delta: ChunkDelta<Delta>;
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
  /** What the model reads: always "text"; "image" and/or "audio" when it takes them (models/inputs.ts). */
  input_modalities: Array<"text" | "image" | "audio">;
  capabilities: { tools: boolean; reasoning: boolean; vision: boolean; audio: boolean; embeddings: boolean };
  /** MLC's from the model id (e.g. "q4f16_1"); a GGUF model's from its file's header (e.g. "Q4_K_M", "F32"). */
  quantization: string | null;
  /** GGUF models: the bytes of the GGUF (every part of a split one), null when its server does not say. */
  size_bytes?: number | null;
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
