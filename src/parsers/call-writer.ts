/**
 * One call's events: the `tool_call` event goes out once the name is
 * complete, its arguments in one `tool_args` event when the call ends (a call
 * is out only once complete, so its fragments are kept in pieces and joined
 * once: one `+=` per delta would build a costly deep string).
 */
import type { EventSink } from "./event-sink.js";

export class CallWriter {
  private index = -1;
  private parts: string[] = [];
  /** The name is known and the call was started (it can no longer turn back into content). */
  named = false;
  wrote = false;

  constructor(private readonly sink: EventSink) {}

  begin(name: string): void {
    this.index = this.sink.startCall(name);
    this.named = true;
  }

  write(text: string): void {
    if (!text) return;
    this.wrote = true;
    this.parts.push(text);
  }

  /** The call is complete: its arguments go out (an empty object when none appeared). */
  end(): void {
    this.sink.args(this.index, this.wrote ? this.parts.join("") : "{}");
    this.parts = [];
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
