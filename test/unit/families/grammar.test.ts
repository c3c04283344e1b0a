/**
 * tool_choice enforcement: every family's structural tag compiles with the
 * web-xgrammar bundled in web-llm (toy byte-level vocabulary) for each
 * tool_choice mode, accepts the family's canonical call text and rejects a
 * call to an undeclared tool or with arguments outside the tool's schema.
 */
import { describe, expect, it } from "vitest";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";
import type { ToolChoice } from "../../../src/protocol/types.js";
import { compileEbnf086, compileTag } from "./xgrammar.js";
import { compileEbnf079 } from "./xgrammar-0279.js";
import { responseFormatFor } from "../../../src/engine/webllm/webllm-request.js";
import { context, TOOLS } from "./helpers.js";
import { CANONICAL, FAMILY_NAMES, NO_VALUE_SCHEMA, OUT_OF_SCHEMA, SINGLE_CALL, structuralTagFor, THOUGHT, TIME_CALL, UNDECLARED, WEATHER_CALL } from "./canonical-calls.js";

async function grammarFor(family: FamilyName, toolChoice: ToolChoice, parallelToolCalls = true, thinking = false) {
  return compileTag(structuralTagFor(family, toolChoice, parallelToolCalls, thinking));
}

describe.each(FAMILY_NAMES)("%s structural tags", (family) => {
  const text = CANONICAL[family];

  it("auto: free text, or a valid call to a declared tool", async () => {
    const accepts = await grammarFor(family, "auto");
    expect(await accepts("It is sunny in Paris.")).toBe(true);
    expect(await accepts(text([WEATHER_CALL]))).toBe(true);
    expect(await accepts(text([UNDECLARED]))).toBe(false);
    if (!NO_VALUE_SCHEMA.has(family)) expect(await accepts(text([OUT_OF_SCHEMA]))).toBe(false);
  });

  it("required: a call must come, to a declared tool", async () => {
    const accepts = await grammarFor(family, "required");
    expect(await accepts("It is sunny in Paris.")).toBe(false);
    expect(await accepts(text([WEATHER_CALL]))).toBe(true);
    expect(await accepts(text([TIME_CALL]))).toBe(true);
    expect(await accepts(text([UNDECLARED]))).toBe(false);
  });

  it("named function: only that tool", async () => {
    const accepts = await grammarFor(family, { type: "function", function: { name: "get_time" } });
    expect(await accepts(text([TIME_CALL]))).toBe(true);
    expect(await accepts(text([WEATHER_CALL]))).toBe(false);
    expect(await accepts("It is noon.")).toBe(false);
  });

  it("parallel_tool_calls: several calls only when allowed", async () => {
    const single = await grammarFor(family, "required", false);
    expect(await single(text([WEATHER_CALL]))).toBe(true);
    expect(await single(text([WEATHER_CALL, TIME_CALL]))).toBe(false);
    if (SINGLE_CALL.has(family)) return;
    const parallel = await grammarFor(family, "required", true);
    expect(await parallel(text([WEATHER_CALL, TIME_CALL]))).toBe(true);
  });

  it("none, or no tools: no grammar", () => {
    expect(FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice: "none" }))).toBeUndefined();
    expect(FAMILIES[family].toolGrammar(context({ tools: [], toolChoice: "required" }))).toBeUndefined();
  });
});

describe.each(Object.keys(THOUGHT) as FamilyName[])("%s with thinking on", (family) => {
  it("required: the reasoning block may come first, then the call", async () => {
    const accepts = await grammarFor(family, "required", true, true);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([WEATHER_CALL]))).toBe(true);
    expect(await accepts(THOUGHT[family]! + "It is sunny.")).toBe(false);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([UNDECLARED]))).toBe(false);
  });
});

describe("Gemma 4 arguments grammar (not JSON)", () => {
  const plan = {
    type: "function" as const,
    function: {
      name: "plan",
      parameters: {
        type: "object",
        properties: {
          stops: { type: "array", items: { type: "object", properties: { city: { type: "string" }, nights: { type: "integer" } }, required: ["city"] } },
          budget: { type: "number" },
          fast: { type: "boolean" },
          mode: { type: "string", enum: ["car", "train"] },
        },
        required: ["stops"],
      },
    },
  };
  const Q = '<|"|>';

  it("types values by the schema, keeps required keys and the template's sorted key order", async () => {
    const format = FAMILIES["gemma-4"].toolGrammar(context({ tools: [plan], toolChoice: "required" }));
    const accepts = await compileTag((format as { structural_tag: unknown }).structural_tag);
    const callText = (args: string) => `<|tool_call>call:plan{${args}}<tool_call|>`;
    expect(await accepts(callText(`budget:120.5,fast:true,mode:${Q}train${Q},stops:[{city:${Q}Rome${Q},nights:2}]`))).toBe(true);
    expect(await accepts(callText(`stops:[{city:${Q}Rome, "the" <city>${Q}}]`))).toBe(true);
    expect(await accepts(callText(`stops:[]`))).toBe(true);
    expect(await accepts(callText(`budget:1`))).toBe(false); // required `stops` missing
    expect(await accepts(callText(`stops:[{city:${Q}Rome${Q},nights:${Q}2${Q}}]`))).toBe(false); // integer as string
    expect(await accepts(callText(`mode:${Q}plane${Q},stops:[]`))).toBe(false); // not in the enum
    expect(await accepts(callText(`stops:[],budget:1`))).toBe(false); // keys out of template order
    expect(await accepts(callText(`stops:[],color:${Q}red${Q}`))).toBe(false); // undeclared key
  });
});

/**
 * Issue 20, item 5: web-llm 0.2.86's xgrammar lets any whitespace sit between
 * the JSON tokens of a `json_schema` content (a weak model fills it until
 * max_tokens). The engine adapter sends each call's JSON as a grammar with the
 * canonical separators instead (responseFormatFor): still a structural tag
 * (so `auto` keeps its free text before a trigger), every call bounded.
 */
describe.each(FAMILY_NAMES)("%s structural tags as web-llm 0.2.86 gets them: no whitespace runs inside a call", (family) => {
  const text = CANONICAL[family];
  const sent = async (toolChoice: ToolChoice) => {
    const format = responseFormatFor(FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice })), true);
    expect(format?.type).toBe("structural_tag");
    return compileTag((format as { structural_tag: unknown }).structural_tag);
  };

  it("required and auto: the canonical call passes, the same call with whitespace runs between its JSON tokens does not", async () => {
    for (const choice of ["required", "auto"] as const) {
      const accepts = await sent(choice);
      const canonical = text([WEATHER_CALL]);
      expect(await accepts(canonical), choice).toBe(true);
      expect(await accepts(text([UNDECLARED])), choice).toBe(false);
      if (!NO_VALUE_SCHEMA.has(family)) expect(await accepts(text([OUT_OF_SCHEMA])), choice).toBe(false);
      if (!canonical.includes('"location": "Paris"')) continue; // not JSON arguments (XML, Gemma 4, pythonic)
      for (const padded of ['"location"  \t:  "Paris"', '"location":\n\n\n"Paris"', '"location": "Paris",\n   "unit"']) {
        const bad = canonical.replace(padded.startsWith('"location": "Paris",') ? '"location": "Paris", "unit"' : '"location": "Paris"', padded);
        expect(bad).not.toBe(canonical);
        expect(await accepts(bad), `${choice}: ${JSON.stringify(bad)}`).toBe(false);
      }
    }
  });
});

describe("json_schema output is bounded too (issue 20, item 5)", () => {
  const schema = { type: "object", properties: { city: { type: "string" }, days: { type: "array", items: { type: "integer" } } }, required: ["city"] };

  it("on 0.2.86 and 0.2.79 it goes as a grammar with the canonical separators", async () => {
    const format = responseFormatFor({ type: "json_object", schema: JSON.stringify(schema) }, true);
    expect(format?.type).toBe("grammar");
    const grammar = (format as { grammar: string }).grammar;
    for (const accepts of [await compileEbnf086(grammar), await compileEbnf079(grammar)]) {
      expect(await accepts('{"city": "Paris", "days": [1, 2]}')).toBe(true);
      expect(await accepts('{"city": "Paris"}')).toBe(true);
      expect(await accepts('{"days": [1]}')).toBe(false);
      expect(await accepts('{"city": "Paris", "days": [1,   2]}')).toBe(false);
      expect(await accepts('{\n  "city": "Paris"\n}')).toBe(false);
    }
  });

  it("a schema our compiler cannot express exactly keeps xgrammar's own converter (the schema wins over the whitespace bound)", () => {
    for (const hard of [{ type: "string", pattern: "^a+$" }, { type: "object", properties: { n: { type: "integer", minimum: 1 } } }, { $ref: "#/$defs/x", $defs: { x: { type: "string" } } }]) {
      const format = { type: "json_object" as const, schema: JSON.stringify(hard) };
      expect(responseFormatFor(format, true)).toEqual(format);
    }
  });
});
