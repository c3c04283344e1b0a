/**
 * DeepSeek-R1 (distills):
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`.
 * The distills are weakly trained on it and write variant openers
 * (`<｜tool▁calls｜>`, `<｜tool_calls_begin｜>`, …) and skip pieces; like
 * llama.cpp, every variant opener is accepted and the pieces between the
 * name and the JSON are optional.
 */
import type { EventSink } from "./event-sink.js";
import { MarkerParser, type FormatParser } from "./marker-parser.js";
import type { CallBody } from "./call-writer.js";
import { NamedJsonBody } from "./named-json-body.js";
import { isPrefixOf, isWs } from "./partial-marker.js";

const OPENERS = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls｜>", "<｜tool_calls_begin｜>", "<｜tool calls begin｜>", "<｜tool\\_calls\\_begin｜>"];
const CALL_BEGIN = "<｜tool▁call▁begin｜>";
const CALL_END = "<｜tool▁call▁end｜>";
const CALLS_END = "<｜tool▁calls▁end｜>";
const SEP = "<｜tool▁sep｜>";

type Step = { lit: string; optional: boolean };
const HEAD: Step[] = [
  { lit: CALL_BEGIN, optional: true },
  { lit: "function", optional: true },
  { lit: SEP, optional: false },
];
const TAIL: Step[] = [
  { lit: "```", optional: true },
  { lit: CALL_END, optional: true },
];

class DeepseekCallsBody implements CallBody {
  status: CallBody["status"] = "more";
  private stage: "head" | "call" | "tail" | "next" = "head";
  private step = 0;
  private call: NamedJsonBody | null = null;
  private anyNamed = false;
  broken = false;

  constructor(private readonly sink: EventSink) {}

  get named(): boolean {
    return this.anyNamed || (this.call?.named ?? false);
  }

  feed(text: string, from: number, end: boolean): number {
    let i = from;
    while (i < text.length && this.status === "more") {
      if (this.stage === "call") {
        i = this.call!.feed(text, i, end);
        if (this.call!.named) this.anyNamed = true;
        if (this.call!.status === "more") return i;
        if (this.call!.status === "fail") return this.end(i);
        if (this.call!.broken) {
          // Invalid arguments: the rest of the block is markup.
          this.broken = true;
          return this.end(i);
        }
        this.stage = "tail";
        this.step = 0;
        continue;
      }
      const steps = this.stage === "head" ? HEAD : this.stage === "tail" ? TAIL : null;
      while (i < text.length && isWs(text.charCodeAt(i))) i++;
      if (i === text.length) return i;
      if (steps === null) {
        // Between calls: another call, the end of the block, or the block is over.
        if (text.startsWith(CALLS_END, i)) {
          this.status = "done";
          return i + CALLS_END.length;
        }
        if (text.startsWith(CALL_BEGIN, i)) {
          this.stage = "head";
          this.step = 0;
          continue;
        }
        if (!end && (isPrefixOf(text.slice(i), CALLS_END) || isPrefixOf(text.slice(i), CALL_BEGIN))) return i;
        return this.end(i);
      }
      if (this.step === steps.length) {
        if (this.stage === "head") {
          this.call = new NamedJsonBody(this.sink, { terminators: ["\n"], argsPrefix: ["```json", "```"] });
          this.stage = "call";
        } else this.stage = "next";
        continue;
      }
      const { lit, optional } = steps[this.step];
      if (text.startsWith(lit, i)) {
        i += lit.length;
        this.step++;
        continue;
      }
      if (!end && isPrefixOf(text.slice(i, i + lit.length), lit) && i + lit.length > text.length) return i;
      if (!optional) return this.end(i);
      this.step++;
    }
    return i;
  }

  finish(): void {
    if (this.status !== "more") return;
    if (this.call && this.stage === "call") {
      this.call.finish();
      if (this.call.status === "done" && this.call.named) this.anyNamed = true;
    }
    this.status = this.anyNamed ? "done" : "fail";
  }

  private end(i: number): number {
    this.status = this.anyNamed ? "done" : "fail";
    return i;
  }
}

export function createDeepseekR1Parser(sink: EventSink): FormatParser {
  return new MarkerParser(
    sink,
    OPENERS.map((marker) => ({ marker, close: CALLS_END, dropOnFail: true, body: (s: EventSink) => new DeepseekCallsBody(s) })),
  );
}
