/**
 * Tools that run in the page. Each is an OpenAI function tool (what the model
 * sees) plus the code that runs when the model calls it. Results go back to
 * the model as `role: "tool"` messages.
 */
import type { FunctionTool } from "../../src/index.js";

export interface PageTool {
  definition: FunctionTool;
  run(args: Record<string, unknown>): unknown;
}

export const pageTools: PageTool[] = [
  {
    definition: {
      type: "function",
      function: {
        name: "calculator",
        description: "Evaluate an arithmetic expression with + - * / ^ and parentheses.",
        parameters: {
          type: "object",
          properties: { expression: { type: "string", description: "e.g. (2+3)*4" } },
          required: ["expression"],
        },
      },
    },
    run: ({ expression }) => ({ result: evaluate(String(expression ?? "")) }),
  },
  {
    definition: {
      type: "function",
      function: {
        name: "current_datetime",
        description: "The current date and time, in the given IANA time zone (default: the user's).",
        parameters: { type: "object", properties: { timezone: { type: "string", description: "e.g. Europe/Paris" } } },
      },
    },
    run: ({ timezone }) => {
      const timeZone = typeof timezone === "string" && timezone ? timezone : Intl.DateTimeFormat().resolvedOptions().timeZone;
      return { timezone: timeZone, now: new Date().toLocaleString("en-GB", { timeZone, dateStyle: "full", timeStyle: "long" }), iso: new Date().toISOString() };
    },
  },
  {
    definition: {
      type: "function",
      function: {
        name: "convert_units",
        description: "Convert a value between units of length, mass or temperature (m, km, mi, ft, in, kg, lb, g, oz, C, F, K).",
        parameters: {
          type: "object",
          properties: { value: { type: "number" }, from: { type: "string" }, to: { type: "string" } },
          required: ["value", "from", "to"],
        },
      },
    },
    run: ({ value, from, to }) => ({ value: convert(Number(value), String(from), String(to)), unit: String(to) }),
  },
  {
    definition: {
      type: "function",
      function: {
        name: "search_docs",
        description: "Search a small built-in knowledge base about WebGPU and running LLMs in the browser.",
        parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      },
    },
    run: ({ query }) => ({ results: search(String(query ?? "")) }),
  },
];

/** Runs a call; a failing tool returns `{ error }` so the model can react to it. */
export function runTool(name: string, argumentsJson: string): unknown {
  const tool = pageTools.find((t) => t.definition.function.name === name);
  if (!tool) return { error: `Unknown tool ${name}.` };
  try {
    const args = argumentsJson.trim() ? (JSON.parse(argumentsJson) as Record<string, unknown>) : {};
    return tool.run(args);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

// ── calculator: a recursive-descent parser (never eval) ─────────────────────

export function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/^()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  function primary(): number {
    const token = take();
    if (token === "(") {
      const value = sum();
      if (take() !== ")") throw new Error("Missing closing parenthesis.");
      return value;
    }
    if (token === "-") return -primary();
    if (token !== undefined && /^\d/.test(token)) return Number(token);
    throw new Error(`Unexpected ${token ?? "end of expression"}.`);
  }
  function power(): number {
    const base = primary();
    if (peek() === "^") {
      take();
      return base ** power();
    }
    return base;
  }
  function product(): number {
    let value = power();
    while (peek() === "*" || peek() === "/") value = take() === "*" ? value * power() : value / power();
    return value;
  }
  function sum(): number {
    let value = product();
    while (peek() === "+" || peek() === "-") value = take() === "+" ? value + product() : value - product();
    return value;
  }
  const value = sum();
  if (at < tokens.length) throw new Error(`Unexpected ${tokens[at]}.`);
  return value;
}

// ── unit conversion ──────────────────────────────────────────────────────────

const TO_BASE: Record<string, { kind: string; factor: number }> = {
  m: { kind: "length", factor: 1 },
  km: { kind: "length", factor: 1000 },
  mi: { kind: "length", factor: 1609.344 },
  ft: { kind: "length", factor: 0.3048 },
  in: { kind: "length", factor: 0.0254 },
  g: { kind: "mass", factor: 0.001 },
  kg: { kind: "mass", factor: 1 },
  lb: { kind: "mass", factor: 0.45359237 },
  oz: { kind: "mass", factor: 0.028349523125 },
};

function convert(value: number, from: string, to: string): number {
  const temperature = ["C", "F", "K"];
  if (temperature.includes(from.toUpperCase()) && temperature.includes(to.toUpperCase())) {
    const celsius = { C: value, F: ((value - 32) * 5) / 9, K: value - 273.15 }[from.toUpperCase() as "C" | "F" | "K"];
    return { C: celsius, F: (celsius * 9) / 5 + 32, K: celsius + 273.15 }[to.toUpperCase() as "C" | "F" | "K"];
  }
  const a = TO_BASE[from.toLowerCase()];
  const b = TO_BASE[to.toLowerCase()];
  if (!a || !b) throw new Error(`Unknown unit: ${!a ? from : to}.`);
  if (a.kind !== b.kind) throw new Error(`Cannot convert ${a.kind} to ${b.kind}.`);
  return (value * a.factor) / b.factor;
}

// ── search over a small built-in dataset ─────────────────────────────────────

const DOCS = [
  { title: "WebGPU", text: "WebGPU is the browser API for GPU compute and graphics. Chrome and Edge ship it; Firefox and Safari are adding it." },
  { title: "shader-f16", text: "The shader-f16 feature lets shaders use 16-bit floats. Models quantized as q4f16 need it; q4f32 variants run without it." },
  { title: "Quantization", text: "q4f16_1 stores weights in 4 bits with 16-bit activations; q4f32_1 uses 32-bit activations and more memory." },
  { title: "KV cache", text: "The key/value cache holds the processed prompt. Reusing it across turns skips prefilling the shared history: see cached_tokens." },
  { title: "IndexedDB", text: "Model weights are stored in IndexedDB so a model downloads once and loads offline afterwards." },
  { title: "Tool calls", text: "Models emit tool calls in their own format (Hermes tags for Qwen3); the library turns them into OpenAI tool_calls." },
];

function search(query: string): { title: string; text: string }[] {
  const words = query.toLowerCase().split(/\W+/).filter((w) => w.length > 1);
  return DOCS.map((doc) => ({ doc, score: words.filter((w) => `${doc.title} ${doc.text}`.toLowerCase().includes(w)).length }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, 3)
    .map((r) => r.doc);
}
