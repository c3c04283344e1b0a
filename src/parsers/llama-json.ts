/**
 * Llama-3.1/3.2: a bare `{"name": …, "parameters": {…}}` as the whole reply
 * (DESIGN bare-call policy, bare-call.ts; `;`-separated objects for several),
 * or after `<|python_tag|>`: JSON call objects separated by `;`, or a
 * built-in tool call `brave_search.call(query="…")` (named `brave_search`).
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { JsonCallList } from "./json-call-object.js";
import type { CallBody } from "./call-writer.js";
import { BareCallGate } from "./bare-call.js";
import { PythonCallsBody } from "./pythonic.js";
import { isWs } from "./partial-marker.js";

/** After `<|python_tag|>`: JSON objects or one built-in call, decided by the first character. */
class PythonTagBody implements CallBody {
  private inner: CallBody | null = null;
  status: CallBody["status"] = "more";

  constructor(private readonly sink: EventSink) {}

  get named(): boolean {
    return this.inner?.named ?? false;
  }

  get broken(): boolean {
    return this.inner?.broken ?? false;
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    if (!this.inner) {
      while (i < text.length && isWs(text.charCodeAt(i))) i++;
      if (i === text.length) return i;
      this.inner = text[i] === "{" ? new JsonCallList(this.sink) : new PythonCallsBody(this.sink, false, (n) => n.replace(/\.call$/, ""));
    }
    i = this.inner.feed(text, i, end);
    this.status = this.inner.status;
    return i;
  }

  finish(): void {
    if (!this.inner) {
      this.status = "fail";
      return;
    }
    this.inner.finish();
    this.status = this.inner.status;
  }
}

export function createLlamaJsonParser(sink: EventSink, declared: Set<string>): FormatParser {
  const tagged = new MarkerParser(sink, [{ marker: "<|python_tag|>", dropOnFail: true, body: (s) => new PythonTagBody(s) }]);
  return new BareCallGate(sink, tagged, declared);
}
