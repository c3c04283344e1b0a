/** No tool parsing (the request declared no tools, or the format has none): everything is content. */
import type { EventSink } from "./event-sink.js";
import type { FormatParser } from "./marker-parser.js";

export class PlainParser implements FormatParser {
  constructor(private readonly sink: EventSink) {}
  push(text: string): void {
    this.sink.content(text);
  }
  finish(): void {}
}
