/**
 * A model family: how a model of that family wants tools, tool calls, tool
 * results and thinking written into its prompt, and how its output is parsed.
 * One module per output format in this folder; `registry.ts` maps ids to them.
 */
import type { EngineMessage, EngineResponseFormat } from "../engine/types.js";
import type { NormalizedMessage } from "../protocol/validate.js";
import type { FunctionTool, ToolChoice } from "../protocol/types.js";
import type { OutputParser } from "../parsers/types.js";

export interface PromptContext {
  /** Declared tools; empty when `tool_choice` is `none`. */
  tools: FunctionTool[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  /** Whether thinking is on for this request (already resolved against the family's capability). */
  thinking: boolean;
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
  /** The prompt already opened the reasoning block (only `close` is generated). */
  promptOpened: boolean;
}

export interface Family {
  readonly name: string;
  /** `native`: the model was trained on a call format; `prompted`: we teach one in the system text. */
  readonly tools: "native" | "prompted";
  readonly reasoning: ReasoningShape | null;
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
