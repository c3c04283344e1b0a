/**
 * One entry point for every output format's parser. Families (src/families/)
 * pick a format and a reasoning shape; this builds the parser for them:
 * reasoning splitter first, then the format's tool-call parser, both writing
 * into one event sink (whitespace and undeclared-tool policies).
 *
 * Policies (DESIGN "Decisions", as applied to a stream that is never retracted):
 * - Calls stream as the hosted API streams them: a call's `tool_call` event
 *   goes out once its name is complete, its argument fragments as they are
 *   generated. Output that ends before the name (`<tool_call>{"name":
 *   "get_wea`) was a call that never started: its text is content. A call
 *   the output cuts (end of output, a stop string, max_tokens) stays a call
 *   with the arguments it has, closed into valid JSON (held-back tails such
 *   as a half literal dropped, open strings and containers closed), and the
 *   parser's `cutCall` is set: the host then reports `length`/`stop`, not
 *   `tool_calls`. A complete call missing only its closing tag is complete.
 * - Markup never reaches content: a call that breaks after its name
 *   (invalid JSON) keeps the arguments it had, and the rest of its block, up
 *   to the block's closing marker or the next call marker, is dropped.
 * - Bare JSON calls (no marker) count only when the whole reply is calls
 *   (bare-call.ts); such a reply is held back until the end of output.
 * - Prose before, between and after calls is content; whitespace touching a
 *   call or the end of reasoning is not, unless prose is on both sides.
 * - Calls naming undeclared tools are dropped (neither calls nor content).
 * - Qwen3.5: `<tool_call>` inside reasoning ends it (Gemma 4: `<|tool_call>`).
 * - Ministral: `[THINK]` must open reasoning unless the prompt did.
 */
import type { FunctionTool } from "../protocol/types.js";
import type { OutputParser, ParseEvent } from "./types.js";
import { EventSink } from "./event-sink.js";
import type { FormatParser } from "./marker-parser.js";
import { PlainParser } from "./plain.js";
import { ReasoningSplitter } from "./reasoning.js";
import { createHermesParser } from "./hermes.js";
import { createSmollmParser } from "./smollm.js";
import { createPhi4Parser } from "./phi4.js";
import { createMistralParser } from "./mistral.js";
import { createMinistralParser } from "./ministral.js";
import { createLlamaJsonParser } from "./llama-json.js";
import { createPythonicParser } from "./pythonic.js";
import { createQwenXmlParser } from "./qwen-xml.js";
import { createGemma4Parser } from "./gemma4.js";
import { createDeepseekR1Parser } from "./deepseek-r1.js";

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
  /**
   * Thinking is off for this request: a reasoning block the model emits anyway
   * (or the empty one web-llm injects) is removed rather than shown. Default false.
   */
  discardReasoning?: boolean;
}

/** Markers that end reasoning when the model forgets the close marker (DESIGN: Qwen3.5 `<tool_call>`). */
const IMPLICIT_REASONING_ENDS: Partial<Record<OutputFormat, string[]>> = {
  "qwen-xml": ["<tool_call>"],
  gemma4: ["<|tool_call>"],
};

/** Labels written right after an open marker that are not reasoning. */
const REASONING_LABELS: Record<string, string> = { "<|channel>": "thought" };

/**
 * `<|channel>thought` given as the open marker is the channel token plus its
 * label: recognise the token alone (a stray `<|channel>…` block is still a
 * block, e.g. to discard) and strip the label when present.
 */
function splitLabel(open: string): { open: string; label?: string } {
  for (const [token, label] of Object.entries(REASONING_LABELS)) {
    if (open === token || open === token + label) return { open: token, label };
  }
  return { open };
}

function createFormatParser(format: OutputFormat, sink: EventSink, tools: FunctionTool[]): FormatParser {
  if (tools.length === 0) return new PlainParser(sink);
  const declared = new Set(tools.map((t) => t.function.name));
  switch (format) {
    case "hermes":
      return createHermesParser(sink, declared);
    case "smollm":
      return createSmollmParser(sink);
    case "qwen-xml":
      return createQwenXmlParser(sink, tools);
    case "llama-json":
      return createLlamaJsonParser(sink, declared);
    case "pythonic":
      return createPythonicParser(sink);
    case "mistral":
      return createMistralParser(sink);
    case "ministral":
      return createMinistralParser(sink);
    case "phi4":
      return createPhi4Parser(sink);
    case "gemma4":
      return createGemma4Parser(sink);
    case "deepseek-r1":
      return createDeepseekR1Parser(sink);
  }
}

/** A fresh incremental parser for one choice of one request. */
export function createOutputParser(options: ParserOptions): OutputParser {
  const sink = new EventSink(options.tools.map((t) => t.function.name));
  const format = createFormatParser(options.format, sink, options.tools);
  const splitter = options.reasoning
    ? new ReasoningSplitter(sink, format, {
        ...splitLabel(options.reasoning.open),
        close: options.reasoning.close,
        startOpen: options.reasoningOpen,
        discard: options.discardReasoning ?? false,
        implicitEnds: IMPLICIT_REASONING_ENDS[options.format] ?? [],
      })
    : null;
  let done = false;
  return {
    get inReasoning() {
      return splitter?.inReasoning ?? false;
    },
    get cutCall() {
      return sink.cut;
    },
    push(text: string): ParseEvent[] {
      if (done || !text) return [];
      if (splitter) splitter.push(text);
      else format.push(text);
      return sink.take();
    },
    finish(): ParseEvent[] {
      if (done) return [];
      done = true;
      if (splitter) splitter.finish();
      else format.finish();
      sink.finish();
      return sink.take();
    },
  };
}
