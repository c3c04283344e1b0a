/**
 * A call written as a name then a raw JSON arguments object:
 * Ministral `name[ARGS]{…}` (or `name{…}` when the control token was
 * skipped in decoding), Hermes' variant `<function=name>{…}</function>`,
 * DeepSeek-R1's `name\n```json\n{…}\n```` (with a prefix to skip).
 */
import { JsonValueStream } from "./json-stream.js";
import { CallWriter, type CallBody } from "./call-writer.js";
import type { EventSink } from "./event-sink.js";
import { isPrefixOf, isWs } from "./partial-marker.js";

const NAME_CHAR = /[A-Za-z0-9_.\-:]/;
const MAX_NAME = 128;

export interface NamedJsonOptions {
  /** What ends the name; consumed unless it is `{` (the arguments' own start). */
  terminators: string[];
  /** Optional literal between the name and the arguments (after whitespace), e.g. "```json". */
  argsPrefix?: string[];
}

export class NamedJsonBody implements CallBody {
  status: CallBody["status"] = "more";
  private readonly call: CallWriter;
  private name = "";
  private stage: "name" | "prefix" | "args" = "name";
  private stream: JsonValueStream | null = null;
  broken = false;

  constructor(sink: EventSink, private readonly options: NamedJsonOptions) {
    this.call = new CallWriter(sink);
  }

  get named(): boolean {
    return this.call.named;
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    while (i < text.length && this.status === "more") {
      if (this.stage === "name") {
        let matched: string | null = null;
        let partial = false;
        for (const t of this.options.terminators) {
          if (text.startsWith(t, i)) matched = t;
          else if (!end && isPrefixOf(text.slice(i, i + t.length), t) && i + t.length > text.length) partial = true;
        }
        if (matched) {
          if (!this.name) return this.fail(i);
          this.call.begin(this.name.trim());
          this.stage = this.options.argsPrefix ? "prefix" : "args";
          if (matched !== "{") i += matched.length;
          continue;
        }
        if (partial) return i;
        const ch = text[i];
        if (!NAME_CHAR.test(ch) || this.name.length >= MAX_NAME) return this.fail(i);
        this.name += ch;
        i++;
        continue;
      }
      if (this.stage === "prefix") {
        while (i < text.length && isWs(text.charCodeAt(i))) i++;
        if (i === text.length) return i;
        const rest = text.slice(i, i + 16);
        // A shorter prefix ("```") must not win while a longer one ("```json") may still follow.
        if (!end && i + rest.length === text.length && this.options.argsPrefix!.some((p) => rest.length < p.length && isPrefixOf(rest, p))) return i;
        const hit = this.options.argsPrefix!.find((p) => rest.startsWith(p));
        if (hit) {
          i += hit.length;
          this.stage = "args";
          continue;
        }
        this.stage = "args";
        continue;
      }
      if (!this.stream) {
        while (i < text.length && isWs(text.charCodeAt(i))) i++;
        if (i === text.length) return i;
        if (text.charCodeAt(i) !== 123) {
          // A name with no arguments object: an argument-less call.
          this.call.end();
          this.status = "done";
          return i;
        }
        this.stream = new JsonValueStream();
      }
      this.call.write(this.stream.feed(text, i, text.length));
      i = this.stream.next;
      if (this.stream.failed) {
        // Malformed arguments: the call keeps what it has; the rest of the block is markup.
        this.call.write(this.stream.close());
        this.call.end();
        this.status = "done";
        this.broken = true;
      } else if (this.stream.done) {
        this.call.end();
        this.status = "done";
      }
    }
    return i;
  }

  finish(): void {
    if (this.status !== "more") return;
    if (!this.call.named) {
      this.status = "fail";
      return;
    }
    this.call.cut(this.stream ? this.stream.close() : "");
    this.status = "done";
  }

  private fail(i: number): number {
    this.status = "fail";
    return i;
  }
}
