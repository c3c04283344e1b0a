import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";
import { BareCallGate } from "./bare-call.js";
export function createLlamaJsonParser(sink: EventSink, declared: Set<string>): FormatParser {
  const tagged = new MarkerParser(sink, [{ marker: "<|python_tag|>", dropOnFail: true, body: (s) => new JsonCallList(s) }]);
  return new BareCallGate(sink, tagged, declared);
}
