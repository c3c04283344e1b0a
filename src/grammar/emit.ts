/**
 * Grammar (ir.ts) → xgrammar EBNF with root rule `root`, in the dialect both
 * web-xgrammar builds take (the one web-llm 0.2.79 bundles and the one in
 * 0.2.86):
 *
 * - no `{m,n}` (0.2.79 has none): bounded repetition is written out, nested
 *   optionals for the optional part;
 * - nothing that can match the empty string under `*`, `+` or `?`, and no
 *   left recursion: 0.2.79 aborts its whole wasm module on either, so the
 *   repeated item is rewritten to its non-empty part (the language is the
 *   same) and left recursion is refused;
 * - `jsonString`: the same language, written as the inside of a JSON string
 *   (`"` as `\"`, a newline as `\n`, … the escapes JSON.stringify writes), for
 *   a custom tool's `input` inside a JSON call.
 *
 * The output is bounded (MAX_GRAMMAR_CHARS), checked as each piece is built,
 * so an oversized grammar is refused before its text is; past it, a
 * GrammarError naming the bound.
 *
 * The work is linear in the grammar's nodes: a node may be shared (Lark's
 * `%ignore` puts a rule body's item in two places per level, and the
 * non-empty rewrite reads each item twice), so every per-node answer (can it
 * be empty, can it produce text, its non-empty part, its EBNF) is computed once
 * and remembered, and a long expression used again is written once, as a rule
 * of its own. Without that, nesting depth d cost 2^d (a 156-character regex
 * took 10 s). MAX_COMPILE_STEPS bounds the work all the same, as a last resort.
 *
 * Three modules do the work: grammar-analysis.ts (which rules and nodes can
 * be empty or produce text, left recursion, the step bound), ebnf-writer.ts
 * (rules and expressions, sharing, the size bound) and ebnf-syntax.ts
 * (strings and character classes). This one is the entry point.
 */
import { EbnfWriter, type EmitOptions } from "./ebnf-writer.js";
import { CompileBudget, GrammarAnalysis } from "./grammar-analysis.js";
import type { Grammar } from "./ir.js";
import { MAX_COMPILE_STEPS } from "./limits.js";

export { ebnfString } from "./ebnf-syntax.js";
export type { EmitOptions };

/** The grammar as xgrammar EBNF (root rule `root`). */
export function toEbnf(grammar: Grammar, options: EmitOptions = {}): string {
  const budget = new CompileBudget(grammar, options.maxSteps ?? MAX_COMPILE_STEPS);
  const analysis = new GrammarAnalysis(grammar, budget);
  return new EbnfWriter(grammar, options, analysis, budget).emit();
}
