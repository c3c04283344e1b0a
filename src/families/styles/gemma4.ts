/**
 * Gemma 4: tool declarations `<|tool>declaration:f{…}<tool|>` in the system
 * turn, calls `<|tool_call>call:f{k:<|"|>v<|"|>}<tool_call|>` (not JSON:
 * strings delimited by the `<|"|>` token, keys bare and sorted), results
 * `<|tool_response>response:f{value:…}<tool_response|>`, thinking switched on
 * by `<|think|>` at the top of the system turn.
 */
import type { FunctionTool, ToolCall } from "../../protocol/types.js";
import type { GrammarStyle } from "../grammar.js";
import { argumentsValue } from "../json-text.js";
import type { ToolResult } from "../shape.js";
import type { FamilyStyle } from "./style.js";
import { gemmaArgumentsGrammar } from "./gemma4-grammar.js";

const Q = '<|"|>';
type Json = Record<string, unknown>;

/** Jinja's `dictsort`: entries by key, case-insensitively. */
const dictsort = (o: Json): [string, unknown][] =>
  Object.entries(o).sort(([a], [b]) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));

/** The template's `format_argument`. */
export function gemmaValue(value: unknown, escapeKeys = true): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return Q + value + Q;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return "[" + value.map((v) => gemmaValue(v, escapeKeys)).join(",") + "]";
  if (typeof value === "object") return "{" + dictsort(value as Json).map(([k, v]) => (escapeKeys ? Q + k + Q : k) + ":" + gemmaValue(v, escapeKeys)).join(",") + "}";
  return String(value);
}

const upper = (v: unknown) => (typeof v === "string" ? v.toUpperCase() : "");
const requiredList = (items: unknown) => "required:[" + (Array.isArray(items) ? items.map((i) => Q + String(i) + Q).join(",") : "") + "]";

/** The template's `format_parameters`. */
function formatParameters(properties: Json, filterKeys = false): string {
  const standard = ["description", "type", "properties", "required", "nullable"];
  const out: string[] = [];
  for (const [key, raw] of dictsort(properties)) {
    if (filterKeys && standard.includes(key)) continue;
    const value = (raw ?? {}) as Json;
    const parts: string[] = [];
    if (value.description) parts.push(`description:${Q}${String(value.description)}${Q}`);
    const type = upper(value.type);
    if (type === "STRING" && value.enum) parts.push("enum:" + gemmaValue(value.enum));
    if (type === "ARRAY" && value.items && typeof value.items === "object" && Object.keys(value.items).length > 0) {
      const items = value.items as Json;
      const inner: string[] = [];
      for (const [ik, iv] of dictsort(items)) {
        if (iv === null || iv === undefined) continue;
        if (ik === "properties") inner.push("properties:{" + (typeof iv === "object" ? formatParameters(iv as Json) : "") + "}");
        else if (ik === "required") inner.push(requiredList(iv));
        else if (ik === "type") inner.push("type:" + (typeof iv === "string" ? gemmaValue(iv.toUpperCase()) : gemmaValue((iv as unknown[]).map(upper))));
        else inner.push(ik + ":" + gemmaValue(iv));
      }
      parts.push("items:{" + inner.join(",") + "}");
    }
    if (value.nullable) parts.push("nullable:true");
    if (type === "OBJECT") {
      if (value.properties && typeof value.properties === "object") parts.push("properties:{" + formatParameters(value.properties as Json) + "}");
      else parts.push("properties:{" + formatParameters(value, true) + "}");
      if (Array.isArray(value.required) && value.required.length > 0) parts.push(requiredList(value.required));
    }
    parts.push(`type:${Q}${type}${Q}}`);
    out.push(key + ":{" + parts.join(","));
  }
  return out.join(",");
}

/** The template's `format_function_declaration`. */
export function gemmaDeclaration(tool: FunctionTool): string {
  const fn = tool.function;
  let text = `declaration:${fn.name}{description:${Q}${fn.description ?? ""}${Q}`;
  const params = fn.parameters as Json | undefined;
  if (params && Object.keys(params).length > 0) {
    text += ",parameters:{";
    if (params.properties && Object.keys(params.properties as Json).length > 0) text += "properties:{" + formatParameters(params.properties as Json) + "},";
    if (Array.isArray(params.required) && params.required.length > 0) text += requiredList(params.required) + ",";
    if (params.type) text += `type:${Q}${upper(params.type)}${Q}}`;
  }
  return text + "}";
}

export const gemmaCall = (call: ToolCall): string =>
  `<|tool_call>call:${call.function.name}{` +
  dictsort(argumentsValue(call.function.arguments)).map(([k, v]) => k + ":" + gemmaValue(v, false)).join(",") +
  "}<tool_call|>";

/** A result: tool output is a string in the OpenAI API, so it is the template's non-mapping case. */
const gemmaResult = (r: ToolResult): string => `<|tool_response>response:${r.name || "unknown"}{value:${gemmaValue(r.content, false)}}<tool_response|>`;

const grammar: GrammarStyle = {
  trigger: "<|tool_call>call:",
  callTag: (tool) => ({
    begin: `<|tool_call>call:${tool.function.name}{`,
    content: { type: "grammar", grammar: gemmaArgumentsGrammar(tool.function.parameters) },
    end: "}<tool_call|>",
  }),
};

export const gemma4: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    toolBlock: (tools) => tools.map((t) => "<|tool>" + gemmaDeclaration(t) + "<tool|>").join(""),
    system: (app, block, context) => {
      const text = (context.thinking ? "<|think|>\n" : "") + (app?.trim() ?? "") + (block ?? "");
      return text === "" ? undefined : text;
    },
    // Calls come before any text in a model turn.
    assistant: (content, calls) => calls.map(gemmaCall).join("") + content,
    // The template continues the model turn after results; the chat API needs them in a turn of their own.
    results: (results) => ({ role: "user", content: results.map(gemmaResult).join("") }),
    historyReasoning: "drop-before-last-user",
  },
  grammar,
};
