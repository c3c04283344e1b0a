/**
 * Our EBNF → llama.cpp's GBNF (src/engine/wllama/gbnf.ts), each form the
 * wllama engine is given: a regex, a JSON schema, a forced tool call's
 * structural tag (tool_choice required / named), a Lark grammar, and a custom tool's regex
 * input written inside a JSON string. Each GBNF is read by a matcher as strict
 * as llama.cpp's parser (test/support/gbnf-matcher.ts) and must accept exactly
 * the samples the source accepts: JavaScript's RegExp for a regex, the
 * web-xgrammar web-llm 0.2.86 bundles (on the EBNF) for the others.
 */
import { describe, expect, it } from "vitest";
import { ebnfToGbnf } from "../../../src/engine/wllama/gbnf.js";
import { toEbnf } from "../../../src/grammar/emit.js";
import { GrammarError } from "../../../src/grammar/ir.js";
import { larkToGrammar } from "../../../src/grammar/lark.js";
import { jsonSchemaToEbnf } from "../../../src/grammar/json-schema-ebnf.js";
import { regexToGrammar } from "../../../src/grammar/regex.js";
import { structuralTagToEbnf } from "../../../src/grammar/structural-tag-ebnf.js";
import { createClient } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { gbnfMatcher } from "../../support/gbnf-matcher.js";
import { compileEbnf086 } from "../families/xgrammar.js";

/**
 * [pattern, flags, samples]: the GBNF must accept exactly the ASCII samples the
 * RegExp matches whole, and never a non-ASCII one it does not (our EBNF writes
 * "all characters above U+00FF but a few" tighter, for web-llm 0.2.86: ebnf-syntax.ts).
 */
const REGEXES: Array<[string, string, string[]]> = [
  ["^\\d{3}-\\d{4}$", "", ["555-1234", "5551234", "55-1234", "555-12345"]],
  ["[a-z]+@[a-z]+\\.(com|org)", "", ["me@example.com", "me@example.net", "@x.com", "a@b.org"]],
  ["(a|)*b", "", ["b", "ab", "aaab", "a", ""]],
  ["x{2,4}y{0,2}z{1,}", "", ["xxz", "xxxxyyzzz", "xz", "xxxxxz", "xxyyyz"]],
  ["[^\"\\\\\\n]*", "", ["plain", 'with "quote', "back\\slash", "new\nline", ""]],
  // A hyphen and `^`, `[`, `]` inside classes: the escapes GBNF spells differently.
  ["[\\d-x]+", "", ["1-x", "x", "-", "y"]],
  ["[\\^\\[\\]]+|[^-]", "", ["^[]", "]", "-", "a", "ab"]],
  ["\\{\\}\\[\\]\\(\\)\\.\\*\\+\\?\\^\\$\\|\\/", "", ["{}[]().*+?^$|/"]],
  ["a.c", "u", ["abc", "a\u00e9c", "a\u{1F600}c", "a\nc", "a\u2028c"]],
  ["\\u{1F600}|\\x41\\u0042\\cJ", "u", ["\u{1F600}", "AB\n", "AB"]],
  ["\\s", "", ["(", "\n", " ", "a", "\x0b", "\u2003"]],
  ["[\\u0100-\\u0161]|\\S", "", ["(", "a", " ", "\u0101"]],
  ["\\x00|\\t\\r", "", ["\0", "\t\r", "0"]],
];

describe("regex → EBNF → GBNF", () => {
  it.each(REGEXES)("/%s/%s agrees with RegExp on every sample", (source, flags, samples) => {
    const accepts = gbnfMatcher(ebnfToGbnf(toEbnf(regexToGrammar(source, { flags }))));
    const whole = new RegExp(`^(?:${source})$`, flags);
    for (const sample of samples) {
      if (/^[\x00-\x7f]*$/.test(sample)) expect(accepts(sample), JSON.stringify(sample)).toBe(whole.test(sample));
      else if (accepts(sample)) expect(whole.test(sample), JSON.stringify(sample)).toBe(true);
    }
  });
});

/** The GBNF must agree with xgrammar on the EBNF it came from, on every sample (the toy vocabulary is ASCII). */
async function agrees(ebnf: string, samples: string[], mustAccept: string[]) {
  const gbnf = ebnfToGbnf(ebnf);
  const accepts = gbnfMatcher(gbnf);
  const xgrammar = await compileEbnf086(ebnf);
  for (const sample of [...samples, ...mustAccept]) expect(accepts(sample), JSON.stringify(sample)).toBe(await xgrammar(sample));
  for (const sample of mustAccept) expect(accepts(sample), JSON.stringify(sample)).toBe(true);
  return gbnf;
}

describe("JSON schema → EBNF → GBNF", () => {
  it("objects, optional and required keys, enums, arrays, strings with escapes, numbers", async () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string" },
        age: { type: "integer" },
        tags: { type: "array", items: { enum: ["a", "b-c"] } },
        score: { type: "number" },
        extra: { anyOf: [{ type: "null" }, { type: "boolean" }] },
      },
      required: ["name", "age"],
    };
    const gbnf = await agrees(
      jsonSchemaToEbnf(schema)!,
      ['{"name": "x"}', '{"age": 3, "name": "x"}', '{"name": "x", "age": 03}', '{"name": "x", "age": 1, "tags": ["d"]}', '{"name":"x","age":1}', '{"name": "\\q", "age": 1}'],
      ['{"name": "Al \\"x\\"\\n\\u00e9", "age": -12}', '{"name": "", "age": 0, "tags": ["a", "b-c"], "score": 1.5e-3, "extra": null}', '{"name": "x", "age": 7, "extra": true}'],
    );
    // GBNF's names have no `_` (llama.cpp stops a name at one).
    expect(gbnf).not.toMatch(/^[^"[\]]*_[^"[\]]*::=/m);
  });
});

describe("a forced tool call's structural tag → EBNF → GBNF", () => {
  const tools = [
    { type: "function" as const, function: { name: "set_mode", parameters: { type: "object", properties: { mode: { enum: ["fast", "slow"] }, on: { type: "boolean" } }, required: ["mode", "on"] } } },
    { type: "function" as const, function: { name: "get_time", parameters: { type: "object", properties: {} } } },
  ];

  /** The structural tag the host makes for this tool_choice (a scripted Qwen3 engine takes it as is), as EBNF. */
  async function tagEbnf(tool_choice: unknown, reply: string, parallel = true): Promise<string> {
    const engine = createScriptedEngine({ replies: [reply] });
    const client = createClient({ worker: false, engine });
    await client.chat.completions.create({ model: "Qwen3-0.6B-q4f16_1-MLC", messages: [{ role: "user", content: "go" }], reasoning_effort: "none", tools, tool_choice: tool_choice as "required", parallel_tool_calls: parallel });
    const format = engine.requests[0].responseFormat;
    expect(format?.type).toBe("structural_tag");
    return structuralTagToEbnf((format as { structural_tag: Record<string, unknown> }).structural_tag)!;
  }

  const call = (name: string, args: string) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;

  it("named: only that function, arguments held to its schema", async () => {
    const reply = call("set_mode", '{"mode": "fast", "on": true}');
    await agrees(await tagEbnf({ type: "function", function: { name: "set_mode" } }, reply), [call("get_time", "{}"), call("set_mode", '{"mode": "medium", "on": true}'), call("set_mode", '{"on": true}'), "hello"], [reply]);
  });

  it("required, one call: any declared function, nothing else", async () => {
    const reply = call("get_time", "{}");
    await agrees(await tagEbnf("required", reply, false), [call("set_mode", '{"mode": "slow", "on": false}') + "\n" + reply, call("other", "{}"), "no call"], [reply, call("set_mode", '{"mode": "slow", "on": false}')]);
  });
});

describe("Lark → EBNF → GBNF", () => {
  it("rules, terminals, an imported NUMBER and %ignore: the same language as xgrammar's", async () => {
    const lark = `
start: expr
expr: term (("+" | "-") term)*
term: NUMBER | "(" expr ")" | NAME
NAME: /[a-z_][a-z_0-9]*/
WS: " "+
%import common.NUMBER
%ignore WS
`;
    await agrees(toEbnf(larkToGrammar(lark)), ["1+", "(1", "A", "1 ++ 2", "a-"], ["1+2", "(1 - x_1) + 3.5", "( 12 )", "foo_bar"]);
  });
});

describe("a custom tool's regex input inside a JSON string → GBNF", () => {
  it("quotes, backslashes and newlines are written as their JSON escapes", () => {
    const accepts = gbnfMatcher(ebnfToGbnf(toEbnf(regexToGrammar('[a-z"\\\\\\n-]+'), { jsonString: true, wrap: { before: '{"input": "', after: '"}' } })));
    expect(accepts('{"input": "a\\"b\\\\c\\nd-e"}')).toBe(true);
    expect(accepts('{"input": "a"b"}')).toBe(false);
    expect(accepts('{"input": "A"}')).toBe(false);
  });
});

describe("what GBNF cannot say is refused by name", () => {
  it.each([
    ['root ::= "a" (= "b")', "lookahead"],
    ['root ::= TagDispatch(("<a>", r))\nr ::= "x"', "TagDispatch"],
  ])("%s", (ebnf, named) => {
    expect(() => ebnfToGbnf(ebnf)).toThrow(GrammarError);
    expect(() => ebnfToGbnf(ebnf)).toThrow(named);
  });

  it("renamed rules never collide with names already in the grammar", () => {
    const gbnf = ebnfToGbnf('root ::= a_b a-b\na_b ::= "x"\na-b ::= "y"');
    const accepts = gbnfMatcher(gbnf);
    expect(accepts("xy")).toBe(true);
    expect(accepts("xx")).toBe(false);
    expect(accepts("yy")).toBe(false);
  });
});
