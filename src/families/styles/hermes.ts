/**
 * Hermes-style JSON calls in `<tool_call>` tags: Qwen2.5, Qwen3, the Hermes
 * models, and our prompted format for families without a native one.
 */
import type { ToolCall } from "../../protocol/types.js";
import type { GrammarStyle } from "../grammar.js";
import { parametersSchema } from "../grammar.js";
import { argumentsText, pyJson } from "../json-text.js";
import { joinParts, type PromptStyle, type ToolResult } from "../shape.js";
import type { FamilyStyle } from "./style.js";

/** `<tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>`, as Qwen's and Hermes' templates write it. */
export function hermesCall(call: ToolCall): string {
  return `<tool_call>\n{"name": "${call.function.name}", "arguments": ${argumentsText(call.function.arguments)}}\n</tool_call>`;
}

/** Content, then each call on its own line (Qwen templates). */
export const hermesAssistant = (content: string, calls: ToolCall[]): string => joinParts("\n", content, ...calls.map(hermesCall));

/** `<tool_response>` blocks, one per result, joined by newlines. */
export const toolResponses = (results: ToolResult[]): string =>
  results.map((r) => `<tool_response>\n${r.content}\n</tool_response>`).join("\n");

export const hermesGrammar: GrammarStyle = {
  trigger: "<tool_call>",
  callTag: (tool) => ({
    begin: `<tool_call>\n{"name": "${tool.function.name}", "arguments": `,
    content: { type: "json_schema", json_schema: parametersSchema(tool) },
    end: "}\n</tool_call>",
  }),
};

/** Qwen2.5/Qwen3 tool block (identical in both templates). */
export const qwenToolBlock = (tools: readonly unknown[]): string =>
  "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>" +
  tools.map((t) => "\n" + pyJson(t)).join("") +
  "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

const QWEN25_DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

const qwenCommon = {
  toolPlacement: "system",
  toolBlock: (tools) => qwenToolBlock(tools),
  assistant: hermesAssistant,
  // Qwen templates put tool results in a user turn: no tool role needed.
  results: (results) => ({ role: "user", content: toolResponses(results) }),
} satisfies Partial<PromptStyle>;

/** Qwen2.5 (and Coder): the template supplies its default system text when tools come without one. */
export const qwen: FamilyStyle = {
  prompt: {
    ...qwenCommon,
    system: (app, block) => (block === undefined ? app : (app ?? QWEN25_DEFAULT_SYSTEM) + "\n\n" + block),
    historyReasoning: "keep",
  },
  grammar: hermesGrammar,
};

/** Qwen3: no default system text; reasoning of turns before the last user query is dropped. */
export const qwen3: FamilyStyle = {
  prompt: {
    ...qwenCommon,
    system: (app, block) => (block === undefined ? app : joinParts("\n\n", app, block)),
    historyReasoning: "drop-before-last-user",
  },
  grammar: hermesGrammar,
};

/** The Hermes-2-Pro/Hermes-3 template's Python type names for JSON schema types. */
function pythonType(spec: Record<string, unknown> | undefined): string {
  const basic: Record<string, string> = { string: "str", number: "float", integer: "int", boolean: "bool" };
  const type = spec?.type;
  if (typeof type === "string" && basic[type]) return basic[type];
  if (type === "array") return `list[${pythonType(spec?.items as Record<string, unknown> | undefined)}]`;
  if (type === "object") {
    const extra = spec?.additionalProperties;
    return extra !== undefined && typeof extra === "object" ? `dict[str, ${pythonType(extra as Record<string, unknown>)}]` : "dict";
  }
  if (Array.isArray(type)) return `Union[${type.map((t) => pythonType({ type: t })).join(",")}]`;
  return "Any";
}

/** One tool as the Hermes template writes it: a signature-style description, then the schema. */
function hermesTool(tool: import("../../protocol/types.js").FunctionTool): string {
  const fn = tool.function;
  const parameters = fn.parameters ?? {};
  const properties = Object.entries((parameters.properties ?? {}) as Record<string, Record<string, unknown>>);
  let description = `${fn.name}(${properties.map(([k, v]) => `${k}: ${pythonType(v)}`).join(", ")}) - ${fn.description ?? ""}\n\n`;
  if (properties.length > 0) description += "    Args:\n";
  description += properties.map(([k, v]) => `        ${k}(${pythonType(v)}): ${String(v.description ?? "").trim()}`).join("");
  const schema = properties.length === 0 ? "{}" : pyJson(parameters);
  return `{"type": "function", "function": {"name": "${fn.name}", "description": "${description}", "parameters": ${schema}}`;
}

/** The Hermes-2-Pro / Hermes-3 tool-use system text. */
export const hermesToolBlock = (tools: import("../../protocol/types.js").FunctionTool[]): string =>
  "You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. " +
  "You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions. " +
  "Here are the available tools: <tools> " +
  tools.map(hermesTool).join("\n") +
  " </tools>" +
  'Use the following pydantic model json schema for each tool call you will make: {"properties": {"name": {"title": "Name", "type": "string"}, "arguments": {"title": "Arguments", "type": "object"}}, "required": ["name", "arguments"], "title": "FunctionCall", "type": "object"}}\n' +
  "For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:\n" +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call>';

/** ChatML roles with a `tool` turn (`<|im_start|>tool`), as the Hermes templates have it. */
const CHATML_WITH_TOOL = {
  roles: { user: "<|im_start|>user", assistant: "<|im_start|>assistant", tool: "<|im_start|>tool" },
  role_templates: { user: "{user_message}", assistant: "{assistant_message}", tool: "{tool_message}" },
};

/** Hermes-2-Pro, Hermes-2-Theta, Hermes-3: own tool-use system text, results in a `tool` turn. */
export const hermes: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    toolBlock: (tools) => hermesToolBlock(tools),
    // The template renders its tool text and the app's system message as two system turns; web-llm has one.
    system: (app, block) => joinParts("\n\n", block, app) || undefined,
    assistant: hermesAssistant,
    results: (results) => ({ role: "tool", content: toolResponses(results) }),
    historyReasoning: "keep",
  },
  grammar: hermesGrammar,
  convConfig: CHATML_WITH_TOOL,
};

/**
 * Our prompted format for models without a native one: the Qwen tool block
 * (plain instructions plus JSON schemas) and `<tool_response>` results in a
 * user turn, which every conversation template accepts.
 */
export const prompted: FamilyStyle = {
  prompt: {
    ...qwenCommon,
    system: (app, block) => joinParts("\n\n", app, block) || undefined,
    historyReasoning: "keep",
  },
  grammar: hermesGrammar,
};

/** DeepSeek-R1 distills: prompted tools; the template strips reasoning from every earlier turn. */
export const deepseek: FamilyStyle = {
  prompt: { ...prompted.prompt, historyReasoning: "drop", keepGapAfterReasoning: true },
  grammar: hermesGrammar,
};
