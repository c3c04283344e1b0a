/**
 * Mistral v0.3 (`[TOOL_CALLS][{…}, …]`, `[AVAILABLE_TOOLS]`, `[TOOL_RESULTS]`)
 * and Ministral-3 2512 (`[TOOL_CALLS]name[ARGS]{…}` per call, `[THINK]` for
 * the reasoning model). Both take 9-alphanumeric call ids.
 */
import type { FunctionTool, ToolCall } from "../../protocol/types.js";
import { parametersSchema, type GrammarStyle } from "../grammar.js";
import { argumentsText, pyJson } from "../json-text.js";
import { joinParts, type PromptStyle } from "../shape.js";
import type { PromptContext } from "../types.js";
import type { FamilyStyle } from "./style.js";

/**
 * A call id as Mistral templates require it (exactly 9 alphanumerics): ours
 * already are; an app's own ids are reduced to that shape, the same way for
 * the call and its result.
 */
export function mistralId(id: string | null): string {
  if (id !== null && /^[a-zA-Z0-9]{9}$/.test(id)) return id;
  const alnum = (id ?? "").replace(/[^a-zA-Z0-9]/g, "");
  return alnum.slice(-9).padStart(9, "0");
}

/** v0.3 (and Nemo) tool list: each function's fields in order, strings unescaped as the template writes them. */
export const mistralToolBlock = (tools: FunctionTool[]): string =>
  "[AVAILABLE_TOOLS][" +
  tools
    .map((t) => {
      const fields = Object.entries(t.function)
        .filter(([k, v]) => k !== "return" && v !== undefined)
        .map(([k, v]) => (typeof v === "string" ? `"${k}": "${v}"` : `"${k}": ${pyJson(v)}`));
      return `{"type": "function", "function": {${fields.join(", ")}}}`;
    })
    .join(", ") +
  "][/AVAILABLE_TOOLS]";

const mistralCall = (call: ToolCall): string => `{"name": "${call.function.name}", "arguments": ${argumentsText(call.function.arguments)}, "id": "${mistralId(call.id)}"}`;

/**
 * v0.3 on web-llm's `mistral_default` template (`[INST] system user [/INST]`):
 * the tool list goes into the system text so it stays at a fixed place (the
 * official template moves it before the last user turn, which would defeat
 * web-llm's KV reuse); results are a `[TOOL_RESULTS]` text in a user turn
 * (that template renders `tool` exactly like `user`).
 */
export const mistral: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    toolBlock: (tools) => mistralToolBlock(tools),
    system: (app, block) => joinParts("\n\n", block, app) || undefined,
    assistant: (content, calls) => joinParts("", content, calls.length ? "[TOOL_CALLS][" + calls.map(mistralCall).join(", ") + "]" : undefined),
    results: (results) => ({
      role: "user",
      content: results.map((r) => `[TOOL_RESULTS]{"content": ${r.content}, "call_id": "${mistralId(r.callId)}"}[/TOOL_RESULTS]`).join(""),
    }),
    historyReasoning: "keep",
  },
  grammar: {
    trigger: "[TOOL_CALLS]",
    wrapper: { begin: "[TOOL_CALLS][", end: "]", separator: ", " },
    callTag: (tool) => ({
      begin: `{"name": "${tool.function.name}", "arguments": `,
      content: { type: "json_schema", json_schema: parametersSchema(tool) },
      end: "}",
    }),
  },
};

/** Ministral-3-3B-Instruct-2512's default system prompt (mlc-llm `ministral3`), dates filled in as the official template does. */
function ministralInstructSystem(now = new Date()): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const yesterday = new Date(now.getTime() - 86_400_000);
  return (
    "You are Ministral-3-3B-Instruct-2512, a Large Language Model (LLM) created by Mistral AI, a French startup headquartered in Paris.\n" +
    "You power an AI assistant called Le Chat.\n" +
    "Your knowledge base was last updated on 2023-10-01.\n" +
    `The current date is ${day(now)}.\n\n` +
    "When you're not sure about some information or when the user's request requires up-to-date or specific data, you must use the available tools to fetch the information. Do not hesitate to use tools whenever they can provide a more accurate or complete response. If no relevant tools are available, then clearly state that you don't have the information and avoid making up anything.\n" +
    'If the user\'s question is not clear, ambiguous, or does not provide enough context for you to accurately answer the question, you do not try to answer it right away and you rather ask the user to clarify their request (e.g. "What are some good restaurants around me?" => "Where are you?" or "When is the next flight to Tokyo" => "Where do you travel from?").\n' +
    `You are always very attentive to dates, in particular you try to resolve dates (e.g. "yesterday" is ${day(yesterday)}) and when asked about information at specific dates, you discard information that is at another date.\n` +
    "You follow these instructions in all languages, and always respond to the user in the language they use or request.\n" +
    "Next sections describe the capabilities that you have.\n\n" +
    "# WEB BROWSING INSTRUCTIONS\n\n" +
    "You cannot perform any web search or access internet to open URLs, links etc. If it seems like the user is expecting you to do so, you clarify the situation and ask the user to copy paste the text directly in the chat.\n\n" +
    "# MULTI-MODAL INSTRUCTIONS\n\n" +
    "You have the ability to read images, but you cannot generate images. You also cannot transcribe audio files or videos.\n" +
    "You cannot read nor transcribe audio files or videos.\n\n" +
    "# TOOL CALLING INSTRUCTIONS\n\n" +
    "You may have access to tools that you can use to fetch information or perform actions. You must use these tools in the following situations:\n\n" +
    "1. When the request requires up-to-date information.\n" +
    "2. When the request requires specific data that you do not have in your knowledge base.\n" +
    "3. When the request involves actions that you cannot perform without tools.\n\n" +
    "Always prioritize using tools to provide the most accurate and helpful response. If tools are not available, inform the user that you cannot perform the requested action at the moment."
  );
}

/** Ministral-3-Reasoning's default system prompt (mlc-llm `ministral3_reasoning`): it asks for `[THINK]…[/THINK]`. */
export const MINISTRAL_REASONING_SYSTEM =
  "# HOW YOU SHOULD THINK AND ANSWER\n\n" +
  "First draft your thinking process (inner monologue) until you arrive at a response. Format your response using Markdown, and use LaTeX for any mathematical equations. Write both your thoughts and the response in the same language as the input.\n\n" +
  "Your thinking process must follow the template below:[THINK]Your thoughts or/and draft, like working through an exercise on scratch paper. Be as casual and as long as you want until you are confident to generate the response to the user.[/THINK]Here, provide a self-contained response.";

/**
 * web-llm's `ministral3` templates write the system text inside
 * `[SYSTEM_PROMPT]…[/SYSTEM_PROMPT]` and leave the tool slot after it empty.
 * We render the whole system block ourselves (tools right after it, as the
 * official template) and make the template print it verbatim.
 */
const MINISTRAL_CONV = { system_template: "{system_message}", system_message: "" };

const ministralCall = (call: ToolCall): string => `[TOOL_CALLS]${call.function.name}[ARGS]${argumentsText(call.function.arguments)}`;

function ministralPrompt(defaultSystem: (context: PromptContext) => string | undefined): PromptStyle {
  return {
    toolPlacement: "system",
    toolBlock: (tools) => "[AVAILABLE_TOOLS]" + pyJson(tools) + "[/AVAILABLE_TOOLS]",
    system: (app, block, context) => {
      const text = app ?? defaultSystem(context);
      return joinParts("", text === undefined ? undefined : `[SYSTEM_PROMPT]${text}[/SYSTEM_PROMPT]`, block) || undefined;
    },
    assistant: (content, calls) => content + calls.map(ministralCall).join(""),
    // The template wraps each result in [TOOL_RESULTS]…[/TOOL_RESULTS]; joined so that one turn renders them all.
    results: (results) => ({ role: "tool", content: results.map((r) => r.content).join("[/TOOL_RESULTS][TOOL_RESULTS]") }),
    historyReasoning: "keep",
  };
}

const ministralGrammar: GrammarStyle = {
  trigger: "[TOOL_CALLS]",
  callTag: (tool) => ({
    begin: `[TOOL_CALLS]${tool.function.name}[ARGS]`,
    content: { type: "json_schema", json_schema: parametersSchema(tool) },
    end: "",
  }),
};

export const ministral: FamilyStyle = {
  prompt: ministralPrompt(() => ministralInstructSystem()),
  grammar: ministralGrammar,
  convConfig: MINISTRAL_CONV,
};

/** The reasoning model: its `[THINK]` instructions are the default system text; thinking off leaves them out. */
export const ministralReasoning: FamilyStyle = {
  prompt: ministralPrompt((context) => (context.thinking ? MINISTRAL_REASONING_SYSTEM : undefined)),
  grammar: ministralGrammar,
  convConfig: MINISTRAL_CONV,
};
