/** Qwen3.5: XML tool calls `<tool_call>\n<function=f>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>`. */
import type { ToolCall } from "../../protocol/types.js";
import { parametersSchema, type GrammarStyle } from "../grammar.js";
import { argumentsValue, pyJson } from "../json-text.js";
import type { FamilyStyle } from "./style.js";
import { toolResponses } from "./hermes.js";

/** The Qwen3.5 template's tool block. */
export const qwen35ToolBlock = (tools: readonly unknown[]): string =>
  "# Tools\n\nYou have access to the following functions:\n\n<tools>" +
  tools.map((t) => "\n" + pyJson(t)).join("") +
  "\n</tools>" +
  "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>";

/** A parameter value as the template writes it: objects and arrays as JSON, the rest as text. */
const parameterText = (value: unknown): string =>
  value !== null && typeof value === "object" ? pyJson(value) : value === null ? "null" : String(value);

export function qwenXmlCall(call: ToolCall): string {
  const args = Object.entries(argumentsValue(call.function.arguments));
  return (
    `<tool_call>\n<function=${call.function.name}>\n` +
    args.map(([k, v]) => `<parameter=${k}>\n${parameterText(v)}\n</parameter>\n`).join("") +
    "</function>\n</tool_call>"
  );
}

/** Content, a blank line when there is any, then the calls one per line (the template's spacing). */
function assistant(content: string, calls: ToolCall[]): string {
  const rendered = calls.map(qwenXmlCall).join("\n");
  if (calls.length === 0) return content;
  return content.trim() ? content + "\n\n" + rendered : content + rendered;
}

/**
 * The tool schema for xgrammar's qwen_xml_parameter. web-xgrammar 0.1.27
 * writes a string `enum`/`const` there as JSON string literals (quotes
 * included: `<parameter=unit>"celsius"</parameter>`), which is not what
 * Qwen3.5 writes; a top-level string enum/const becomes the equivalent
 * `pattern`, with the newlines Qwen3.5 puts around values allowed.
 */
function xmlSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (!properties) return schema;
  const escape = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const fixed = Object.fromEntries(
    Object.entries(properties).map(([k, p]) => {
      const values = Array.isArray(p.enum) ? p.enum : p.const !== undefined ? [p.const] : undefined;
      if (!values || !values.every((v): v is string => typeof v === "string")) return [k, p];
      const { enum: _enum, const: _const, ...rest } = p;
      return [k, { ...rest, type: "string", pattern: `^\\n?(${values.map(escape).join("|")})\\n?$` }];
    }),
  );
  return { ...schema, properties: fixed };
}

const grammar: GrammarStyle = {
  trigger: "<tool_call>\n<function=",
  callTag: (tool) => ({
    begin: `<tool_call>\n<function=${tool.function.name}>\n`,
    // xgrammar's qwen_xml_parameter takes `<parameter=k>\nv\n</parameter>` items separated by newlines, without a trailing one.
    content: { type: "qwen_xml_parameter", json_schema: xmlSchema(parametersSchema(tool)) },
    end: "\n</function>\n</tool_call>",
  }),
};

export const qwen35: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    toolBlock: (tools) => qwen35ToolBlock(tools),
    // Tools first, then the app's system text (the reverse of Qwen3).
    system: (app, block) => (block === undefined ? app : app ? block + "\n\n" + app : block),
    assistant,
    results: (results) => ({ role: "user", content: toolResponses(results) }),
    historyReasoning: "drop-before-last-user",
  },
  grammar,
};
