/**
 * tool_choice on web-llm 0.2.79, which has no structural tags and ignores
 * them (issue 15, item 8): each family's constraint compiled to one EBNF
 * (`response_format: {type: "grammar"}`, which 0.2.79 has), checked with the
 * web-xgrammar that web-llm 0.2.79 bundles: it accepts the family's canonical
 * call and rejects free text, an undeclared tool and out-of-schema arguments.
 * `auto` has no EBNF form (free text before a trigger): it is not compiled.
 */
import { describe, expect, it } from "vitest";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";
import type { ToolChoice } from "../../../src/protocol/types.js";
import { structuralTagToEbnf } from "../../../src/grammar/structural-tag-ebnf.js";
import { compileEbnf079 } from "./xgrammar-0279.js";
import { context, TOOLS } from "./helpers.js";
import { CANONICAL, FAMILY_NAMES, NO_VALUE_SCHEMA, OUT_OF_SCHEMA, SINGLE_CALL, structuralTagFor, THOUGHT, TIME_CALL, UNDECLARED, WEATHER_CALL } from "./canonical-calls.js";

async function ebnfFor(family: FamilyName, toolChoice: ToolChoice, parallelToolCalls = true, thinking = false) {
  const ebnf = structuralTagToEbnf(structuralTagFor(family, toolChoice, parallelToolCalls, thinking));
  expect(ebnf, "compiles to EBNF").toBeDefined();
  return compileEbnf079(ebnf!);
}

describe.each(FAMILY_NAMES)("%s: tool_choice as an EBNF grammar for web-llm 0.2.79", (family) => {
  const text = CANONICAL[family];

  it("required: a call must come, to a declared tool, with arguments in its schema", async () => {
    const accepts = await ebnfFor(family, "required");
    expect(await accepts("It is sunny in Paris.")).toBe(false);
    expect(await accepts(text([WEATHER_CALL]))).toBe(true);
    expect(await accepts(text([TIME_CALL]))).toBe(true);
    expect(await accepts(text([UNDECLARED]))).toBe(false);
    if (!NO_VALUE_SCHEMA.has(family)) expect(await accepts(text([OUT_OF_SCHEMA]))).toBe(false);
  });

  it("named function: only that tool", async () => {
    const accepts = await ebnfFor(family, { type: "function", function: { name: "get_time" } });
    expect(await accepts(text([TIME_CALL]))).toBe(true);
    expect(await accepts(text([WEATHER_CALL]))).toBe(false);
    expect(await accepts("It is noon.")).toBe(false);
  });

  it("parallel_tool_calls: several calls only when allowed", async () => {
    const single = await ebnfFor(family, "required", false);
    expect(await single(text([WEATHER_CALL]))).toBe(true);
    expect(await single(text([WEATHER_CALL, TIME_CALL]))).toBe(false);
    if (SINGLE_CALL.has(family)) return;
    const parallel = await ebnfFor(family, "required", true);
    expect(await parallel(text([WEATHER_CALL, TIME_CALL]))).toBe(true);
  });

  it("auto is not compiled (free text before a call has no EBNF form here): the request runs unconstrained", () => {
    const format = FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice: "auto" }));
    if (format === undefined) return;
    expect(structuralTagToEbnf((format as { structural_tag: Record<string, unknown> }).structural_tag)).toBeUndefined();
  });
});

describe.each(Object.keys(THOUGHT) as FamilyName[])("%s with thinking on, as EBNF", (family) => {
  it("required: the reasoning block may come first, then the call", async () => {
    const accepts = await ebnfFor(family, "required", true, true);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([WEATHER_CALL]))).toBe(true);
    expect(await accepts(THOUGHT[family]! + "It is sunny.")).toBe(false);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([UNDECLARED]))).toBe(false);
  });
});

/**
 * Issue 20, item 5: on the real 0.2.79 engine a forced Qwen2 call stalled at
 * `{"unit"` and wrote whitespace until max_tokens. JSON inside a constrained
 * call has the canonical separators only (`", "`, `": "`), so every token of a
 * call makes progress and a call ends in a bounded number of tokens.
 */
describe("whitespace in a constrained call (EBNF)", () => {
  const hermes = CANONICAL["qwen2.5"];
  it("accepts the canonical call, rejects whitespace runs between JSON tokens", async () => {
    const accepts = await ebnfFor("qwen2.5", "required", false);
    const canonical = hermes([WEATHER_CALL]);
    expect(canonical).toContain('{"location": "Paris", "unit": "celsius"}');
    expect(await accepts(canonical)).toBe(true);
    for (const padded of [
      canonical.replace('{"location"', '{\n  "location"'),
      canonical.replace('"location": ', '"location"  \t:  '),
      canonical.replace('", "unit"', '",\n\n\n"unit"'),
      canonical.replace('"celsius"}', '"celsius"   }'),
    ]) expect(await accepts(padded), JSON.stringify(padded)).toBe(false);
  });

  it("parallel calls: one after another or on a new line, never a whitespace run", async () => {
    const accepts = await ebnfFor("qwen2.5", "required", true);
    const [a, b] = [hermes([WEATHER_CALL]), hermes([TIME_CALL])];
    expect(await accepts(a + "\n" + b)).toBe(true);
    expect(await accepts(a + b)).toBe(true);
    expect(await accepts(a + "\n \n\t" + b)).toBe(false);
  });

  it("schemas without properties: any JSON value, canonical separators only", async () => {
    const ebnf = structuralTagToEbnf({ type: "structural_tag", format: { type: "tag", begin: "<a>", content: { type: "json_schema", json_schema: { type: "object" } }, end: "</a>" } });
    const accepts = await compileEbnf079(ebnf!);
    expect(await accepts('<a>{"x": [1, {"y": null}], "z": "a  b"}</a>')).toBe(true);
    expect(await accepts("<a>{}</a>")).toBe(true);
    expect(await accepts('<a>{"x": [1,  2]}</a>')).toBe(false);
    expect(await accepts('<a>{ "x": 1}</a>')).toBe(false);
  });
});
