/**
 * Llama-3.1/3.2 JSON calls (`{"name": f, "parameters": {…}}` as the whole
 * reply, tools in the first user message, results in an `ipython` turn), and
 * the pythonic variant Meta documents for Llama-3.2 (`[f(a=1), g()]`).
 */
import type { FunctionTool, ToolCall } from "../../protocol/types.js";
import { parametersSchema, type GrammarStyle } from "../grammar.js";
import { argumentsText, argumentsValue, pyJson } from "../json-text.js";
import type { PromptStyle, ToolResult } from "../shape.js";
import type { FamilyStyle } from "./style.js";

/** The system text the Llama-3.1 template writes when tools are present (its default date). */
const LLAMA_TOOL_SYSTEM = "Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";

export const llamaToolBlock = (tools: FunctionTool[]): string =>
  "Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n" +
  'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' +
  "Do not use variables.\n\n" +
  tools.map((t) => pyJson(t, 4) + "\n\n").join("");

export const llamaCall = (call: ToolCall): string => `{"name": "${call.function.name}", "parameters": ${argumentsText(call.function.arguments)}}`;

/**
 * A result as the template writes it: `tojson` of the content. A JSON text is
 * written as that JSON value (what callers passing objects get); any other
 * text becomes a JSON string, as the template does with strings.
 */
function ipythonContent(content: string): string {
  try {
    return pyJson(JSON.parse(content));
  } catch {
    return pyJson(content);
  }
}

// The template renders results in an `ipython` turn, one per message; web-llm's llama-3_1 template maps role `tool` there.
const ipythonResults = (results: ToolResult[]) => ({ role: "tool" as const, content: results.map((r) => ipythonContent(r.content)).join("\n") });

const LLAMA_TOOL_ROLE = {
  roles: { user: "<|start_header_id|>user", assistant: "<|start_header_id|>assistant", tool: "<|start_header_id|>ipython" },
  role_templates: { user: "{user_message}", assistant: "{assistant_message}", tool: "{tool_message}" },
};

const llamaPrompt: PromptStyle = {
  toolPlacement: "first-user",
  toolBlock: (tools) => llamaToolBlock(tools),
  system: (app, block, context) => (context.tools.length === 0 ? app : LLAMA_TOOL_SYSTEM + (app?.trim() ?? "")),
  // The template writes only the call when there is one (and allows one): the reply is the JSON object.
  assistant: (content, calls) => (calls.length === 0 ? content : calls.map(llamaCall).join("\n")),
  results: ipythonResults,
  historyReasoning: "keep",
};

export const llama31: FamilyStyle = {
  prompt: { ...llamaPrompt, userPrefixSeparator: "" },
  grammar: {
    trigger: '{"name": ',
    callTag: (tool) => ({
      begin: `{"name": "${tool.function.name}", "parameters": `,
      content: { type: "json_schema", json_schema: parametersSchema(tool) },
      end: "}",
    }),
  },
  convConfig: LLAMA_TOOL_ROLE,
};

/** A Python literal for a JSON value (strings double-quoted, True/False/None). */
function pyLiteral(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number" || typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "[" + value.map(pyLiteral).join(", ") + "]";
  return "{" + Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pyLiteral(v)}`).join(", ") + "}";
}

export const pythonicCall = (call: ToolCall): string =>
  `${call.function.name}(${Object.entries(argumentsValue(call.function.arguments)).map(([k, v]) => `${k}=${pyLiteral(v)}`).join(", ")})`;

/** Meta's Llama-3.2 pythonic tool prompt (llama-models prompt_format, "zero-shot function calling"). */
const pythonicToolBlock = (tools: FunctionTool[]): string =>
  "You are an expert in composing functions. You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. " +
  "If none of the function can be used, point it out. If the given question lacks the parameters required by the function, also point it out. You should only return the function call in tools call sections.\n\n" +
  "If you decide to invoke any of the function(s), you MUST put it in the format of [func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]\n" +
  "You SHOULD NOT include any other text in the response.\n\n" +
  "Here is a list of functions in JSON format that you can invoke.\n\n" +
  pyJson(tools.map((t) => t.function), 4) +
  "\n";

/**
 * Pythonic calls have no JSON arguments for a structural tag to hold: the
 * grammar only pins the function name (arguments are free text up to `)`).
 */
const pythonicGrammar: GrammarStyle = {
  trigger: "[",
  callTag: (tool) => ({ begin: `[${tool.function.name}(`, content: { type: "regex", pattern: "[^()]*" }, end: ")]" }),
};

export const pythonic: FamilyStyle = {
  prompt: {
    ...llamaPrompt,
    toolPlacement: "system",
    toolBlock: (tools) => pythonicToolBlock(tools),
    system: (app, block, context) => (context.tools.length === 0 ? app : LLAMA_TOOL_SYSTEM + [block, app?.trim()].filter(Boolean).join("\n\n")),
    assistant: (content, calls) => (calls.length === 0 ? content : "[" + calls.map(pythonicCall).join(", ") + "]"),
  },
  grammar: pythonicGrammar,
  convConfig: LLAMA_TOOL_ROLE,
};
