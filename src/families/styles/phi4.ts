/** Phi-4-mini: tools in the system turn as `<|tool|>[…]<|/tool|>`, calls `<|tool_call|>[…]<|/tool_call|>`. */
import type { ToolCall } from "../../protocol/types.js";
import { parametersSchema } from "../grammar.js";
import { argumentsText, pyJson } from "../json-text.js";
import { joinParts } from "../shape.js";
import type { FamilyStyle } from "./style.js";

/** The system text of Microsoft's Phi-4-mini tool-calling example, used when tools come without one. */
const PHI4_DEFAULT_SYSTEM = "You are a helpful assistant with some tools.";

const phi4Call = (call: ToolCall): string => `{"name": "${call.function.name}", "arguments": ${argumentsText(call.function.arguments)}}`;

export const phi4: FamilyStyle = {
  prompt: {
    toolPlacement: "system",
    // The model card passes the function objects themselves as a JSON list.
    toolBlock: (tools) => "<|tool|>" + pyJson(tools.map((t) => t.function)) + "<|/tool|>",
    system: (app, block) => (block === undefined ? app : (app ?? PHI4_DEFAULT_SYSTEM) + block),
    assistant: (content, calls) => joinParts("", content, calls.length ? "<|tool_call|>[" + calls.map(phi4Call).join(", ") + "]<|/tool_call|>" : undefined),
    // No official result format; `<|tool_response|>` is the vocabulary's token for it (llama.cpp's template uses it). web-llm's phi-3 template has no tool role.
    results: (results) => ({ role: "user", content: results.map((r) => "<|tool_response|>" + r.content).join("\n") }),
    historyReasoning: "keep",
  },
  grammar: {
    trigger: "<|tool_call|>",
    wrapper: { begin: "<|tool_call|>[", end: "]<|/tool_call|>", separator: ", " },
    callTag: (tool) => ({
      begin: `{"name": "${tool.function.name}", "arguments": `,
      content: { type: "json_schema", json_schema: parametersSchema(tool) },
      end: "}",
    }),
  },
};
