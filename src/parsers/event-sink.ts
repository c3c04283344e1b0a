/**
 * Where format parsers put what they recognise. It applies the two policies
 * that are the same for every format:
 *
 * - Whitespace next to structure is not content. Trailing whitespace of
 *   content is held back until the next text decides it: dropped when a call
 *   or the end of a reasoning block follows or precedes it with no prose on
 *   the other side, kept between two pieces of prose ("Mars. <call> In this…"
 *   keeps both spaces). Plain replies keep their whitespace exactly.
 * - Calls to tools the request did not declare are dropped (their text is
 *   not content either); the parser still consumes their text.
 * - A call is out only once it is complete (DESIGN: an incomplete call stays
 *   content): a format parser opens a transaction at a call marker, the
 *   call's events are held until it commits (the body parsed to its end) or
 *   rolled back (malformed, or cut off by the end of output, a stop string,
 *   max_tokens), and then its text is content as written.
 */
import type { ParseEvent } from "./types.js";
import { isWs } from "./partial-marker.js";

/** Returned for "no events" so a delta that decides nothing allocates nothing. Never mutated. */
const NONE: ParseEvent[] = [];

export class EventSink {
  private events: ParseEvent[] = [];
  private pendingWs = "";
  private emittedProse = false;
  private boundarySinceProse = false;
  private nextIndex = 0;
  private readonly declared: Set<string>;
  /** Index in `events` where the open transaction began; -1 when none is open. */
  private mark = -1;
  private saved: { pendingWs: string; emittedProse: boolean; boundarySinceProse: boolean; nextIndex: number } | null = null;

  constructor(toolNames: readonly string[]) {
    this.declared = new Set(toolNames);
  }

  /** Events collected since the last call. */
  take(): ParseEvent[] {
    if (this.mark >= 0) {
      // Events of an open transaction stay until it is decided.
      if (this.mark === 0) return NONE;
      const out = this.events.slice(0, this.mark);
      this.events = this.events.slice(this.mark);
      this.mark = 0;
      return out;
    }
    const out = this.events;
    if (out.length === 0) return NONE;
    this.events = [];
    return out;
  }

  /** Holds what follows (a call being parsed) until commit or rollback. */
  begin(): void {
    this.mark = this.events.length;
    this.saved = { pendingWs: this.pendingWs, emittedProse: this.emittedProse, boundarySinceProse: this.boundarySinceProse, nextIndex: this.nextIndex };
  }

  /** The held call is complete: its events go out. */
  commit(): void {
    this.mark = -1;
    this.saved = null;
  }

  /** The held call is not a call: its events are dropped and the sink is as it was at `begin`. */
  rollback(): void {
    if (this.mark < 0 || !this.saved) return;
    this.events.length = this.mark;
    ({ pendingWs: this.pendingWs, emittedProse: this.emittedProse, boundarySinceProse: this.boundarySinceProse, nextIndex: this.nextIndex } = this.saved);
    this.mark = -1;
    this.saved = null;
  }

  reasoning(text: string): void {
    if (text) this.events.push({ type: "reasoning", text });
  }

  content(text: string): void {
    if (!text) return;
    // Split off trailing whitespace: it waits for what follows.
    let end = text.length;
    while (end > 0 && isWs(text.charCodeAt(end - 1))) end--;
    if (end === 0) {
      this.pendingWs += text;
      return;
    }
    // After structure with no prose before it, leading whitespace goes too.
    const dropLead = this.boundarySinceProse && !this.emittedProse;
    let start = 0;
    if (dropLead) while (isWs(text.charCodeAt(start))) start++;
    const lead = dropLead ? "" : this.pendingWs;
    this.pendingWs = text.slice(end);
    this.push({ type: "content", text: lead + text.slice(start, end) });
    this.emittedProse = true;
    this.boundarySinceProse = false;
  }

  /** Structure (a call, the end of reasoning) sits here. */
  boundary(): void {
    if (this.boundarySinceProse) return;
    this.boundarySinceProse = true;
    if (!this.emittedProse) this.pendingWs = "";
  }

  /** A call whose name is complete. Returns its index, or -1 when the tool is undeclared (the call is dropped). */
  startCall(name: string): number {
    this.boundary();
    if (!this.declared.has(name)) return -1;
    const index = this.nextIndex++;
    this.events.push({ type: "tool_call", index, name });
    return index;
  }

  /** A call's whole arguments (format parsers send them once, when the call is complete). */
  args(index: number, text: string): void {
    if (index >= 0 && text) this.events.push({ type: "tool_args", index, text });
  }

  /** End of output: whitespace after the last prose stays only if no structure followed it. */
  finish(): void {
    if (this.pendingWs && !this.boundarySinceProse) this.push({ type: "content", text: this.pendingWs });
    this.pendingWs = "";
  }

  private push(event: ParseEvent): void {
    const n = this.events.length;
    // Never merge into an event from before an open transaction: a rollback must leave it as it was.
    const last = n > 0 && n > this.mark ? this.events[n - 1] : undefined;
    if (event.type === "content" && last !== undefined && last.type === "content") last.text += event.text;
    else this.events.push(event);
  }
}
