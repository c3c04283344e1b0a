/** SmolLM2-1.7B: a JSON list of calls in one `<tool_call>` tag, taught by its model card's system prompt. */
import type { ToolCall } from "../../protocol/types.js";
import { parametersSchema } from "../grammar.js";
import { argumentsText, pyJson } from "../json-text.js";
import { joinParts } from "../shape.js";
import type { FamilyStyle } from "./style.js";
import { toolResponses } from "./hermes.js";

/** HF SmolLM2-1.7B-Instruct `instructions_function_calling.md` system prompt (trailing spaces as published). */
const smollmToolBlock = (tools: readonly unknown[]): string =>
  "You are an expert in composing functions. You are given a question and a set of possible functions. \n" +
  "Based on the question, you will need to make one or more function/tool calls to achieve the purpose. \n" +
  "If none of the functions can be used, point it out and refuse to answer. \n" +
  "If the given question lacks the parameters required by the function, also point it out.\n\n" +
  "You have access to the following tools:\n" +
  `<tools>${pyJson(tools)}</tools>\n\n` +
  "The output MUST strictly adhere to the following format, and NO other text MUST be included.\n" +
  "The example format is as follows. Please make sure the parameter type is correct. If no function call is needed, please make the tool calls an empty list '[]'.\n" +
  "<tool_call>[\n" +
  '{"name": "func_name1", "arguments": {"argument1": "value1", "argument2": "value2"}},\n' +
  "... (more tool calls as required)\n" +
  "]</tool_call>";

const smollmCall = (call: ToolCall): string => `{"name": "${call.function.name}", "arguments": ${argumentsText(call.function.arguments)}}`;

export const smollm: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    toolBlock: (tools) => smollmToolBlock(tools),
    system: (app, block) => joinParts("\n\n", block, app) || undefined,
    assistant: (content, calls) => joinParts("\n", content, calls.length ? "<tool_call>[" + calls.map(smollmCall).join(", ") + "]</tool_call>" : undefined),
    // The model card does not say; `<tool_response>` in a user turn is the ChatML convention it was tuned next to.
    results: (results) => ({ role: "user", content: toolResponses(results) }),
    historyReasoning: "keep",
  },
  grammar: {
    trigger: "<tool_call>",
    wrapper: { begin: "<tool_call>[", end: "]</tool_call>", separator: ", " },
    callTag: (tool) => ({
      begin: `{"name": "${tool.function.name}", "arguments": `,
      content: { type: "json_schema", json_schema: parametersSchema(tool) },
      end: "}",
    }),
  },
};
