import type { EventSink } from "./event-sink.js";
import type { FunctionTool } from "../protocol/types.js";
import type { FormatParser } from "./marker-parser.js";
import { PlainParser } from "./plain.js";
export function createPythonicParser(sink: EventSink, tools?: FunctionTool[]): FormatParser {
  void tools;
  return new PlainParser(sink);
}
