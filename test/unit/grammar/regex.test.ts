/**
 * Regex → EBNF: each pattern is compiled to EBNF and run through the
 * web-xgrammar builds web-llm 0.2.79 and 0.2.86 bundle; on every sample the
 * grammar must agree with JavaScript's own RegExp matching the whole text
 * (exact, never looser). Refused constructs are named.
 */
import { describe, expect, it } from "vitest";
import { regexToGrammar } from "../../../src/grammar/regex.js";
import { toEbnf } from "../../../src/grammar/emit.js";
import { GrammarError } from "../../../src/grammar/ir.js";
import { compileEbnf079 } from "../families/xgrammar-0279.js";
import { compileEbnf086 } from "../families/xgrammar.js";

const ebnf = (source: string, flags = "") => toEbnf(regexToGrammar(source, { flags }));

/** [pattern, flags, samples]: the grammar must accept exactly the samples the RegExp matches whole. */
const VECTORS: Array<[string, string, string[]]> = [
  ["abc", "", ["abc", "ab", "abcd", ""]],
  ["^\\d{3}-\\d{4}$", "", ["555-1234", "5551234", "55-1234", "555-12345"]],
  ["[a-z]+@[a-z]+\\.(com|org)", "", ["me@example.com", "me@example.net", "@x.com", "a@b.org"]],
  ["(?:ab)*c?", "", ["", "ab", "abab", "ababc", "c", "abc", "aba", "cc"]],
  ["(a|)*b", "", ["b", "ab", "aaab", "a", ""]],
  ["(a?b?)+", "", ["", "a", "ab", "ba", "abba", "c"]],
  ["x{2,4}y{0,2}z{1,}", "", ["xxz", "xxxxyyzzz", "xz", "xxxxxz", "xxyyyz"]],
  ["[^\"\\\\\\n]*", "", ["plain", 'with "quote', "back\\slash", "new\nline", ""]],
  ["\\w+\\s\\W", "", ["ab_9 !", "ab ab", "a\tx", "a  !"]],
  [".+", "", ["any thing", "two\nlines", "x"]],
  [".+", "s", ["any thing", "two\nlines"]],
  ["[\\d-x]+", "", ["1-x", "x", "-", "y"]],
  ["a.c", "u", ["abc", "a\u00e9c", "a\u{1F600}c", "a\nc"]],
  ["\\u{1F600}|\\x41\\u0042\\cJ", "u", ["\u{1F600}", "AB\n", "AB"]],
  ["(?<year>\\d{4})-(\\d\\d)", "", ["2024-01", "24-01"]],
  ["a+?b*?", "g", ["a", "aab", "b"]],
  ["[^]b|c", "", ["xb", "\nb", "b", "c"]],
  ["\\{\\}\\[\\]\\(\\)\\.\\*\\+\\?\\^\\$\\|\\/", "", ["{}[]().*+?^$|/"]],
  ["{x}", "", ["{x}", "x"]],
  // Ranges above U+00FF (\s holds U+2000–U+200A) must not let ASCII through on web-llm 0.2.86's xgrammar.
  ["\\s", "", ["(", "\n", " ", "a", "\x0b"]],
  ["[\\u0100-\\u0161]|\\S", "", ["(", "a", " "]],
];

describe.each([
  ["web-llm 0.2.79", compileEbnf079],
  ["web-llm 0.2.86", compileEbnf086],
])("regex → EBNF through the xgrammar bundled in %s", (_, compile) => {
  it.each(VECTORS)("/%s/%s agrees with RegExp on every sample", async (source, flags, samples) => {
    const accepts = await compile(ebnf(source, flags));
    const whole = new RegExp(`^(?:${source})$`, flags.replace("g", ""));
    for (const sample of samples) {
      if ([...sample].some((ch) => ch.charCodeAt(0) >= 128)) continue; // the toy vocabulary is ASCII
      expect(await accepts(sample), JSON.stringify(sample)).toBe(whole.test(sample));
    }
  });
});

describe("regex constructs that cannot be expressed exactly are refused by name", () => {
  it.each([
    ["a(?=b)", "lookahead"],
    ["a(?!b)", "lookahead"],
    ["(?<=a)b", "lookbehind"],
    ["(?<!a)b", "lookbehind"],
    ["(a)\\1", "backreference"],
    ["(?<n>a)\\k<n>", "backreference"],
    ["\\bword", "word-boundary"],
    ["a^b", "`^` anchor"],
    ["a$b", "`$` anchor"],
    ["\\p{L}", "Unicode property"],
    ["(?i)a", "group modifier"],
    ["a{1001}", "bound of 1000"],
    ["[]a", "matches nothing"],
    ["[\u4e00-\u9fff]", "more than 256 characters above U+00FF"],
  ])("/%s/ → %s", (source, named) => {
    expect(() => ebnf(source)).toThrow(GrammarError);
    expect(() => ebnf(source)).toThrow(named);
  });

  it("a repeated group of 128 optional items compiles to a grammar web-llm 0.2.79's xgrammar runs; 5 000 (quadratic and a stack overflow before) are refused fast, naming the bound", async () => {
    const accepts = await compileEbnf079(ebnf("(" + "a?".repeat(128) + ")+b"));
    expect(await accepts("aab")).toBe(true);
    expect(await accepts("b")).toBe(true);
    expect(await accepts("aa")).toBe(false);
    const start = performance.now();
    expect(() => ebnf("(" + "a?".repeat(5_000) + ")+b")).toThrow("over the bound of 128");
    expect(performance.now() - start).toBeLessThan(1_000);
  }, 20_000);

  it("20 000 nested groups (a stack overflow before) → the nesting bound", () => {
    expect(() => ebnf("(".repeat(20_000) + "a" + ")".repeat(20_000))).toThrow("nested deeper than the bound of 100");
  });

  it.each([
    ["i", "case-insensitive"],
    ["m", "multiline"],
    ["v", "set notation"],
  ])("flag %s → %s", (flags, named) => {
    expect(() => ebnf("a", flags)).toThrow(named);
  });
});

/**
 * Inside a JSON string (a custom tool's `input` in JSON call arguments): the
 * grammar must accept exactly JSON.stringify's escaping of the texts the
 * RegExp matches, and nothing written otherwise.
 */
describe.each([
  ["web-llm 0.2.79", compileEbnf079],
  ["web-llm 0.2.86", compileEbnf086],
])("regex → EBNF as JSON string content, through the xgrammar bundled in %s", (_, compile) => {
  const JSON_VECTORS: Array<[string, string[]]> = [
    ["[^x]+", ['a"b', "back\\slash", "tab\tand\nnewline", "\u0001", "x", "ax"]],
    ['"[a-z]*"', ['"abc"', '""', "abc", '"ab"c"']],
    ["(\\s|\\w)+", ["a b\tc\nd", "a-b"]],
  ];
  it.each(JSON_VECTORS)("/%s/ agrees with RegExp on the escaped samples", async (source, samples) => {
    const accepts = await compile(toEbnf(regexToGrammar(source), { jsonString: true }));
    const whole = new RegExp(`^(?:${source})$`);
    for (const sample of samples) {
      const escaped = JSON.stringify(sample).slice(1, -1);
      expect(await accepts(escaped), JSON.stringify(escaped)).toBe(whole.test(sample));
    }
    // Unescaped, a quote or a newline cannot appear inside a JSON string.
    expect(await accepts('a"b')).toBe(false);
    expect(await accepts("a\nb")).toBe(false);
  });
});
