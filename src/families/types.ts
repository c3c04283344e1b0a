/**
 * A model family: how a model of that family wants tools, tool calls, tool
 * results and thinking written into its prompt, and how its output is parsed.
 * One module per output format in this folder; `registry.ts` maps ids to them.
 */
import type { EngineMessage, EngineResponseFormat } from "../engine/types.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { FunctionTool, ToolChoice } from "../protocol/types.js";
import type { OutputFormat } from "../parsers/index.js";
import type { OutputParser } from "../parsers/types.js";
import type { CustomTools } from "../protocol/custom-tools.js";

export interface PromptContext {
  /** Declared tools; empty when `tool_choice` is `none`. */
  tools: FunctionTool[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** Whether thinking is on for this request (already resolved against the family's capability). */
  thinking: boolean;
  /** Custom tools among `tools` (rendered as functions with one `input` string), by name. */
  customTools?: CustomTools;
  /**
   * The exact text the model produced for an assistant message of an earlier
   * turn, when the host still has it: rendering it verbatim keeps web-llm's
   * KV cache reusable.
   */
  rawAssistantText(message: NormalizedMessage): string | undefined;
}

export interface ReasoningShape {
  open: string;
  close: string;
  /** Thinking is on unless the request turns it off. */
  defaultOn: boolean;
  /**
   * The output starts inside the reasoning block: the prompt opened it (only
   * `close` is generated), or the model was trained on a prompt that did
   * (DeepSeek-R1 distills). An open marker the model writes anyway is accepted.
   */
  promptOpened: boolean;
  /** What the model writes right after `close` before its answer (Qwen: a blank line). */
  gap: string;
  /**
   * Thinking can be turned off for a request. False for models that always
   * think (DeepSeek-R1 distills): a request's "off" then only hides nothing.
   */
  switchable: boolean;
  /**
   * What the official template appends to the generation prompt when thinking
   * is off (Qwen3/Qwen3.5: an empty think block). The chat API cannot append
   * to the generation prompt; web-llm's `enable_thinking: false` inserts
   * exactly `<think>\n\n</think>\n\n` there, so an engine uses it when this is
   * set. Undefined: the switch lives in the messages (shapeMessages does it).
   */
  offPrefill?: string;
}

/** What a family can do; reported by `models.list` and used by the host. */
export interface FamilyCapabilities {
  /** The model may emit several calls in one reply (the official template renders several). */
  parallelToolCalls: boolean;
  /** The model's template accepts a system turn (else the tool text goes into the first user turn). */
  systemRole: boolean;
}

export interface Family {
  readonly name: string;
  /** `native`: the model was trained on a call format; `prompted`: we teach one in the system text. */
  readonly tools: "native" | "prompted";
  /** The tool-call grammar of the model's output (the parser to use). */
  readonly format: OutputFormat;
  readonly reasoning: ReasoningShape | null;
  readonly capabilities: FamilyCapabilities;
  /** web-llm `chatOpts.conv_config` applied at load (e.g. a `tool` role). */
  readonly convConfig?: Record<string, unknown>;
  /** Messages as the engine gets them: tools in the system text, calls and results in the family's format. */
  shapeMessages(messages: NormalizedMessage[], context: PromptContext): EngineMessage[];
  /** Constrained decoding for `tool_choice` (structural tag), or undefined for free text. */
  toolGrammar(context: PromptContext): EngineResponseFormat | undefined;
  createParser(context: PromptContext): OutputParser;
  /** A fresh tool call id in the family's style (`call_…`, or 9 alphanumerics for Mistral). */
  newToolCallId(): string;
}
