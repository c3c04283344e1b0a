/**
 * What a model's reply is made of, as an output parser (parsers/) reads it
 * from the raw text: content, reasoning, and tool calls with their arguments
 * in fragments. The chunk and item builders (choice-builder.ts,
 * responses/output-builder.ts) turn these into the API's shapes.
 */
export type ParseEvent =
  | { type: "content"; text: string }
  | { type: "reasoning"; text: string }
  /** A new call: its name is complete. The host assigns the id. */
  | { type: "tool_call"; index: number; name: string; /** A custom tool's call: its `tool_args` are the decoded input (custom-calls.ts). */ custom?: true }
  /** A fragment of a call's JSON arguments string. */
  | { type: "tool_args"; index: number; text: string };
