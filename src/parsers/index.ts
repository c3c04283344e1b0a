/**
 * One entry point for every output format's parser. Families (src/families/)
 * pick a format and a reasoning shape; this builds the parser for them.
 * (Format parsers land in this folder, one file per format.)
 */
import type { FunctionTool } from "../protocol/types.js";
import type { OutputParser, ParseEvent } from "./types.js";

/** The tool-call grammars models emit (tool-and-reasoning-formats.md §0). */
export type OutputFormat =
  | "hermes" //      <tool_call>\n{"name":…,"arguments":{…}}\n</tool_call>  (Qwen2.5/Qwen3/Hermes; our prompted format)
  | "smollm" //      <tool_call>[{"name":…,"arguments":{…}}, …]</tool_call>
  | "qwen-xml" //    <tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>  (Qwen3.5)
  | "llama-json" //  {"name":…,"parameters":{…}} as the whole message  (Llama-3.1/3.2)
  | "pythonic" //    [f(a=1), g()]
  | "mistral" //     [TOOL_CALLS][{"name":…,"arguments":{…}}, …]  (Mistral v0.3)
  | "ministral" //   [TOOL_CALLS]name[ARGS]{…}  (Ministral-3)
  | "phi4" //        <|tool_call|>[{…}]<|/tool_call|>
  | "gemma4" //      <|tool_call>call:name{k:<|"|>v<|"|>}<tool_call|>
  | "deepseek-r1"; // <｜tool▁calls▁begin｜>…

export interface ReasoningMarkers {
  open: string;
  close: string;
}

export interface ParserOptions {
  format: OutputFormat;
  /** Markers of the family's reasoning block, or null when it has none. */
  reasoning: ReasoningMarkers | null;
  /** The prompt opened the reasoning block: output starts inside it. */
  reasoningOpen: boolean;
  /** Declared tools (a bare JSON call counts only if it names one of them); empty: no tool parsing. */
  tools: FunctionTool[];
}

export function createOutputParser(options: ParserOptions): OutputParser {
  // Placeholder until the format parsers land: everything is content.
  void options;
  return {
    inReasoning: false,
    push: (text: string): ParseEvent[] => (text ? [{ type: "content", text }] : []),
    finish: (): ParseEvent[] => [],
  };
}
