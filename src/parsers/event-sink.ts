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
 * - A call streams: its `tool_call` event goes out once its name is
 *   complete, its argument fragments as they are parsed. A call the output
 *   cuts (end of output, a stop string, max_tokens) stays a call with the
 *   arguments it has, closed into valid JSON, and `cut` says so (the host
 *   then reports `length`/`stop`, as the hosted API does).
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
  /** A call was still open at the end of output and was closed here. */
  cut = false;

  constructor(toolNames: readonly string[]) {
    this.declared = new Set(toolNames);
  }

  /** Events collected since the last call. */
  take(): ParseEvent[] {
    const out = this.events;
    if (out.length === 0) return NONE;
    this.events = [];
    return out;
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

  /** A fragment of a call's arguments (nothing for a dropped call). */
  args(index: number, text: string): void {
    if (index < 0 || !text) return;
    // Length checked first: reading index -1 takes V8's slow path (it is a property name).
    const n = this.events.length;
    const last = n > 0 ? this.events[n - 1] : undefined;
    // Fragments of one delta join (events are taken after every delta, so this string stays short).
    if (last !== undefined && last.type === "tool_args" && last.index === index) last.text += text;
    else this.events.push({ type: "tool_args", index, text });
  }

  /** End of output: whitespace after the last prose stays only if no structure followed it. */
  finish(): void {
    if (this.pendingWs && !this.boundarySinceProse) this.push({ type: "content", text: this.pendingWs });
    this.pendingWs = "";
  }

  private push(event: ParseEvent): void {
    const n = this.events.length;
    const last = n > 0 ? this.events[n - 1] : undefined;
    if (event.type === "content" && last !== undefined && last.type === "content") last.text += event.text;
    else this.events.push(event);
  }
}
