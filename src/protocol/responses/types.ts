/**
 * The Responses API wire types (Open Responses, openresponses/openresponses
 * OpenAPI): what `POST /responses` takes and returns, the stream's events, and
 * the stored input items. Only what we read or write is typed.
 */
import type { InputAudioPart, TokenLogprob } from "../types.js";
import type { McpApprovalRequestItem, McpCallItem, McpItem, McpListToolsItem, McpStreamEvent, McpToolParam } from "./mcp-items.js";

export interface InputTextPart {
  type: "input_text";
  text: string;
}
export interface InputImagePart {
  type: "input_image";
  image_url: string;
  detail?: "auto" | "low" | "high";
}
export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: unknown[];
  logprobs?: TokenLogprob[];
}
export interface ReasoningTextPart {
  type: "reasoning_text";
  text: string;
}
export interface SummaryTextPart {
  type: "summary_text";
  text: string;
}

export interface MessageItem {
  type: "message";
  id: string;
  status: ItemStatus;
  role: "user" | "system" | "developer" | "assistant";
  /** `input_audio`: OpenAI's `ResponseInputAudio` ({data: base64, format}), or web-llm's pcm_f32 form from JS callers. */
  content: Array<InputTextPart | InputImagePart | InputAudioPart | OutputTextPart | { type: "refusal"; refusal: string }>;
}
export interface OutputMessageItem extends MessageItem {
  role: "assistant";
  content: OutputTextPart[];
}
export interface ReasoningItem {
  type: "reasoning";
  id: string;
  summary: SummaryTextPart[];
  content?: ReasoningTextPart[];
  encrypted_content?: string | null;
}
export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}
export interface FunctionCallOutputItem {
  type: "function_call_output";
  id: string;
  call_id: string;
  output: string | Array<InputTextPart | InputImagePart>;
  status: ItemStatus;
}
/** A call of a custom tool: its `input` is the text the model wrote (in the tool's grammar when it has one). */
export interface CustomToolCallItem {
  type: "custom_tool_call";
  id: string;
  call_id: string;
  name: string;
  input: string;
}
export interface CustomToolCallOutputItem {
  type: "custom_tool_call_output";
  id: string;
  call_id: string;
  output: string | Array<InputTextPart | InputImagePart>;
}
/** An item this library does not generate but keeps as sent (e.g. a compaction item). */
export interface OtherItem {
  type: string;
  id: string;
  [field: string]: unknown;
}

export type ItemStatus = "in_progress" | "completed" | "incomplete";
/** The `mcp` tool's items are output items too (mcp-items.ts). */
export type OutputItem = OutputMessageItem | ReasoningItem | FunctionCallItem | CustomToolCallItem | McpListToolsItem | McpCallItem | McpApprovalRequestItem;
/** An input item as stored (every item gets an id, as the hosted API lists them). */
export type InputItem = MessageItem | ReasoningItem | FunctionCallItem | FunctionCallOutputItem | CustomToolCallItem | CustomToolCallOutputItem | McpItem | OtherItem;

export interface FunctionToolParam {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

export interface CustomToolParam {
  type: "custom";
  name: string;
  description?: string;
  format: { type: "text" } | { type: "grammar"; syntax: "regex" | "lark"; definition: string };
}

export type ResponsesToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; name: string }
  | { type: "custom"; name: string }
  | { type: "allowed_tools"; mode: "auto" | "required"; tools: Array<{ type: "function" | "custom"; name: string }> }
  | { type: "mcp"; server_label: string; name?: string | null };

export type TextFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict: boolean | null; description?: string | null }
  /** Library extension: output constrained by the app's own regex or Lark grammar (docs/grammars.md). */
  | { type: "grammar"; syntax: "regex" | "lark"; definition: string; flags?: string };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

/** The Response object (the spec's ResponseResource). */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
  model: string;
  previous_response_id: string | null;
  instructions: string | null;
  output: OutputItem[];
  error: { code: string; message: string } | null;
  tools: Array<FunctionToolParam | CustomToolParam | McpToolParam>;
  tool_choice: ResponsesToolChoice;
  truncation: "auto" | "disabled";
  parallel_tool_calls: boolean;
  text: { format: TextFormat };
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  temperature: number;
  reasoning: { effort: string | null; summary: string | null } | null;
  usage: ResponseUsage | null;
  /** Local extension: forward passes after the prompt's prefill and speculative drafts (set when the response is finished). */
  x_webgpu?: {
    decode_passes: number;
    draft_tokens: number;
    accepted_draft_tokens: number;
    /** Of `draft_tokens`, those the grammar forced (jump-forward); present when there were some. */
    jump_forward_tokens?: number;
    /** A batching engine only: how many rows shared the forward passes this response took part in (chat's `x_webgpu.batch`). */
    batch?: { max_rows: number; mean_rows: number; passes: number };
    /** A background response whose worker stopped, continued by the next one: the reply tokens it had, and the tokens prefilled to go on. */
    resumed?: { reply_tokens: number; prefilled_tokens: number };
  };
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  store: boolean;
  background: boolean;
  service_tier: string;
  metadata: Record<string, string>;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  user: string | null;
  /** Set by the JS client (as the OpenAI SDK does): the text of every output_text part, joined. */
  output_text?: string;
}

export interface ResponseDeleted {
  id: string;
  object: "response";
  deleted: true;
}

export interface InputItemList {
  object: "list";
  data: InputItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface InputItemListQuery {
  limit?: number;
  order?: "asc" | "desc";
  after?: string;
}

type Seq = { sequence_number: number };
type ItemRef = { item_id: string; output_index: number };

/** Every event a stream carries, in the order the spec gives. */
export type ResponseStreamEvent =
  | ({ type: "response.created" | "response.in_progress" | "response.completed" | "response.incomplete" | "response.failed"; response: ResponseObject } & Seq)
  | ({ type: "response.output_item.added" | "response.output_item.done"; output_index: number; item: OutputItem } & Seq)
  | ({ type: "response.content_part.added" | "response.content_part.done"; content_index: number; part: OutputTextPart | ReasoningTextPart } & Seq & ItemRef)
  | ({ type: "response.output_text.delta"; content_index: number; delta: string; logprobs?: TokenLogprob[] } & Seq & ItemRef)
  | ({ type: "response.output_text.done"; content_index: number; text: string; logprobs?: TokenLogprob[] } & Seq & ItemRef)
  | ({ type: "response.reasoning_text.delta"; content_index: number; delta: string } & Seq & ItemRef)
  | ({ type: "response.reasoning_text.done"; content_index: number; text: string } & Seq & ItemRef)
  | ({ type: "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done"; summary_index: number; part: SummaryTextPart } & Seq & ItemRef)
  | ({ type: "response.reasoning_summary_text.delta"; summary_index: number; delta: string } & Seq & ItemRef)
  | ({ type: "response.reasoning_summary_text.done"; summary_index: number; text: string } & Seq & ItemRef)
  | ({ type: "response.function_call_arguments.delta"; delta: string } & Seq & ItemRef)
  | ({ type: "response.function_call_arguments.done"; arguments: string } & Seq & ItemRef)
  | ({ type: "response.custom_tool_call_input.delta"; delta: string } & Seq & ItemRef)
  | ({ type: "response.custom_tool_call_input.done"; input: string } & Seq & ItemRef)
  | McpStreamEvent
  | ({ type: "error"; error: { type: string; code: string | null; message: string; param: string | null } } & Seq);

/** Request body of `POST /responses` (loosely typed: validation checks every field). */
export interface ResponseCreateParams {
  model: string;
  input?: string | unknown[] | null;
  instructions?: string | null;
  previous_response_id?: string | null;
  tools?: unknown[] | null;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  text?: { format?: unknown } | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  truncation?: "auto" | "disabled" | null;
  store?: boolean | null;
  metadata?: Record<string, string> | null;
  prompt_cache_key?: string | null;
  user?: string | null;
  safety_identifier?: string | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  include?: string[] | null;
  [unknownField: string]: unknown;
}
