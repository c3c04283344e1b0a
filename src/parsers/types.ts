/**
 * Incremental output parsers: raw model text in, in deltas of any size;
 * content, reasoning and tool-call events out. A parser never retracts an
 * event it emitted and holds back only text that could start a marker, so the
 * streamed events concatenate to exactly what a whole-text parse gives.
 * Total cost is O(output length) whatever the delta sizes.
 */
/** The events a parser emits are the reply's vocabulary, which the protocol's builders turn into chunks and items (protocol/parse-event.ts). */
export type { ParseEvent } from "../protocol/parse-event.js";
import type { ParseEvent } from "../protocol/parse-event.js";

export interface OutputParser {
  push(text: string): ParseEvent[];
  /** End of output: flush what was held back, close an open call where the policy allows. */
  finish(): ParseEvent[];
  /** Whether the text pushed last was inside reasoning (drives `reasoning_tokens`). */
  readonly inReasoning: boolean;
  /** After `finish`: a call was still open when the output ended and was closed with the arguments it had. */
  readonly cutCall: boolean;
}
