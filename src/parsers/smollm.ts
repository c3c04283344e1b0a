/**
 * SmolLM2-1.7B: a JSON list of calls inside one `<tool_call>…</tool_call>`;
 * `[]` means no call (and is not shown).
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";

export function createSmollmParser(sink: EventSink): FormatParser {
  return new MarkerParser(sink, [{ marker: "<tool_call>", close: "</tool_call>", body: (s) => new JsonCallList(s) }]);
}
