/**
 * Incremental output parsers: raw model text in, in deltas of any size;
 * content, reasoning and tool-call events out. A parser never retracts an
 * event it emitted and holds back only text that could start a marker, so the
 * streamed events concatenate to exactly what a whole-text parse gives.
 * Total cost is O(output length) whatever the delta sizes.
 */
export type ParseEvent =
  | { type: "content"; text: string }
  | { type: "reasoning"; text: string }
  /** A new call: its name is complete. The host assigns the id. */
  | { type: "tool_call"; index: number; name: string; /** A custom tool's call: its `tool_args` are the decoded input (custom-calls.ts). */ custom?: true }
  /** A fragment of a call's JSON arguments string. */
  | { type: "tool_args"; index: number; text: string };

export interface OutputParser {
  push(text: string): ParseEvent[];
  /** End of output: flush what was held back, close an open call where the policy allows. */
  finish(): ParseEvent[];
  /** Whether the text pushed last was inside reasoning (drives `reasoning_tokens`). */
  readonly inReasoning: boolean;
  /** After `finish`: a call was still open when the output ended and was closed with the arguments it had. */
  readonly cutCall: boolean;
}
