/**
 * The parser cost check of issue 3: a 256 KB reply carrying a tool call,
 * parsed in 1-character deltas vs in one delta. Parsers must cost
 * O(output length) whatever the delta sizes, so the ratio of the two times
 * stays small (target ≤ 3): only a per-delta constant is added, never a
 * re-scan of what came before. Runs in Node (the unit test prints it) and in
 * the page of `npm run bench`.
 */
import { createOutputParser, type OutputFormat } from "../src/parsers/index.js";
import type { FunctionTool } from "../src/protocol/types.js";

const TOOLS: FunctionTool[] = [
  { type: "function", function: { name: "write_file", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } } } },
];

/** A code-like line with quotes, braces, brackets, backslashes and non-ASCII: the characters that stress string-aware scanning. */
const LINE = 'const s = "{[(x)]}" + \'a\\\\b\' + `tag <tool_call>`; // ünïcödé 例子\n';

/** The file content the call writes: `bytes` long. */
function fileContent(bytes: number): string {
  return LINE.repeat(Math.ceil(bytes / LINE.length)).slice(0, bytes);
}

/** A reply of about `bytes` characters in `format` carrying one call with that content. */
export function buildReply(format: OutputFormat, bytes = 256 * 1024): string {
  const content = fileContent(bytes);
  switch (format) {
    case "qwen-xml":
      return `I'll write it.\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/big.ts\n</parameter>\n<parameter=content>\n${content}\n</parameter>\n</function>\n</tool_call>`;
    case "gemma4":
      return `I'll write it.<|tool_call>call:write_file{path:<|"|>src/big.ts<|"|>,content:<|"|>${content}<|"|>}<tool_call|>`;
    default:
      return `I'll write it.\n<tool_call>\n${JSON.stringify({ name: "write_file", arguments: { path: "src/big.ts", content } })}\n</tool_call>`;
  }
}

function parseTime(format: OutputFormat, reply: string, deltas: string[] | null): number {
  const start = performance.now();
  const parser = createOutputParser({ format, reasoning: null, reasoningOpen: false, tools: TOOLS });
  let events = 0;
  if (deltas === null) events += parser.push(reply).length;
  else for (const d of deltas) events += parser.push(d).length;
  events += parser.finish().length;
  const ms = performance.now() - start;
  if (events === 0) throw new Error("parser produced no events");
  return ms;
}

function best(runs: number, f: () => number): number {
  let min = Infinity;
  for (let i = 0; i < runs; i++) min = Math.min(min, f());
  return min;
}

export interface ParserRatio {
  /** Time in 1-character deltas ÷ time in one delta (Hermes format, the commonest). */
  ratio: number;
  bytes: number;
  oneDeltaMs: number;
  oneCharMs: number;
  /** The same ratio for the formats that convert to JSON while streaming. */
  byFormat: Record<string, { ratio: number; oneDeltaMs: number; oneCharMs: number }>;
  /**
   * Cost per character in 1-char deltas at `bytes` ÷ the same at a quarter of
   * that size (Hermes): about 1 when the cost is linear, about 4 if each delta
   * re-scanned the text before it.
   */
  linearity: number;
}

/** Measures the ratio (best of `runs` for each side, after a warm-up). */
export function measureParserRatio(runs = 5, bytes = 256 * 1024): ParserRatio {
  const byFormat: ParserRatio["byFormat"] = {};
  for (const format of ["hermes", "qwen-xml", "gemma4"] as OutputFormat[]) {
    const reply = buildReply(format, bytes);
    const chars = reply.split("");
    parseTime(format, reply, null);
    parseTime(format, reply, chars);
    const oneDeltaMs = best(runs, () => parseTime(format, reply, null));
    const oneCharMs = best(runs, () => parseTime(format, reply, chars));
    byFormat[format] = { ratio: oneCharMs / oneDeltaMs, oneDeltaMs, oneCharMs };
  }
  const hermes = byFormat.hermes;
  const small = buildReply("hermes", bytes / 4);
  const smallChars = small.split("");
  const smallMs = best(runs, () => parseTime("hermes", small, smallChars));
  const linearity = hermes.oneCharMs / buildReply("hermes", bytes).length / (smallMs / small.length);
  return { ratio: hermes.ratio, bytes, oneDeltaMs: hermes.oneDeltaMs, oneCharMs: hermes.oneCharMs, byFormat, linearity };
}
