/**
 * Lark → EBNF: grammars in the supported subset compile to EBNF that the
 * web-xgrammar builds of web-llm 0.2.79 and 0.2.86 accept exactly on the
 * listed texts; constructs outside the subset are refused by name.
 */
import { describe, expect, it } from "vitest";
import { larkToGrammar } from "../../../src/grammar/lark.js";
import { toEbnf } from "../../../src/grammar/emit.js";
import { GrammarError } from "../../../src/grammar/ir.js";
import { compileEbnf079 } from "../families/xgrammar-0279.js";
import { compileEbnf086 } from "../families/xgrammar.js";

const ebnf = (definition: string) => toEbnf(larkToGrammar(definition));

/** [name, grammar, accepted, rejected] */
const VECTORS: Array<[string, string, string[], string[]]> = [
  [
    "arithmetic with common terminals and %ignore",
    `
// a comment
start: expr
expr: term (("+" | "-") term)*
term: factor (("*" | "/") factor)*
?factor: NUMBER | "(" expr ")" -> group
%import common.NUMBER
%import common.WS_INLINE
%ignore WS_INLINE
`,
    ["1+2", "1 + 2 * (3 - 4.5)", " 7 ", "2.5e10*3", "((1))"],
    ["1 +", "+1", "1 2", "(1", "1\n+2"],
  ],
  [
    "terminals, ranges, regexes, optional and bounded repetition",
    `
start: GREETING ", " NAME [PUNCT] CODE
GREETING: "hello" | "hi"
NAME: UPPER LOWER+
UPPER: "A".."Z"
LOWER: /[a-z]/
PUNCT: "!" | "?"
CODE: " #" DIGIT ~ 2..3
%import common.DIGIT
`,
    ["hello, Ann #12", "hi, Bo! #123", "hi, Zed? #00"],
    ["hello, ann #12", "hello, Ann #1", "hello, Ann #1234", "hey, Ann #12", "hi, Bo!! #12"],
  ],
  [
    "multi-line alternatives, ESCAPED_STRING, CNAME, rules that can be empty",
    `
start: pair ("," pair)*
pair: CNAME "=" value
value: ESCAPED_STRING
     | SIGNED_INT
| list
list: "[" [value ("," value)*] "]"
%import common (CNAME, ESCAPED_STRING, SIGNED_INT)
`,
    ['a="x"', 'a="say \\"hi\\"",b=-3', "k=[]", 'k=[1,"2",[3]]', "_x9=+0"],
    ['a="x', "9a=1", "a=[1,]", 'a="\\"', "a=1,"],
  ],
];

describe.each([
  ["web-llm 0.2.79", compileEbnf079],
  ["web-llm 0.2.86", compileEbnf086],
])("Lark → EBNF through the xgrammar bundled in %s", (_, compile) => {
  it.each(VECTORS)("%s", async (_name, grammar, accepted, rejected) => {
    const accepts = await compile(ebnf(grammar));
    for (const text of accepted) expect(await accepts(text), JSON.stringify(text)).toBe(true);
    for (const text of rejected) expect(await accepts(text), JSON.stringify(text)).toBe(false);
  });
});

describe("Lark constructs outside the subset are refused by name", () => {
  it.each([
    ['start: "a"i', "case-insensitive literal"],
    ["start: /a/i", "case-insensitive regex"],
    ["start: sep{x}\nsep{x}: x", "template"],
    ["start: x\n%declare x", "%declare"],
    ["start: x\n%import common.FOO", "common.FOO"],
    ["start: x\n%import .other.x", "only `%import common.X`"],
    ["start: a\na: a \"x\" | \"x\"", "left recursion"],
    ['start: /(?=a)a/', "lookahead"],
    ['start: "a" ~ 5000', "bound of 1000"],
    ["start: b", "`b` is used but not defined"],
    ['other: "a"', "no `start` rule"],
  ])("%s → %s", (grammar, named) => {
    expect(() => ebnf(grammar)).toThrow(GrammarError);
    expect(() => ebnf(grammar)).toThrow(named);
  });
});

describe("hostile Lark input", () => {
  it("1 000 chained rules that can be empty (they aborted web-llm 0.2.79's xgrammar) → the bound; 3 000 that cannot are fine", () => {
    const chain = (n: number, item: string) => ["start: r0", ...Array.from({ length: n }, (_, i) => `r${i}: ${item} ${i + 1 < n ? `r${i + 1}` : ""}`)].join("\n");
    expect(() => ebnf(chain(1_000, '"a"?'))).toThrow("over the bound of 256");
    expect(() => ebnf(chain(3_000, '"a"'))).not.toThrow();
  });

  it("20 000 nested groups (a stack overflow before) → the nesting bound", () => {
    expect(() => ebnf("start: " + "(".repeat(20_000) + '"a"' + ")".repeat(20_000))).toThrow("nested deeper than the bound of 100");
  });
});

describe.each([
  ["web-llm 0.2.79", compileEbnf079],
  ["web-llm 0.2.86", compileEbnf086],
])("Lark as JSON string content (a custom tool's input), through the xgrammar bundled in %s", (_, compile) => {
  it("quotes, backslashes and newlines in the language are accepted escaped, and only escaped", async () => {
    const grammar = 'start: "say " ESCAPED_STRING ("\\n" ESCAPED_STRING)*\n%import common.ESCAPED_STRING';
    const accepts = await compile(toEbnf(larkToGrammar(grammar), { jsonString: true }));
    const escaped = (text: string) => JSON.stringify(text).slice(1, -1);
    expect(await accepts(escaped('say "hi"'))).toBe(true);
    expect(await accepts(escaped('say "a \\"quoted\\" word"\n"and more"'))).toBe(true);
    expect(await accepts(escaped("say hi"))).toBe(false);
    expect(await accepts('say "hi"')).toBe(false);
    expect(await accepts(escaped('say "unterminated'))).toBe(false);
  });
});
