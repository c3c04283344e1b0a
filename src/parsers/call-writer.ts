/**
 * One call's events: the `tool_call` event goes out once the name is
 * complete, its argument fragments as they are written (argument text
 * written before the name, as in `{"arguments": {…}, "name": "f"}`, waits
 * for it).
 */
import type { EventSink } from "./event-sink.js";

export class CallWriter {
  private index = -1;
  private pending: string[] = [];
  /** The name is known and the call was started (it can no longer turn back into content). */
  named = false;
  wrote = false;

  constructor(private readonly sink: EventSink) {}

  begin(name: string): void {
    this.index = this.sink.startCall(name);
    this.named = true;
    if (this.pending.length > 0) this.sink.args(this.index, this.pending.join(""));
    this.pending = [];
  }

  write(text: string): void {
    if (!text) return;
    this.wrote = true;
    if (this.named) this.sink.args(this.index, text);
    else this.pending.push(text);
  }

  /** The call is complete: arguments that never appeared are an empty object. */
  end(): void {
    if (!this.wrote) this.write("{}");
  }

  /** The output ended inside the call: `closing` completes its arguments into valid JSON; the call counts as cut. */
  cut(closing = ""): void {
    this.write(closing);
    this.end();
    this.sink.cut = true;
  }
}

/**
 * A body parser: what follows a call marker, up to the end of its calls.
 * `feed` consumes from `from` and returns the index reached; with status
 * `more` and an index short of the text's end it needs more text to decide
 * (the rest is handed back next time). `fail` is only possible before a call
 * was started: the marker and what followed are then content. A call that
 * started and then broke (invalid JSON) ends with the arguments it has and
 * sets `broken`: the rest of its block is markup, never content.
 */
export interface CallBody {
  status: "more" | "done" | "fail";
  readonly named: boolean;
  /** Done because the call's text broke off (not at its own end): skip the rest of the block. */
  readonly broken?: boolean;
  feed(text: string, from: number, end: boolean): number;
  /** End of output: finish a started call (its arguments closed into valid JSON, counted as cut) or fail. */
  finish(): void;
}
