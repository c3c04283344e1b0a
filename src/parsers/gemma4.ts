/**
 * Gemma 4: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:42,o:{…},a:[…]}<tool_call|>`,
 * calls back to back. Not JSON: keys are bare, strings are delimited by the
 * `<|"|>` token and taken literally (quotes and backslashes included),
 * numbers/booleans/null are bare. Converted to JSON as it streams; a bare
 * value is held until its delimiter (`1` may still become `1.5`). A call cut
 * off at the end of output keeps what was converted, closed (a cut call).
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import { CallWriter, type CallBody } from "./call-writer.js";
import { JsonWriter, bareToJson } from "./json-writer.js";
import { isPrefixOf, isWs, partialMarkerLength } from "./partial-marker.js";

const QUOTE = '<|"|>';
const NAME_CHAR = /[A-Za-z0-9_.\-]/;

class Gemma4CallBody implements CallBody {
  status: CallBody["status"] = "more";
  private readonly call: CallWriter;
  private readonly json: JsonWriter;
  private stage: "prefix" | "name" | "args" = "prefix";
  private name = "";
  private key: string | null = null;
  private token = ""; // a key or a bare value being read
  private inString = false;
  private expectKey = false;

  constructor(sink: EventSink) {
    this.call = new CallWriter(sink);
    this.json = new JsonWriter(this.call);
  }

  get named(): boolean {
    return this.call.named;
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    while (i < text.length && this.status === "more") {
      if (this.stage === "prefix") {
        const rest = text.slice(i, i + 5);
        if (rest.startsWith("call:")) {
          i += 5;
          this.stage = "name";
          continue;
        }
        if (!end && isPrefixOf(rest, "call:")) return i;
        this.status = "fail";
        return i;
      }
      if (this.stage === "name") {
        const ch = text[i];
        if (ch === "{") {
          if (!this.name) return this.fail(i);
          this.call.begin(this.name);
          this.stage = "args";
          continue;
        }
        if (!NAME_CHAR.test(ch) || this.name.length > 128) return this.fail(i);
        this.name += ch;
        i++;
        continue;
      }
      if (this.inString) {
        const at = text.indexOf(QUOTE, i);
        if (at >= 0) {
          this.json.stringText(text.slice(i, at));
          this.json.endString();
          this.inString = false;
          i = at + QUOTE.length;
          continue;
        }
        const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(i, text.length - 8)), [QUOTE]);
        this.json.stringText(text.slice(i, text.length - keep));
        return text.length - keep;
      }
      const c = text[i];
      if (text.startsWith(QUOTE, i)) {
        this.flushToken();
        this.json.beginString(this.takeKey());
        this.inString = true;
        i += QUOTE.length;
        continue;
      }
      if (c === "<" && !end && isPrefixOf(text.slice(i), QUOTE)) return i;
      if (c === "{" || c === "[") {
        this.flushToken();
        this.json.open(c === "{" ? "o" : "a", this.takeKey());
        this.expectKey = c === "{";
        i++;
        continue;
      }
      if (c === "}" || c === "]") {
        this.flushToken();
        this.json.closeContainer();
        this.expectKey = false;
        i++;
        if (this.json.depth === 0) {
          this.call.end();
          this.status = "done";
        }
        continue;
      }
      if (c === ",") {
        this.flushToken();
        this.expectKey = this.json.inObject;
        i++;
        continue;
      }
      if (c === ":" && this.expectKey) {
        this.key = this.token.trim();
        this.token = "";
        this.expectKey = false;
        i++;
        continue;
      }
      if (!(isWs(c.charCodeAt(0)) && this.token === "")) this.token += c;
      i++;
    }
    return i;
  }

  finish(): void {
    if (this.status !== "more") return;
    if (!this.call.named) {
      this.status = "fail";
      return;
    }
    if (!this.inString && !this.expectKey) this.flushToken();
    this.json.close();
    this.call.cut();
    this.status = "done";
  }

  private takeKey(): string | null {
    const key = this.key;
    this.key = null;
    return key;
  }

  /** A bare value ends at its delimiter. */
  private flushToken(): void {
    const token = this.token.trim();
    this.token = "";
    if (token === "" || this.expectKey) return;
    this.json.scalar(bareToJson(token), this.takeKey());
  }

  private fail(i: number): number {
    this.status = "fail";
    return i;
  }
}

export function createGemma4Parser(sink: EventSink): FormatParser {
  return new MarkerParser(sink, [
    { marker: "<|tool_call>", close: "<tool_call|>", dropOnFail: true, body: (s) => new Gemma4CallBody(s) },
  ]);
}
