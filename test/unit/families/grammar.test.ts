/**
 * tool_choice enforcement: every family's structural tag compiles with the
 * web-xgrammar bundled in web-llm (toy byte-level vocabulary) for each
 * tool_choice mode, accepts the family's canonical call text and rejects a
 * call to an undeclared tool or with arguments outside the tool's schema.
 */
import { describe, expect, it } from "vitest";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";
import type { ToolChoice } from "../../../src/protocol/types.js";
import { compileTag } from "./xgrammar.js";
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

async function grammarFor(family: FamilyName, toolChoice: ToolChoice, parallelToolCalls = true, thinking = false) {
  const format = FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice, parallelToolCalls, thinking }));
  expect(format?.type).toBe("structural_tag");
  return compileTag((format as { structural_tag: unknown }).structural_tag);
}

const names = Object.keys(CANONICAL) as FamilyName[];

describe.each(names)("%s structural tags", (family) => {
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

/** A reasoning block as each thinking family writes it before its answer. */
const THOUGHT: Partial<Record<FamilyName, string>> = {
  qwen3: "<think>\nThe user wants the weather.\n</think>\n\n",
  "qwen3.5": "The user wants the weather.\n</think>\n\n",
  "deepseek-r1": "<think>\nThe user wants the weather.\n</think>\n\n",
  "ministral-3-reasoning": "[THINK]The user wants the weather.[/THINK]",
  "gemma-4": "<|channel>thought\nThe user wants the weather.<channel|>",
};

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
