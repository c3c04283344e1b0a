/**
 * One call's events: the `tool_call` event goes out only once the name is
 * complete; argument text written before that waits for it.
 */
import type { EventSink } from "./event-sink.js";

export class CallWriter {
  private index = -1;
  private pending = "";
  /** The name is known and the call was started (it can no longer turn back into content). */
  named = false;
  wrote = false;

  constructor(private readonly sink: EventSink) {}

  begin(name: string): void {
    this.index = this.sink.startCall(name);
    this.named = true;
    if (this.pending) this.sink.args(this.index, this.pending);
    this.pending = "";
  }

  write(text: string): void {
    if (!text) return;
    this.wrote = true;
    if (this.named) this.sink.args(this.index, text);
    else this.pending += text;
  }

  /** Arguments that never appeared are an empty object. */
  end(): void {
    if (!this.wrote) this.write("{}");
  }
}

/**
 * A body parser: what follows a call marker, up to the end of its calls.
 * `feed` consumes from `from` and returns the index reached; with status
 * `more` and an index short of the text's end it needs more text to decide
 * (the rest is handed back next time). `fail` is only possible before a call
 * was started: the marker and what followed are then content.
 */
export interface CallBody {
  status: "more" | "done" | "fail";
  readonly named: boolean;
  feed(text: string, from: number, end: boolean): number;
  /** End of output: finish a started call (its arguments closed into valid JSON) or fail. */
  finish(): void;
}
