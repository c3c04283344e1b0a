/**
 * Mistral v0.3: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` (Nemo-style
 * objects may carry an "id", ignored). Prose after the list stays content
 * (DESIGN). A `[TOOL_CALLS]` not followed by calls is dropped, the rest is content.
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";

export function createMistralParser(sink: EventSink): FormatParser {
  return new MarkerParser(sink, [{ marker: "[TOOL_CALLS]", dropOnFail: true, body: (s) => new JsonCallList(s) }]);
}
