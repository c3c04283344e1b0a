/**
 * Splits reasoning off the front of the output before the tool-call parser
 * sees it. Shapes: model-emitted `<think>…</think>` or `[THINK]…[/THINK]`
 * (recognised only at the start of the output, after whitespace);
 * prompt-opened (the output starts inside the block, only the close marker
 * appears; a repeated open marker at the start is tolerated); Gemma 4
 * `<|channel>thought…<channel|>` (the `thought` label is not reasoning).
 *
 * - Whitespace just inside the markers is not reasoning (`<think>\n…\n</think>`).
 * - `implicitEnds`: markers that end reasoning when the model forgets the close
 *   marker (DESIGN: Qwen3.5 `<tool_call>`; Gemma 4 `<|tool_call>`); the marker
 *   itself goes on to the tool parser, and one stray close marker after it is dropped.
 * - `discard`: thinking is off for the request; a block the model emits anyway
 *   (or the empty one web-llm injects) is removed, not shown.
 */
import type { EventSink } from "./event-sink.js";
import type { FormatParser } from "./marker-parser.js";
import { findFirstMarker, isPrefixOf, isWs, partialMarkerLength } from "./partial-marker.js";

export interface ReasoningOptions {
  open: string;
  close: string;
  startOpen: boolean;
  discard: boolean;
  implicitEnds: string[];
  /** A label right after the open marker that is not reasoning (Gemma 4 `thought`). */
  label?: string;
}

type State = "start" | "label" | "reasoning" | "stray" | "content";

export class ReasoningSplitter {
  private state: State;
  private carry = "";
  private pendingWs = "";
  private emitted = false;
  private leadingOpenAllowed: boolean;
  private readonly endMarkers: string[];

  constructor(private readonly sink: EventSink, private readonly next: FormatParser, private readonly o: ReasoningOptions) {
    this.state = o.startOpen ? "reasoning" : "start";
    this.leadingOpenAllowed = o.startOpen;
    this.endMarkers = [o.close, ...o.implicitEnds];
  }

  get inReasoning(): boolean {
    return !this.o.discard && (this.state === "reasoning" || this.state === "label");
  }

  push(text: string): void {
    this.run(this.carry + text, false);
  }

  finish(): void {
    const text = this.carry;
    this.carry = "";
    this.run(text, true);
    this.pendingWs = "";
    this.next.finish();
  }

  private run(text: string, end: boolean): void {
    this.carry = "";
    let i = 0;
    while (i < text.length) {
      switch (this.state) {
        case "content":
          this.next.push(i === 0 ? text : text.slice(i));
          return;
        case "start": {
          let j = i;
          while (j < text.length && isWs(text.charCodeAt(j))) j++;
          const rest = text.slice(j, j + this.o.open.length);
          if (rest === this.o.open) {
            i = j + this.o.open.length;
            this.enterBlock();
            continue;
          }
          if (!end && isPrefixOf(rest, this.o.open)) {
            this.carry = text.slice(i);
            return;
          }
          this.state = "content";
          continue;
        }
        case "label": {
          const label = this.o.label!;
          const rest = text.slice(i, i + label.length + 1);
          if (rest.startsWith(label)) {
            i += label.length;
            if (text[i] === "\n") i++;
            else if (i === text.length && !end) {
              this.carry = "";
              this.state = "reasoning";
              return;
            }
            this.state = "reasoning";
            continue;
          }
          if (!end && isPrefixOf(rest, label)) {
            this.carry = text.slice(i);
            return;
          }
          this.state = "reasoning";
          continue;
        }
        case "reasoning": {
          if (this.leadingOpenAllowed) {
            // Prompt-opened, yet the model wrote the open marker again: not reasoning text.
            let j = i;
            while (j < text.length && isWs(text.charCodeAt(j))) j++;
            const rest = text.slice(j, j + this.o.open.length);
            if (rest === this.o.open) {
              this.leadingOpenAllowed = false;
              i = j + this.o.open.length;
              continue;
            }
            if (!end && isPrefixOf(rest, this.o.open)) {
              this.carry = text.slice(i);
              return;
            }
            if (j < text.length) this.leadingOpenAllowed = false;
          }
          const hit = findFirstMarker(text, this.endMarkers, i);
          if (!hit) {
            const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(i, text.length - 32)), this.endMarkers);
            this.reasoning(text.slice(i, text.length - keep));
            this.carry = text.slice(text.length - keep);
            return;
          }
          this.reasoning(text.slice(i, hit.at));
          this.pendingWs = "";
          this.emitted = false;
          this.sink.boundary();
          if (hit.marker === this.o.close) {
            i = hit.at + hit.marker.length;
            this.state = "content";
          } else {
            i = hit.at;
            this.state = "stray";
          }
          continue;
        }
        case "stray": {
          const at = text.indexOf(this.o.close, i);
          if (at >= 0) {
            this.next.push(text.slice(i, at));
            i = at + this.o.close.length;
            this.state = "content";
            continue;
          }
          const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(i, text.length - 32)), [this.o.close]);
          this.next.push(text.slice(i, text.length - keep));
          this.carry = text.slice(text.length - keep);
          return;
        }
      }
    }
  }

  private enterBlock(): void {
    this.state = this.o.label ? "label" : "reasoning";
    this.leadingOpenAllowed = false;
  }

  /** Reasoning text with the whitespace next to the markers trimmed (trailing whitespace waits). */
  private reasoning(text: string): void {
    if (!text || this.o.discard) return;
    let end = text.length;
    while (end > 0 && isWs(text.charCodeAt(end - 1))) end--;
    if (end === 0) {
      if (this.emitted) this.pendingWs += text;
      return;
    }
    let start = 0;
    if (!this.emitted) while (start < end && isWs(text.charCodeAt(start))) start++;
    this.sink.reasoning(this.pendingWs + text.slice(start, end));
    this.pendingWs = text.slice(end);
    this.emitted = true;
  }
}
