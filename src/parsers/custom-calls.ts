/**
 * Calls of custom tools, turned from function calls (arguments
 * `{"input": "…"}`, how families render them: protocol/custom-tools.ts)
 * into custom calls whose `tool_args` carry the decoded input. The input
 * streams as the JSON string is generated; an escape split across deltas is
 * held until complete. Arguments of another shape (a model writing freely
 * under `tool_choice: auto`) are held and given whole when the call ends:
 * their `input` when they parse as such an object, else the text as written.
 */
import type { OutputParser, ParseEvent } from "./types.js";

/** The text before the input's first character, whitespace allowed between tokens. */
const OPENING = ["{", '"input"', ":", '"'];

export class CustomInputDecoder {
  private state: "opening" | "string" | "done" | "held" = "opening";
  private token = 0;
  private matched = 0;
  private args = "";
  private escape = "";
  private highSurrogate = "";

  /** Decoded input for these argument characters. */
  push(text: string): string {
    this.args += text;
    let out = "";
    for (const ch of text) {
      switch (this.state) {
        case "opening":
          this.open(ch);
          break;
        case "string":
          out += this.char(ch);
          break;
        default:
          break;
      }
    }
    return out;
  }

  /** What the call's input still needs when it ends (only arguments of another shape have some). */
  finish(): string {
    if (this.state !== "held" && this.state !== "opening") return "";
    this.state = "done";
    try {
      const parsed: unknown = JSON.parse(this.args);
      if (typeof parsed === "object" && parsed !== null && typeof (parsed as { input?: unknown }).input === "string") return (parsed as { input: string }).input;
    } catch {
      // not JSON: the text as written
    }
    return this.args;
  }

  private open(ch: string): void {
    const expected = OPENING[this.token];
    if (this.matched === 0 && /\s/.test(ch)) return;
    if (ch !== expected[this.matched]) {
      this.state = "held";
      return;
    }
    this.matched++;
    if (this.matched === expected.length) {
      this.token++;
      this.matched = 0;
      if (this.token === OPENING.length) this.state = "string";
    }
  }

  private char(ch: string): string {
    if (this.escape !== "") {
      this.escape += ch;
      const complete = this.escape.length === 2 ? this.escape[1] !== "u" : this.escape.length === 6;
      if (!complete) return "";
      let decoded: string;
      try {
        decoded = JSON.parse(`"${this.escape}"`) as string;
      } catch {
        decoded = this.escape;
      }
      this.escape = "";
      // A surrogate pair is written as two escapes: keep the high half for the low one.
      const code = decoded.charCodeAt(0);
      if (decoded.length === 1 && code >= 0xd800 && code <= 0xdbff) {
        this.highSurrogate = decoded;
        return "";
      }
      const out = this.highSurrogate + decoded;
      this.highSurrogate = "";
      return out;
    }
    if (ch === "\\") {
      this.escape = ch;
      return "";
    }
    if (ch === '"') {
      this.state = "done";
      return "";
    }
    const out = this.highSurrogate + ch;
    this.highSurrogate = "";
    return out;
  }
}

/** `parser`'s events with the calls of `custom` tools as custom calls (`tool_call.custom`, decoded input in `tool_args`). */
export function withCustomCalls(parser: OutputParser, custom: ReadonlySet<string>): OutputParser {
  const decoders = new Map<number, CustomInputDecoder>();
  let last: number | undefined;
  const flush = (index: number | undefined, out: ParseEvent[]) => {
    const decoder = index === undefined ? undefined : decoders.get(index);
    if (decoder === undefined) return;
    const rest = decoder.finish();
    if (rest !== "") out.push({ type: "tool_args", index: index!, text: rest });
  };
  const map = (events: ParseEvent[]): ParseEvent[] => {
    const out: ParseEvent[] = [];
    for (const event of events) {
      if (event.type === "tool_call") {
        flush(last, out);
        last = event.index;
        if (custom.has(event.name)) {
          decoders.set(event.index, new CustomInputDecoder());
          out.push({ ...event, custom: true });
          continue;
        }
      } else if (event.type === "tool_args") {
        const decoder = decoders.get(event.index);
        if (decoder) {
          const text = decoder.push(event.text);
          if (text !== "") out.push({ type: "tool_args", index: event.index, text });
          continue;
        }
      }
      out.push(event);
    }
    return out;
  };
  return {
    push: (text) => map(parser.push(text)),
    finish: () => {
      const out = map(parser.finish());
      flush(last, out);
      return out;
    },
    get inReasoning() {
      return parser.inReasoning;
    },
    get cutCall() {
      return parser.cutCall;
    },
  };
}
