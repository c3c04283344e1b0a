/**
 * Pythonic calls: `[get_weather(city='Paris', days=3), get_time()]`
 * (Llama-3.2's documented alternative, Google's recipe for Gemma 2/3, Llama-3.1
 * built-ins after `<|python_tag|>`). Recognised anywhere in prose when a `[`
 * is followed by `name(`; `<|python_start|>`/`<|python_end|>` around them are
 * dropped. Keyword arguments with Python literal values (strings, numbers,
 * True/False/None and JSON's true/false/null, lists, tuples, dicts) are
 * converted to a JSON object as they stream; anything else (an expression,
 * `b'…'`) becomes a string of its source text.
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser, type Opener } from "./marker-parser.js";
import { CallWriter, type CallBody } from "./call-writer.js";
import { JsonWriter, bareToJson } from "./json-writer.js";
import { isWs } from "./partial-marker.js";

const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_.]/;

type Frame = { kind: "args" | "list" | "dict"; expectKey: boolean };

export class PythonCallsBody implements CallBody {
  status: CallBody["status"] = "more";
  private call: CallWriter | null = null;
  private json: JsonWriter | null = null;
  private stage: "list" | "name" | "args" = "name";
  private name = "";
  private anyNamed = false;
  private frames: Frame[] = [];
  private key: string | null = null;
  private token = "";
  private quote = ""; // the open string's quote char
  private stringIsKey = false;
  private keyText = "";
  /** A call broke off inside its arguments: the rest of the list is markup. */
  broken = false;

  constructor(private readonly sink: EventSink, private readonly list: boolean, private readonly rename: (name: string) => string = (n) => n) {
    if (list) this.stage = "list";
  }

  get named(): boolean {
    return this.anyNamed;
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    while (i < text.length && this.status === "more") {
      const c = text[i];
      if (this.stage === "list") {
        if (c !== "[") return this.fail(i);
        this.stage = "name";
        i++;
        continue;
      }
      if (this.stage === "name") {
        if (this.call === null && this.name === "" && (isWs(c.charCodeAt(0)) || c === ",")) {
          if (c === "," && !this.anyNamed) return this.fail(i);
          i++;
          continue;
        }
        if (this.list && this.name === "" && c === "]" && this.anyNamed) {
          this.status = "done";
          return i + 1;
        }
        if (c === "(") {
          if (!this.name) return this.fail(i);
          this.call = new CallWriter(this.sink);
          this.call.begin(this.rename(this.name));
          this.anyNamed = true;
          this.json = new JsonWriter(this.call);
          this.json.open("o");
          this.frames = [{ kind: "args", expectKey: true }];
          this.stage = "args";
          i++;
          continue;
        }
        if ((this.name ? IDENT : IDENT_START).test(c) && this.name.length < 128) {
          this.name += c;
          i++;
          continue;
        }
        if (isWs(c.charCodeAt(0)) && this.name) {
          i++;
          continue;
        }
        return this.fail(i);
      }
      // Inside a call's arguments.
      if (this.quote) {
        const r = this.stringChars(text, i, end);
        if (r < 0) return i; // half an escape: wait
        i = r;
        continue;
      }
      const frame = this.frames[this.frames.length - 1];
      if (c === "'" || c === '"') {
        this.quote = c;
        this.stringIsKey = frame.kind === "dict" && frame.expectKey;
        if (this.stringIsKey) this.keyText = "";
        else this.json!.beginString(this.takeKey());
        i++;
        continue;
      }
      if (c === "[" || c === "(" || c === "{") {
        this.token = "";
        this.json!.open(c === "{" ? "o" : "a", this.takeKey());
        this.frames.push({ kind: c === "{" ? "dict" : "list", expectKey: c === "{" });
        i++;
        continue;
      }
      if (c === "]" || c === "}" || (c === ")" && frame.kind !== "args")) {
        // A bracket that closes nothing open inside the call ends the call here.
        if (frame.kind === "args") return this.fail(i);
        this.flushToken();
        this.json!.closeContainer();
        this.frames.pop();
        i++;
        continue;
      }
      if (c === ")") {
        this.flushToken();
        this.endCall();
        i++;
        if (!this.list) {
          this.status = "done";
          return i;
        }
        continue;
      }
      if (c === ",") {
        this.flushToken();
        frame.expectKey = frame.kind !== "list";
        i++;
        continue;
      }
      if ((c === "=" && frame.kind === "args") || (c === ":" && frame.kind === "dict")) {
        if (this.token.trim()) this.key = this.token.trim();
        else if (this.keyText !== "") this.key = this.keyText;
        this.token = "";
        this.keyText = "";
        frame.expectKey = false;
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
    // The output ended inside a call: it is cut, with the arguments it has.
    if (this.call) this.closeOpenCall(true);
    this.status = this.anyNamed ? "done" : "fail";
  }

  /** Closes the open call's arguments into valid JSON. */
  private closeOpenCall(cut: boolean): void {
    if (this.quote && !this.stringIsKey) this.json!.endString();
    this.quote = "";
    this.json!.close();
    if (cut) this.call!.cut();
    else this.call!.end();
    this.call = null;
    this.json = null;
  }

  /** Characters of an open Python string; returns the index reached, or -1 to wait for an escape's end. */
  private stringChars(text: string, i: number, end: boolean): number {
    let j = i;
    let out = "";
    while (j < text.length) {
      const c = text[j];
      if (c === this.quote) {
        this.emitString(out);
        this.quote = "";
        if (!this.stringIsKey) this.json!.endString();
        return j + 1;
      }
      if (c === "\\") {
        const decoded = decodeEscape(text, j);
        if (decoded === null) {
          if (end) return text.length;
          this.emitString(out);
          return j === i ? -1 : j;
        }
        out += decoded.text;
        j = decoded.next;
        continue;
      }
      out += c;
      j++;
    }
    this.emitString(out);
    return j;
  }

  private emitString(text: string): void {
    if (this.stringIsKey) this.keyText += text;
    else this.json!.stringText(text);
  }

  private takeKey(): string | null {
    const frame = this.frames[this.frames.length - 1];
    if (frame.kind === "list") return null;
    const key = this.key;
    this.key = null;
    return key ?? "arg";
  }

  /** A bare token ends at its delimiter: True/False/None, numbers, else its source text as a string. */
  private flushToken(): void {
    const token = this.token.trim();
    this.token = "";
    if (!token) return;
    const frame = this.frames[this.frames.length - 1];
    if (frame.expectKey) {
      // A positional argument, or a dict key being a bare literal: keep its text.
      if (frame.kind === "dict") this.key = token;
      return;
    }
    const py: Record<string, string> = { True: "true", False: "false", None: "null" };
    this.json!.scalar(py[token] ?? bareToJson(token), this.takeKey());
  }

  private endCall(): void {
    this.json!.close();
    this.call!.end();
    this.call = null;
    this.json = null;
    this.name = "";
    this.stage = "name";
  }

  private fail(i: number): number {
    if (this.anyNamed) {
      if (this.call) {
        this.closeOpenCall(false);
        this.broken = true;
      }
      this.status = "done";
      return i;
    }
    this.status = "fail";
    return i;
  }
}

/** A Python string escape at `text[j]` (a backslash): its text and where it ends, or null when incomplete. */
function decodeEscape(text: string, j: number): { text: string; next: number } | null {
  const c = text[j + 1];
  if (c === undefined) return null;
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" };
  if (c in simple) return { text: simple[c], next: j + 2 };
  const width = c === "x" ? 2 : c === "u" ? 4 : 0;
  if (width) {
    const hex = text.slice(j + 2, j + 2 + width);
    if (hex.length < width) return null;
    if (/^[0-9a-fA-F]+$/.test(hex)) return { text: String.fromCharCode(parseInt(hex, 16)), next: j + 2 + width };
  }
  return { text: "\\" + c, next: j + 2 };
}

const CALL_HEAD = /^\[\s*[A-Za-z_][\w.]*\s*\(/;
const MAYBE_HEAD = /^\[\s*([A-Za-z_][\w.]*\s*)?$/;
const WRAPPERS = ["<|python_start|>", "<|python_end|>"];

/** Prose with pythonic call lists in it. */
class PythonicParser extends MarkerParser {
  private readonly listOpener: Opener = { marker: "", body: (s) => new PythonCallsBody(s, true) };

  constructor(sink: EventSink) {
    super(sink, WRAPPERS.map((marker) => ({ marker, dropOnFail: true, body: () => new EmptyBody() })));
  }

  protected override prose(text: string, from: number, end: boolean): number {
    let i = from;
    for (;;) {
      const bracket = text.indexOf("[", i);
      const stop = bracket < 0 ? text.length : bracket;
      // Wrapper tokens before the bracket are handled by the literal-marker scan (no marker spans a "[").
      const before = super.prose(text.slice(0, stop), i, end || bracket >= 0);
      if (before < stop || this.hasBody() || bracket < 0) return before;
      const rest = text.slice(bracket, bracket + 160);
      if (CALL_HEAD.test(rest)) {
        this.open(this.listOpener);
        return bracket;
      }
      if (!end && MAYBE_HEAD.test(rest) && bracket + rest.length === text.length) return bracket;
      this.sink.content("[");
      i = bracket + 1;
    }
  }
}

/** A marker that is only dropped (it carries no call of its own). */
class EmptyBody implements CallBody {
  status: CallBody["status"] = "done";
  readonly named = false;
  feed(_text: string, from: number): number {
    return from;
  }
  finish(): void {}
}

export function createPythonicParser(sink: EventSink): FormatParser {
  return new PythonicParser(sink);
}
