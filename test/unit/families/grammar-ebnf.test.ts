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
import { structuralTagToEbnf } from "../../../src/engine/structural-tag-ebnf.js";
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
