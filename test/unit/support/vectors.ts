/**
 * The shared tool-call/reasoning vectors (test/fixtures/toolcall-vectors.jsonl, copied from the project's shared fixtures; each vector names its source)
 * and how each maps onto our parser options: the vector's `family` → our
 * output format and reasoning shape, its `config` → per-request switches.
 */
import { readFileSync } from "node:fs";
import type { FunctionTool } from "../../../src/protocol/types.js";
import type { OutputFormat, ParserOptions, ReasoningMarkers } from "../../../src/parsers/index.js";

export interface Vector {
  id: string;
  family: string;
  model_output: string;
  expected: {
    content: string | null;
    reasoning_content: string | null;
    tool_calls: { name: string; arguments: unknown }[];
    tool_calls_raw_arguments?: string[];
  };
  config?: Record<string, unknown>;
  notes?: string;
}

export const VECTORS_PATH = new URL("../../fixtures/toolcall-vectors.jsonl", import.meta.url);

export function loadVectors(): Vector[] {
  return readFileSync(VECTORS_PATH, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Vector);
}

const THINK: ReasoningMarkers = { open: "<think>", close: "</think>" };
const MISTRAL_THINK: ReasoningMarkers = { open: "[THINK]", close: "[/THINK]" };
const GEMMA_THINK: ReasoningMarkers = { open: "<|channel>", close: "<channel|>" };

/**
 * Vector family → format and reasoning shape. `reasoningOpen` follows the
 * prompt our families build (web-llm's conv templates): Qwen3.5 and QwQ
 * pre-open `<think>`; DeepSeek-R1 distills are read as pre-opened (their
 * official template opens it, so they often omit it; mlc's `deepseek_r1_*`
 * does not, and a `<think>` they write is accepted); Qwen3,
 * Ministral-3-Reasoning and Gemma 4 emit their open marker.
 */
const FAMILIES: Record<string, { format: OutputFormat; reasoning: ReasoningMarkers | null; reasoningOpen: boolean }> = {
  any: { format: "hermes", reasoning: null, reasoningOpen: false },
  "gemma-4": { format: "gemma4", reasoning: GEMMA_THINK, reasoningOpen: false },
  "hermes|qwen2.5|qwen3": { format: "hermes", reasoning: THINK, reasoningOpen: false },
  "qwen3|qwq": { format: "hermes", reasoning: THINK, reasoningOpen: true }, // QwQ pre-opens
  "qwq|qwen3|deepseek-r1-distill": { format: "hermes", reasoning: THINK, reasoningOpen: false },
  "qwen3|hermes": { format: "hermes", reasoning: THINK, reasoningOpen: false },
  "llama3.1|llama3.2": { format: "llama-json", reasoning: null, reasoningOpen: false },
  "llama3.1": { format: "llama-json", reasoning: null, reasoningOpen: false },
  "ministral-3|mistral-v11+": { format: "ministral", reasoning: null, reasoningOpen: false },
  "ministral-3": { format: "ministral", reasoning: null, reasoningOpen: false },
  "ministral-3-reasoning": { format: "ministral", reasoning: MISTRAL_THINK, reasoningOpen: false },
  "ministral-3-reasoning|magistral": { format: "ministral", reasoning: MISTRAL_THINK, reasoningOpen: false },
  "mistral-7b-v0.3": { format: "mistral", reasoning: null, reasoningOpen: false },
  "mistral-7b-v0.3|mistral-nemo": { format: "mistral", reasoning: null, reasoningOpen: false },
  "phi-4-mini": { format: "phi4", reasoning: null, reasoningOpen: false },
  "phi-4-mini (vLLM custom template)": { format: "phi4", reasoning: null, reasoningOpen: false },
  "llama3.2-pythonic|gemma2|gemma3": { format: "pythonic", reasoning: null, reasoningOpen: false },
  "llama4-style|gemma3": { format: "pythonic", reasoning: null, reasoningOpen: false },
  qwen2: { format: "hermes", reasoning: null, reasoningOpen: false },
  "qwen3|qwen3.5": { format: "qwen-xml", reasoning: THINK, reasoningOpen: true },
  qwen3: { format: "hermes", reasoning: THINK, reasoningOpen: false },
  "qwen3.5|qwen3-coder": { format: "qwen-xml", reasoning: THINK, reasoningOpen: false },
  "qwen3.5": { format: "qwen-xml", reasoning: THINK, reasoningOpen: true },
  "deepseek-r1-distill": { format: "deepseek-r1", reasoning: THINK, reasoningOpen: true }, // read as opened: everything before </think> is reasoning (issue 15)
  "smollm2-1.7b": { format: "smollm", reasoning: null, reasoningOpen: false },
};

/** Parser options for a vector: its family's shape, adjusted by the switches its config records. */
export function optionsFor(v: Vector, expectedCalls = v.expected.tool_calls): ParserOptions {
  const family = FAMILIES[v.family];
  if (!family) throw new Error(`vector ${v.id}: no mapping for family ${v.family}`);
  const config = v.config ?? {};
  let reasoning = family.reasoning;
  let reasoningOpen = family.reasoningOpen;
  if (config.reasoning_format === "none") reasoning = null; // the request asked for raw reasoning markers in content
  if (config.thinking_forced_open === true) reasoningOpen = true;
  if (config.prompt_ends_with && String(config.prompt_ends_with).endsWith("<think>\n")) reasoningOpen = true;
  if (config.enable_thinking === true && v.family.includes("qwen3.5")) reasoningOpen = true;
  const discardReasoning = config.enable_thinking === false;
  return { format: family.format, reasoning, reasoningOpen, tools: toolsFor(v, expectedCalls), discardReasoning };
}

/**
 * The tools the request declared. Vectors name them only implicitly: every
 * expected call's tool (as our policy expects it), plus `config.tools`. Parameter schemas come from
 * `config.tool_schema` or, failing that, the JSON types of the expected
 * arguments (what a real declaration of that tool would say); Qwen3.5's XML
 * values are typed by them.
 */
export function toolsFor(v: Vector, expectedCalls = v.expected.tool_calls): FunctionTool[] {
  const byName = new Map<string, Record<string, unknown>>();
  for (const call of expectedCalls) {
    const properties: Record<string, unknown> = {};
    const schema = v.config?.tool_schema as Record<string, string> | undefined;
    if (schema) for (const [k, t] of Object.entries(schema)) properties[k] = { type: t };
    else if (call.arguments && typeof call.arguments === "object")
      for (const [k, value] of Object.entries(call.arguments as Record<string, unknown>)) properties[k] = { type: jsonType(value) };
    byName.set(call.name, { ...(byName.get(call.name) ?? {}), ...properties });
  }
  for (const name of (v.config?.tools as string[] | undefined) ?? []) if (!byName.has(name)) byName.set(name, {});
  if (byName.size === 0) byName.set("unused_tool", {});
  return [...byName].map(([name, properties]) => ({ type: "function", function: { name, parameters: { type: "object", properties } } }));
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Deterministic chunkings of a text: whole, 1 character, and seeded random sizes 1–8. */
export function chunkings(text: string, seeds = [1, 2, 3]): { label: string; chunks: string[] }[] {
  const out = [
    { label: "whole", chunks: [text] },
    { label: "1-char", chunks: Array.from(text) },
  ];
  for (const seed of seeds) {
    let state = seed * 2654435761;
    const rand = () => ((state = (state * 1103515245 + 12345) >>> 0) % 8) + 1;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; ) {
      const n = rand();
      chunks.push(text.slice(i, i + n));
      i += n;
    }
    out.push({ label: `random seed ${seed}`, chunks });
  }
  return out;
}
