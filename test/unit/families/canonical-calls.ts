/**
 * Shared by the tool_choice grammar tests (grammar.test.ts: structural tags on
 * web-llm 0.2.86; grammar-ebnf.test.ts: the same constraint as EBNF on web-llm
 * 0.2.79): the calls they feed, each family's canonical text for them, the
 * reasoning block each thinking family writes first, and the family's tool
 * grammar as a structural tag.
 */
import { expect } from "vitest";
import { FAMILIES, type FamilyName } from "../../../src/families/families.js";
import type { ToolChoice } from "../../../src/protocol/types.js";
import { context, TOOLS } from "./helpers.js";

export type Call = [name: string, args: Record<string, string>];
export const WEATHER_CALL: Call = ["get_weather", { location: "Paris", unit: "celsius" }];
export const TIME_CALL: Call = ["get_time", { timezone: "Europe/Paris" }];
export const UNDECLARED: Call = ["delete_files", { location: "Paris" }];
export const OUT_OF_SCHEMA: Call = ["get_weather", { location: "Paris", unit: "kelvin" }];

const json = (args: Record<string, string>) => JSON.stringify(args).replace(/":"/g, '": "').replace(/","/g, '", "');
const hermes = (calls: Call[]) => calls.map(([n, a]) => `<tool_call>\n{"name": "${n}", "arguments": ${json(a)}}\n</tool_call>`).join("\n");
const list = (calls: Call[]) => calls.map(([n, a]) => `{"name": "${n}", "arguments": ${json(a)}}`).join(", ");

/** What each family's model emits for these calls (tool-and-reasoning-formats.md §A). */
export const CANONICAL: Record<FamilyName, (calls: Call[]) => string> = {
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

/** Every family, in CANONICAL's order. */
export const FAMILY_NAMES = Object.keys(CANONICAL) as FamilyName[];

/** Pythonic arguments are free text up to `)`: the grammar pins the function name only. */
export const NO_VALUE_SCHEMA = new Set<FamilyName>(["llama-3.2-pythonic"]);
/** Formats whose parallel calls this test's canonical text cannot express as one reply. */
export const SINGLE_CALL = new Set<FamilyName>(["llama-3.1", "llama-3.2-pythonic"]);

/** A reasoning block as each thinking family writes it before its answer. */
export const THOUGHT: Partial<Record<FamilyName, string>> = {
  qwen3: "<think>\nThe user wants the weather.\n</think>\n\n",
  "qwen3.5": "The user wants the weather.\n</think>\n\n",
  "deepseek-r1": "<think>\nThe user wants the weather.\n</think>\n\n",
  "ministral-3-reasoning": "[THINK]The user wants the weather.[/THINK]",
  "gemma-4": "<|channel>thought\nThe user wants the weather.<channel|>",
};

/** The family's tool grammar for TOOLS and this tool_choice; asserts it is a structural tag and returns the tag. */
export function structuralTagFor(family: FamilyName, toolChoice: ToolChoice, parallelToolCalls = true, thinking = false): Record<string, unknown> {
  const format = FAMILIES[family].toolGrammar(context({ tools: TOOLS, toolChoice, parallelToolCalls, thinking }));
  expect(format?.type).toBe("structural_tag");
  return (format as { structural_tag: Record<string, unknown> }).structural_tag;
}
