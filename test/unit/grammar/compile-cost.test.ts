/**
 * Compiling an app grammar (regex, Lark) to EBNF runs on the worker every tab
 * of the origin shares, so its cost must follow the grammar's size, never its
 * nesting depth: a 156-character regex of nested optionals took 10.7 s and a
 * 76-character Lark grammar of nested `*` under `%ignore` over 30 s (issue 36).
 *
 * The work is counted, not timed: every read of a grammar node's fields by the
 * emitter goes through a Proxy and is counted, which is what an exponential
 * walk multiplies. Wall-clock ceilings here are only far below the seconds the
 * old emitter took, loose enough for a loaded machine.
 */
import { describe, expect, it } from "vitest";
import { toEbnf } from "../../../src/grammar/emit.js";
import { GrammarError } from "../../../src/grammar/ir.js";
import { larkToGrammar } from "../../../src/grammar/lark.js";
import { MAX_DEFINITION_CHARS, MAX_GRAMMAR_CHARS } from "../../../src/grammar/limits.js";
import { regexToGrammar } from "../../../src/grammar/regex.js";
import { compileEbnf086 } from "../families/xgrammar.js";
import { work } from "./emitter-reads.js";
import { distinctRepetitions50k, nestedLark, nestedRegex } from "./issue-36-grammars.js";

/** 50 000 characters of `a{0,1000}`: 607 MB and 2.4 s before its refusal. */
const repetitions50k = "a{0,1000}".repeat(Math.floor(MAX_DEFINITION_CHARS / 9));

describe("the emitter's work grows with the grammar, not with its nesting depth", () => {
  it("regex optionals nested 4, 8, 16 deep: doubling the depth at most doubles the work (it squared it before)", () => {
    const [w4, w8, w16] = [4, 8, 16].map((n) => work(regexToGrammar(nestedRegex(n))));
    expect(w8 / w4).toBeLessThan(2.5);
    expect(w16 / w8).toBeLessThan(2.5);
  });

  it("Lark `*` nested 2, 4, 8 deep under `%ignore`: the same (interleaving refers to each item twice per level)", () => {
    const [w2, w4, w8] = [2, 4, 8].map((n) => work(larkToGrammar(nestedLark(n))));
    expect(w4 / w2).toBeLessThan(2.5);
    expect(w8 / w4).toBeLessThan(2.5);
  });

  it("regex N = 30 and Lark depth 20 compile to grammars of linear size, exact on samples (xgrammar of web-llm 0.2.86)", async () => {
    const regex = toEbnf(regexToGrammar(nestedRegex(30)));
    expect(regex.length).toBeLessThan(30 * nestedRegex(30).length);
    const accepts = await compileEbnf086(regex);
    const whole = new RegExp(`^(?:${nestedRegex(30)})$`);
    // short samples: xgrammar's own matching slows down on long ones, the grammar being this ambiguous
    for (const sample of ["", "a", "b", "bbba", "bab", "ab", "aa"]) {
      expect(await accepts(sample), sample).toBe(whole.test(sample));
    }
    const lark = toEbnf(larkToGrammar(nestedLark(20)));
    expect(lark.length).toBeLessThan(30 * nestedLark(20).length);
    const acceptsLark = await compileEbnf086(lark);
    for (const [sample, ok] of [["", true], ["a", true], [" a  a\ta ", true], ["aaa", true], ["b", false], ["a b", false]] as const) {
      expect(await acceptsLark(sample), sample).toBe(ok);
    }
  });

  it("the 50 KB `a{0,1000}` definition compiles to a small grammar: the same repetition is written once", () => {
    const start = performance.now();
    const ebnf = toEbnf(regexToGrammar(repetitions50k));
    expect(performance.now() - start).toBeLessThan(1_000); // 2.4–3.4 s and 540–607 MB to a refusal before
    expect(ebnf.length).toBeLessThan(repetitions50k.length);
  });

  it("50 KB of different `a{0,n}` is refused at the size bound as soon as its pieces pass it, not after writing them all", () => {
    let start = performance.now();
    const grammar = regexToGrammar(distinctRepetitions50k);
    const parseMs = performance.now() - start;
    start = performance.now();
    expect(() => toEbnf(grammar)).toThrow(`exceeds the bound of ${MAX_GRAMMAR_CHARS} characters`);
    const emitMs = performance.now() - start;
    // Before: every piece written (about 35 MB of text, 2.4–3.4 s) and only then measured. Now it stops
    // after the first few dozen; parsing the same 50 KB, linear and unchanged, is the yardstick for load.
    expect(emitMs).toBeLessThan(10 * parseMs + 200);
  });

  it("past the work bound, a 400-ready refusal names the bound instead of holding the worker", () => {
    const grammar = larkToGrammar(nestedLark(20));
    expect(() => toEbnf(grammar, { maxSteps: 100 })).toThrow(GrammarError);
    expect(() => toEbnf(grammar, { maxSteps: 100 })).toThrow(/rule `start` takes more than 100 steps to compile/);
    expect(() => toEbnf(regexToGrammar(nestedRegex(30)), { maxSteps: 100 })).toThrow(/the expression takes more than 100 steps/);
    expect(() => toEbnf(grammar, { maxSteps: 100 })).toThrow(expect.objectContaining({ reason: "too_large" }));
  });
});
