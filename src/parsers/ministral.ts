/**
 * Ministral-3 (Mistral tokenizer v11+/v13): `[TOOL_CALLS]name[ARGS]{…}`, one
 * marker per call; `[TOOL_CALLS]name{…}` (control token skipped in decoding,
 * as vLLM sees it) is accepted too. Prose before and after stays content.
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { NamedJsonBody } from "./named-json-body.js";

export function createMinistralParser(sink: EventSink): FormatParser {
  return new MarkerParser(sink, [
    { marker: "[TOOL_CALLS]", dropOnFail: true, body: (s) => new NamedJsonBody(s, { terminators: ["[ARGS]", "{"] }) },
  ]);
}
