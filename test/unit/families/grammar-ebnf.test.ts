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

type Call = [name: string, args: Record<string, string>];
const WEATHER_CALL: Call = ["get_weather", { location: "Paris", unit: "celsius" }];
const TIME_CALL: Call = ["get_time", { timezone: "Europe/Paris" }];
const UNDECLARED: Call = ["delete_files", { location: "Paris" }];
const OUT_OF_SCHEMA: Call = ["get_weather", { location: "Paris", unit: "kelvin" }];

const json = (args: Record<string, string>) => JSON.stringify(args).replace(/":"/g, '": "').replace(/","/g, '", "');
const hermes = (calls: Call[]) => calls.map(([n, a]) => `<tool_call>\n{"name": "${n}", "arguments": ${json(a)}}\n</tool_call>`).join("\n");
const list = (calls: Call[]) => calls.map(([n, a]) => `{"name": "${n}", "arguments": ${json(a)}}`).join(", ");

/** What each family's model emits for these calls (tool-and-reasoning-formats.md §A). */
const CANONICAL: Record<FamilyName, (calls: Call[]) => string> = {
  "qwen2.5": hermes,
  qwen3: hermes,
  hermes,
  "deepseek-r1": hermes,
  gemma: hermes,
  prompted: hermes,
  "qwen3.5": (calls) =>
    calls
      .map(([n, a]) => `<tool_call>\n<function=${n}>\n` + Object.entries(a).map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join("") + "</function>\n</tool_call>")
      .join("\n"),
  "llama-3.1": (calls) => calls.map(([n, a]) => `{"name": "${n}", "parameters": ${json(a)}}`).join(""),
  "llama-3.2-pythonic": (calls) => "[" + calls.map(([n, a]) => `${n}(${Object.entries(a).map(([k, v]) => `${k}="${v}"`).join(", ")})`).join(", ") + "]",
  "mistral-v0.3": (calls) => `[TOOL_CALLS][${list(calls)}]`,
  "ministral-3": (calls) => calls.map(([n, a]) => `[TOOL_CALLS]${n}[ARGS]${json(a)}`).join(""),
  "ministral-3-reasoning": (calls) => calls.map(([n, a]) => `[TOOL_CALLS]${n}[ARGS]${json(a)}`).join(""),
  "phi-4-mini": (calls) => `<|tool_call|>[${list(calls)}]<|/tool_call|>`,
  "gemma-4": (calls) => calls.map(([n, a]) => `<|tool_call>call:${n}{${Object.entries(a).map(([k, v]) => `${k}:<|"|>${v}<|"|>`).join(",")}}<tool_call|>`).join(""),
  smollm2: (calls) => `<tool_call>[${list(calls)}]</tool_call>`,
};

/** Pythonic arguments are free text up to `)`: the grammar pins the function name only. */
const NO_VALUE_SCHEMA = new Set<FamilyName>(["llama-3.2-pythonic"]);
/** Formats whose parallel calls this test's canonical text cannot express as one reply. */
const SINGLE_CALL = new Set<FamilyName>(["llama-3.1", "llama-3.2-pythonic"]);

async function ebnfFor(family: FamilyName, toolChoice: ToolChoice, parallelToolCalls = true, thinking = false) {
  const format = FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice, parallelToolCalls, thinking }));
  expect(format?.type).toBe("structural_tag");
  const ebnf = structuralTagToEbnf((format as { structural_tag: Record<string, unknown> }).structural_tag);
  expect(ebnf, "compiles to EBNF").toBeDefined();
  return compileEbnf079(ebnf!);
}

const names = Object.keys(CANONICAL) as FamilyName[];

describe.each(names)("%s: tool_choice as an EBNF grammar for web-llm 0.2.79", (family) => {
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

const THOUGHT: Partial<Record<FamilyName, string>> = {
  qwen3: "<think>\nThe user wants the weather.\n</think>\n\n",
  "qwen3.5": "The user wants the weather.\n</think>\n\n",
  "deepseek-r1": "<think>\nThe user wants the weather.\n</think>\n\n",
  "ministral-3-reasoning": "[THINK]The user wants the weather.[/THINK]",
  "gemma-4": "<|channel>thought\nThe user wants the weather.<channel|>",
};

describe.each(Object.keys(THOUGHT) as FamilyName[])("%s with thinking on, as EBNF", (family) => {
  it("required: the reasoning block may come first, then the call", async () => {
    const accepts = await ebnfFor(family, "required", true, true);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([WEATHER_CALL]))).toBe(true);
    expect(await accepts(THOUGHT[family]! + "It is sunny.")).toBe(false);
    expect(await accepts(THOUGHT[family]! + CANONICAL[family]([UNDECLARED]))).toBe(false);
  });
});
