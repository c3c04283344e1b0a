/**
 * Calls written as JSON objects `{"name": …, "arguments"|"parameters": {…}}`,
 * alone or as a list (`[{…}, {…}]`, or objects separated by `,` / `;`).
 * The arguments object is passed through raw as it streams (no re-serialising);
 * arguments given as a JSON-encoded string are decoded once.
 */
import { JsonValueStream } from "./json-stream.js";
import { CallWriter, type CallBody } from "./call-writer.js";
import type { EventSink } from "./event-sink.js";
import { isWs } from "./partial-marker.js";

type State = "open" | "key" | "colon" | "value" | "after" | "done" | "fail";

/** One call object. */
export class JsonCallObject {
  state: State = "open";
  readonly call: CallWriter;
  private key = "";
  private value: JsonValueStream | null = null;
  private valueRole: "name" | "args" | "argsBuffered" | "skip" | "key" = "skip";
  private valueText = "";
  private sawArgs = false;
  /** The object broke off after its name (invalid JSON): done, with the arguments it had. */
  broken = false;

  constructor(sink: EventSink) {
    this.call = new CallWriter(sink);
  }

  feed(text: string, from: number): number {
    let i = from;
    while (i < text.length && this.state !== "done" && this.state !== "fail") {
      if (this.value) {
        const out = this.value.feed(text, i, text.length);
        i = this.value.next;
        this.onValueText(out);
        if (this.value.failed) {
          this.fail();
          break;
        }
        if (!this.value.done) break;
        this.value = null;
        this.onValueDone();
        continue;
      }
      const c = text.charCodeAt(i);
      if (isWs(c)) {
        i++;
        continue;
      }
      switch (this.state) {
        case "open":
          if (c !== 123) return this.fail(), i;
          this.state = "key";
          i++;
          break;
        case "key":
          if (c === 125 && !this.key) return this.complete(), i + 1;
          if (c !== 34) return this.fail(), i;
          this.startValue("key");
          break;
        case "colon":
          if (c !== 58) return this.fail(), i;
          this.state = "value";
          i++;
          break;
        case "value": {
          const k = this.key;
          if (k === "name" && c === 34) this.startValue("name");
          else if ((k === "arguments" || k === "parameters") && !this.sawArgs) {
            this.sawArgs = true;
            this.startValue(c === 123 ? "args" : "argsBuffered");
          } else this.startValue("skip");
          break;
        }
        case "after":
          if (c === 44) {
            this.state = "key";
            this.key = "";
            i++;
          } else if (c === 125) {
            this.complete();
            i++;
          } else return this.fail(), i;
          break;
      }
    }
    return i;
  }

  /** End of output inside the object: a named call is cut (closed with what it has); otherwise it was never a call. */
  finish(): void {
    if (this.state === "done" || this.state === "fail") return;
    if (!this.call.named) return this.fail();
    this.call.cut(this.value && this.valueRole === "args" ? this.value.close() : "");
    this.value = null;
    this.state = "done";
  }

  private startValue(role: JsonCallObject["valueRole"]): void {
    this.valueRole = role;
    this.valueText = "";
    this.value = new JsonValueStream();
  }

  private onValueText(out: string): void {
    if (this.valueRole === "args") this.call.write(out);
    else if (this.valueRole !== "skip") this.valueText += out;
  }

  private onValueDone(): void {
    switch (this.valueRole) {
      case "key":
        this.key = parseString(this.valueText) ?? "";
        this.state = "colon";
        return;
      case "name": {
        const name = parseString(this.valueText);
        if (name === null) return this.fail();
        if (!this.call.named) this.call.begin(name);
        break;
      }
      case "argsBuffered":
        this.call.write(decodeArguments(this.valueText));
        break;
    }
    this.state = "after";
  }

  private complete(): void {
    if (!this.call.named) return this.fail();
    this.call.end();
    this.state = "done";
  }

  private fail(): void {
    // After the call started it cannot become content again: close what was sent instead.
    if (this.call.named) {
      if (this.value && this.valueRole === "args") this.call.write(this.value.close());
      this.value = null;
      this.call.end();
      this.state = "done";
      this.broken = true;
      return;
    }
    this.state = "fail";
  }
}

/** A JSON string literal's value, or null when it is not one. */
function parseString(raw: string): string | null {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

/** Arguments that were not a JSON object: a JSON-encoded string is decoded once; null means none. */
function decodeArguments(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return "{}";
  }
  if (value === null) return "{}";
  if (typeof value === "string") {
    try {
      JSON.parse(value);
      return value;
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * A run of call objects: `[{…}, {…}]`, `{…}`, or `{…}, {…}` / `{…}; {…}`.
 * Ends at the first character that does not continue the run.
 */
export class JsonCallList implements CallBody {
  status: CallBody["status"] = "more";
  private inList = false;
  private started = false;
  private current: JsonCallObject | null = null;
  private expectItem = true;
  private anyNamed = false;
  private atEnd = false;
  private items = 0;
  broken = false;

  /** `opened`: the marker already included the list's `[`. */
  constructor(private readonly sink: EventSink, private readonly separators = ",;", opened = false) {
    this.started = this.inList = opened;
  }

  get named(): boolean {
    return this.anyNamed || (this.current?.call.named ?? false);
  }

  feed(text: string, from: number, end: boolean): number {
    this.atEnd = end;
    let i = from;
    while (i < text.length && this.status === "more") {
      if (this.current) {
        i = this.current.feed(text, i);
        if (this.current.state === "fail") {
          this.status = this.anyNamed ? "done" : "fail";
          return i;
        }
        if (this.current.state !== "done") return i;
        this.anyNamed = true;
        if (this.current.broken) {
          // The rest of the block is the broken call's markup.
          this.status = "done";
          this.broken = true;
          return i;
        }
        this.current = null;
        this.expectItem = false;
        continue;
      }
      const c = text.charCodeAt(i);
      if (isWs(c)) {
        // Whitespace after the last call is not part of the run.
        if (this.started && !this.inList && !this.expectItem) return this.peekPastWs(text, i);
        i++;
        continue;
      }
      if (!this.started && c === 91) {
        this.started = this.inList = true;
        i++;
        continue;
      }
      if (c === 123 && this.expectItem) {
        this.started = true;
        this.current = new JsonCallObject(this.sink);
        this.items++;
        continue;
      }
      if (!this.expectItem && this.separators.includes(text[i])) {
        this.expectItem = true;
        i++;
        continue;
      }
      if (this.inList && c === 93 && (!this.expectItem || this.items === 0)) {
        // `[]` is an explicit "no call" (SmolLM2); its text is not content either.
        this.status = this.anyNamed || this.items === 0 ? "done" : "fail";
        return i + 1;
      }
      this.status = this.anyNamed ? "done" : "fail";
      return i;
    }
    return i;
  }

  /** After a bare object, whitespace then a separator continues the run; anything else ends it (whitespace excluded). */
  private peekPastWs(text: string, i: number): number {
    let j = i;
    while (j < text.length && isWs(text.charCodeAt(j))) j++;
    if (j === text.length) {
      if (this.atEnd) this.status = "done";
      return i; // undecided: wait for more
    }
    if (this.separators.includes(text[j])) {
      this.expectItem = true;
      return j + 1;
    }
    this.status = "done";
    return i;
  }

  finish(): void {
    if (this.status !== "more") return;
    if (this.current) {
      this.current.finish();
      if (this.current.state === "done") this.anyNamed = true;
    }
    this.status = this.anyNamed ? "done" : "fail";
  }
}
