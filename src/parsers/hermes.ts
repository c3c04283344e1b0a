/**
 * Hermes / Qwen2.5 / Qwen3 (and our prompted format):
 * `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`, one block per
 * call. Also accepted, as llama.cpp does for small models: a list inside one
 * block, `<function=NAME>{…}</function>`, and a bare or ```json-fenced call
 * object filling the whole reply (DESIGN bare-call policy, bare-call.ts).
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";
import { NamedJsonBody } from "./named-json-body.js";
import { BareCallGate } from "./bare-call.js";

export function createHermesParser(sink: EventSink, declared: Set<string>): FormatParser {
  const tagged = new MarkerParser(sink, [
    { marker: "<tool_call>", close: "</tool_call>", body: (s) => new JsonCallList(s) },
    { marker: "<function=", close: "</function>", body: (s) => new NamedJsonBody(s, { terminators: [">"] }) },
  ]);
  return new BareCallGate(sink, tagged, declared);
}
