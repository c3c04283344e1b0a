/** Helpers for the parser tests: run a parser over chunks and fold its events into a message. */
import { createOutputParser, type ParserOptions } from "../../../src/parsers/index.js";
import type { ParseEvent } from "../../../src/parsers/types.js";
import type { FunctionTool } from "../../../src/protocol/types.js";

export interface Folded {
  content: string;
  reasoning: string;
  calls: { name: string; arguments: string }[];
}

export function tool(name: string, properties: Record<string, unknown> = {}): FunctionTool {
  return { type: "function", function: { name, parameters: { type: "object", properties } } };
}

export function fold(events: ParseEvent[]): Folded {
  const out: Folded = { content: "", reasoning: "", calls: [] };
  for (const e of events) {
    if (e.type === "content") out.content += e.text;
    else if (e.type === "reasoning") out.reasoning += e.text;
    else if (e.type === "tool_call") {
      if (out.calls[e.index]) throw new Error(`call ${e.index} started twice`);
      out.calls[e.index] = { name: e.name, arguments: "" };
    } else {
      if (!out.calls[e.index]) throw new Error(`arguments for call ${e.index} before its tool_call event`);
      out.calls[e.index].arguments += e.text;
    }
  }
  return out;
}

export function parse(options: Partial<ParserOptions> & Pick<ParserOptions, "format">, chunks: string[]): { events: ParseEvent[]; perPush: ParseEvent[][]; cutCall: boolean } {
  const parser = createOutputParser({ reasoning: null, reasoningOpen: false, tools: [], ...options });
  const perPush = chunks.map((c) => parser.push(c));
  const events = [...perPush.flat(), ...parser.finish()];
  return { events, perPush, cutCall: parser.cutCall };
}

/** Seeded chunkings of sizes 1..max. */
export function randomChunks(text: string, seed: number, max = 12): string[] {
  let state = seed >>> 0 || 1;
  const chunks: string[] = [];
  for (let i = 0; i < text.length; ) {
    state = (state * 1664525 + 1013904223) >>> 0;
    const n = (state % max) + 1;
    chunks.push(text.slice(i, i + n));
    i += n;
  }
  return chunks;
}
