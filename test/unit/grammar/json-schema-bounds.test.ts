/**
 * The JSON-schema → EBNF compiler on hostile schemas: repeated sub-rules are
 * named, not inlined (22 nested arrays once made a 126 M-character grammar),
 * properties are ordered in O(n) (2 000 optional ones once made 177 M
 * characters), and what is still over the size bound is refused naming it.
 * Grammars that compile are checked with web-llm 0.2.79's xgrammar.
 */
import { describe, expect, it } from "vitest";
import { jsonSchemaToEbnf } from "../../../src/grammar/json-schema-ebnf.js";
import { GrammarError } from "../../../src/grammar/ir.js";
import { MAX_CHAIN, MAX_GRAMMAR_CHARS } from "../../../src/grammar/limits.js";
import { createClient } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { compileEbnf079 } from "../families/xgrammar-0279.js";
import { responseFormatFor } from "../../../src/engine/webllm/webllm-request.js";

function nestedArrays(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < depth; i++) schema = { type: "array", items: schema };
  return schema;
}

function optionalProperties(n: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) properties[`property_${i}`] = { type: "string" };
  return { type: "object", properties };
}

function timed<T>(run: () => T): { value: T | GrammarError; ms: number } {
  const start = performance.now();
  try {
    return { value: run(), ms: performance.now() - start };
  } catch (error) {
    if (!(error instanceof GrammarError)) throw error;
    return { value: error, ms: performance.now() - start };
  }
}

describe("JSON schema → EBNF stays bounded", () => {
  it("22 nested arrays (567 bytes) compile fast to a small grammar that xgrammar runs", async () => {
    const schema = nestedArrays(22);
    expect(JSON.stringify(schema).length).toBe(567);
    const { value, ms } = timed(() => jsonSchemaToEbnf(schema));
    expect(ms).toBeLessThan(200);
    expect(typeof value).toBe("string");
    const grammar = value as string;
    expect(grammar.length).toBeLessThan(5_000);
    const accepts = await compileEbnf079(grammar);
    expect(await accepts("[".repeat(22) + '"a", "b"' + "]".repeat(22))).toBe(true);
    expect(await accepts("[".repeat(22) + "]".repeat(22))).toBe(true);
    expect(await accepts("[".repeat(21) + '"a"' + "]".repeat(21))).toBe(false);
  }, 20_000);

  it("5 000 optional properties are refused fast, naming the bound", () => {
    const { value, ms } = timed(() => jsonSchemaToEbnf(optionalProperties(5_000)));
    expect(ms).toBeLessThan(1_000);
    expect(value).toBeInstanceOf(GrammarError);
    expect((value as GrammarError).message).toContain(`over the bound of ${MAX_CHAIN} properties per object`);
  });

  it("grows linearly with the number of properties", () => {
    const small = jsonSchemaToEbnf(optionalProperties(25))!.length;
    const large = jsonSchemaToEbnf(optionalProperties(250))!.length;
    expect(large / small).toBeLessThan(12);
  });

  it("the most properties allowed compile to a grammar web-llm 0.2.79's xgrammar runs (1 000 made it abort)", async () => {
    const accepts = await compileEbnf079(jsonSchemaToEbnf(optionalProperties(MAX_CHAIN))!);
    expect(await accepts('{"property_0": "a", "property_255": "z"}')).toBe(true);
    expect(await accepts('{"property_255": "z", "property_0": "a"}')).toBe(false);
  }, 20_000);

  it("many objects of allowed size still meet the size bound", () => {
    const schema = { type: "object", properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`o${i}`, optionalProperties(250)])) };
    const { value } = timed(() => jsonSchemaToEbnf(schema));
    expect((value as GrammarError).message).toContain(`bound of ${MAX_GRAMMAR_CHARS} characters`);
  });

  it("ordering stays exact: declared order, optional ones skippable, required ones mandatory, no extras", async () => {
    const schema = {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "string" }, c: { type: "boolean" }, d: { type: "null" } },
      required: ["b", "d"],
    };
    const accepts = await compileEbnf079(jsonSchemaToEbnf(schema)!);
    expect(await accepts('{"b": "x", "d": null}')).toBe(true);
    expect(await accepts('{"a": 1, "b": "x", "c": true, "d": null}')).toBe(true);
    expect(await accepts('{"a": 1, "b": "x", "d": null}')).toBe(true);
    expect(await accepts('{"b": "x", "c": false, "d": null}')).toBe(true);
    expect(await accepts('{"a": 1, "d": null}')).toBe(false);
    expect(await accepts('{"b": "x"}')).toBe(false);
    expect(await accepts('{"b": "x", "a": 1, "d": null}')).toBe(false);
    expect(await accepts('{"b": "x", "d": null, "e": 1}')).toBe(false);
    const allOptional = await compileEbnf079(jsonSchemaToEbnf(optionalProperties(3))!);
    expect(await allOptional("{}")).toBe(true);
    expect(await allOptional('{"property_2": "z"}')).toBe(true);
    expect(await allOptional('{"property_0": "x", "property_2": "z"}')).toBe(true);
    expect(await allOptional('{, "property_2": "z"}')).toBe(false);
  }, 20_000);
});

describe("an oversized schema is a 400 naming the bound, before the request queues", () => {
  const client = createClient({ worker: false, engine: createScriptedEngine({ replies: ["{}"] }) });
  const model = "Qwen3-0.6B-q4f16_1-MLC";
  const schema = optionalProperties(5_000);

  it("chat response_format", async () => {
    const start = performance.now();
    const error = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "big", schema } } })
      .catch((e: unknown) => e);
    expect(performance.now() - start).toBeLessThan(2_000);
    expect(error).toMatchObject({ status: 400, code: "grammar_too_large", param: "response_format.json_schema.schema" });
    expect((error as Error).message).toContain(`bound of ${MAX_CHAIN} properties per object`);
  });

  it("chat tool parameters", async () => {
    const error = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "big", parameters: schema } }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "grammar_too_large", param: "tools[0].function.parameters" });
  });

  it("Responses text.format and tools", async () => {
    const format = await client.responses.create({ model, input: "hi", text: { format: { type: "json_schema", name: "big", schema } } }).catch((e: unknown) => e);
    expect(format).toMatchObject({ status: 400, code: "grammar_too_large", param: "text.format.schema" });
    const tools = await client.responses.create({ model, input: "hi", tools: [{ type: "function", name: "big", parameters: schema, strict: true }] }).catch((e: unknown) => e);
    expect(tools).toMatchObject({ status: 400, code: "grammar_too_large", param: "tools[0].parameters" });
  });
});

describe("tools that pass the bound one by one but not together", () => {
  it("the EBNF web-llm 0.2.79 would get is a 400 naming the bound, not a crash", () => {
    const tag = (name: string) => ({ begin: `<tool_call>{"name": "${name}", "arguments": `, content: { type: "json_schema", json_schema: optionalProperties(250) }, end: "}</tool_call>" });
    const tags = Array.from({ length: 10 }, (_, i) => tag(`t${i}`));
    const format = { type: "structural_tag" as const, structural_tag: { type: "structural_tag", format: { type: "triggered_tags", triggers: ["<tool_call>"], tags, at_least_one: true, stop_after_first: false } } };
    let error: unknown;
    try {
      responseFormatFor(format, false);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ status: 400, code: "grammar_too_large", param: "tools" });
    expect((error as Error).message).toContain(`bound of ${MAX_GRAMMAR_CHARS} characters`);
  });
});
