/**
 * Custom tools (OpenAI's free-form tools: the model writes one text `input`,
 * optionally constrained by a regex or Lark grammar), for both faces.
 *
 * A family renders a custom tool as a function tool with one string
 * parameter, `input`, and its call as that function's call with arguments
 * `{"input": "…"}`: every family already has a call format for that, so the
 * model sees tools the way its template teaches them, and the parser needs
 * nothing new. The grammar constrains the JSON-string-escaped input inside
 * those arguments (or, where a family writes parameter values as raw text,
 * as Qwen3.5's XML does, the raw input), so the decoded `input` is in the
 * grammar's language. Calls come back to the app as custom calls
 * (parsers/custom-calls.ts decodes the input as it streams).
 */
import { invalidParam } from "./api-error.js";
import { isAbsent, isObject, TOOL_NAME } from "./params.js";
import type { FunctionTool } from "./types.js";
import { appGrammarEbnfs, readAppGrammar, type AppGrammar } from "./app-grammar.js";

/** A custom tool's input format as the app declared it. */
export type CustomToolFormat = { type: "text" } | ({ type: "grammar" } & AppGrammar);

/** What the pipeline keeps of a custom tool: its grammar compiled for each way a family writes the input. */
export interface CustomToolSpec {
  name: string;
  /** EBNF for the call's content; absent: unconstrained text. */
  grammar?: {
    /** The arguments object `{"input": "<the input, JSON-escaped>"}` (canonical separators). */
    json: string;
    /** Qwen3.5's `<parameter=input>\n<the input, as is>\n</parameter>`. */
    xmlParameter: string;
  };
}

/** Custom tools of a request, by name. */
export type CustomTools = Record<string, CustomToolSpec>;

/** The arguments a custom call carries in a family's function-call format. */
export function customCallArguments(input: string): string {
  return JSON.stringify({ input });
}

/**
 * One custom tool: `at` names the object holding name/description/format
 * (`tools[0].custom` in chat, `tools[0]` in Responses); `names` collects tool
 * names across both kinds. Chat nests a grammar as `format.grammar`
 * `{syntax, definition}`; Responses puts them on `format` itself.
 */
export function validateCustomTool(tool: unknown, at: string, names: Set<string>): { tool: FunctionTool; spec: CustomToolSpec; format: CustomToolFormat; description: string | null } {
  if (!isObject(tool)) throw invalidParam(at, `\`${at}\` must be an object with \`name\` and optional \`description\` and \`format\`.`, "invalid_type");
  if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) throw invalidParam(`${at}.name`, `\`${at}.name\` must be 1–64 characters of a-z, A-Z, 0-9, underscores, dots or dashes.`);
  if (names.has(tool.name)) throw invalidParam(`${at}.name`, `Tool name \`${tool.name}\` is declared twice.`);
  names.add(tool.name);
  if (!isAbsent(tool.description) && typeof tool.description !== "string") throw invalidParam(`${at}.description`, `\`${at}.description\` must be a string.`, "invalid_type");
  const description = typeof tool.description === "string" ? tool.description : null;
  const format = readFormat(tool.format, `${at}.format`);
  const spec: CustomToolSpec = { name: tool.name };
  if (format.type === "grammar") {
    const param = isObject(tool.format) && isObject(tool.format.grammar) ? `${at}.format.grammar` : `${at}.format`;
    // Parsed once, written twice: the forms differ only in how the text is escaped and wrapped.
    spec.grammar = appGrammarEbnfs(format, param, {
      json: { jsonString: true, wrap: { before: '{"input": "', after: '"}' } },
      xmlParameter: { wrap: { before: "<parameter=input>\n", after: "\n</parameter>" } },
    });
  }
  const inputDescription =
    format.type === "text"
      ? "The tool's input, as free text."
      : `The tool's input: text matching this ${format.syntax === "lark" ? "Lark grammar (start rule `start`)" : "regular expression (the whole input)"}:\n${format.definition}`;
  return {
    tool: {
      type: "function",
      function: {
        name: tool.name,
        ...(description !== null ? { description } : {}),
        parameters: { type: "object", properties: { input: { type: "string", description: inputDescription } }, required: ["input"] },
      },
    },
    spec,
    format,
    description,
  };
}

function readFormat(v: unknown, param: string): CustomToolFormat {
  if (isAbsent(v)) return { type: "text" };
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be {"type": "text"} or {"type": "grammar", "syntax": "lark" | "regex", "definition": ...}.`, "invalid_type");
  if (v.type === "text") return { type: "text" };
  if (v.type !== "grammar") throw invalidParam(`${param}.type`, `\`${param}.type\` must be "text" or "grammar".`);
  const grammar = isObject(v.grammar) ? readAppGrammar(v.grammar, `${param}.grammar`) : readAppGrammar(v, param);
  return { type: "grammar", ...grammar };
}
