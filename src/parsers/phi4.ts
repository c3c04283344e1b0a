/**
 * Phi-4-mini: `<|tool_call|>[{"name": …, "arguments": {…}}]<|/tool_call|>`.
 * Real outputs often lack the closing token or the list brackets
 * (`<|tool_call|>{…}, {…}`); both are accepted. vLLM's custom template
 * teaches `functools[…]` instead; that is accepted too.
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";

export function createPhi4Parser(sink: EventSink): FormatParser {
  return new MarkerParser(sink, [
    { marker: "<|tool_call|>", close: "<|/tool_call|>", dropOnFail: true, body: (s) => new JsonCallList(s) },
    { marker: "functools[", body: (s) => new JsonCallList(s, ",;", true) },
  ]);
}
