/**
 * Size bounds on grammars. A grammar is compiled before the request takes
 * the engine's queue slot and again by xgrammar inside it; both costs grow
 * with its size, and one oversized request would hold every tab's queue. Over
 * a bound the request is refused with a 400 naming the bound.
 */

/** Characters of compiled EBNF (JSON schemas, regexes, Lark grammars, tool-call constraints). */
export const MAX_GRAMMAR_CHARS = 250_000;

/** Characters of an app's grammar definition (a regex or a Lark grammar) as sent. */
export const MAX_DEFINITION_CHARS = 50_000;

/**
 * Properties of one object in a JSON schema. Each becomes a link in a chain
 * of rules, and the xgrammar web-llm 0.2.79 bundles aborts its whole wasm
 * module on long chains (1 000 optional properties did).
 */
export const MAX_CHAIN = 256;

/** Items of a repeated sequence that can all be empty (regex, Lark): the same chains, shorter still (300 aborted 0.2.79's xgrammar). */
export const MAX_EMPTY_RUN = 128;

/** Groups nested in groups (regex `(…)`, Lark `(…)` and `[…]`): the compilers recurse on them. */
export const MAX_NESTING = 100;

/** The largest repetition count (`{m,n}` in a regex, `~ n..m` in Lark): each count is written out. */
export const MAX_REPEAT = 1_000;

/**
 * Units of work (a grammar node visited without a remembered answer) to
 * compile one grammar to EBNF. Compiling is linear in the grammar's size, so
 * this is a last resort: the heaviest 50 000-character definition measured
 * (150 Lark rules, each nested 100 deep, under `%ignore`) took 420 000. Past
 * it a request is refused rather than hold the worker, which every tab of the
 * origin shares.
 */
export const MAX_COMPILE_STEPS = 1_000_000;
