/**
 * Stored Responses items → the chat face's messages: the conversion run on
 * every request (its input) and on every save (its output joins the stored
 * history).
 */
import { invalidParam } from "../api-error.js";
import type { NormalizedMessage } from "../normalized.js";
import type { ContentPart, InputAudioPart, ToolCall } from "../types.js";
import { customCallArguments } from "../custom-tools.js";
import type { InputItem, OutputItem } from "./types.js";

/**
 * Items → the chat face's messages. Consecutive assistant-side items (reasoning,
 * assistant messages, function calls) form one assistant turn whose content is
 * the message texts joined and whose tool calls are the function calls, so a
 * turn sent back as items keys the KV-reuse memory exactly as the chat message
 * would. Reasoning is not replayed as text (the memory restores the raw reply
 * when the reasoning sent back is the reasoning it produced).
 */
export function itemsToMessages(items: ReadonlyArray<InputItem | OutputItem>, param: string, callNames = new Map<string, string>()): NormalizedMessage[] {
  const out: NormalizedMessage[] = [];
  let turn: NormalizedMessage | null = null;
  const assistant = () => {
    if (!turn) {
      turn = { role: "assistant", content: "", toolCalls: [], toolCallId: null, name: null };
      out.push(turn);
    }
    return turn;
  };
  items.forEach((item, index) => {
    switch (item.type) {
      case "reasoning": {
        // The reasoning text, when sent back, must match what the memory holds for the raw reply to be restored.
        const sent = (item as { content?: Array<{ text: string }> }).content;
        const m = assistant();
        if (sent) m.reasoning = (m.reasoning ?? "") + sent.map((p) => p.text).join("");
        return;
      }
      case "function_call": {
        const call = item as { call_id: string; name: string; arguments: string };
        const toolCall: ToolCall = { id: call.call_id, type: "function", function: { name: call.name, arguments: call.arguments } };
        callNames.set(call.call_id, call.name);
        assistant().toolCalls.push(toolCall);
        return;
      }
      case "custom_tool_call": {
        // Back to the model as the function call it was rendered as (protocol/custom-tools.ts).
        const call = item as { call_id: string; name: string; input: string };
        callNames.set(call.call_id, call.name);
        assistant().toolCalls.push({ id: call.call_id, type: "function", function: { name: call.name, arguments: customCallArguments(call.input) } });
        return;
      }
      case "mcp_call": {
        // The model called an MCP tool and read its result (or error): a call and its answer, as for a function tool.
        const call = item as { id: string; name: string; arguments: string; output: string | null; error: string | null };
        callNames.set(call.id, call.name);
        assistant().toolCalls.push({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } });
        turn = null;
        out.push({ role: "tool", content: call.error !== null ? `Error: ${call.error}` : (call.output ?? ""), toolCallId: call.id, toolCalls: [], name: call.name });
        return;
      }
      // A listing gives the model its tools (host/responses-mcp.ts), not text; an approval request or answer is played as the call it leads to.
      case "mcp_list_tools":
      case "mcp_approval_request":
      case "mcp_approval_response":
        return;
      case "custom_tool_call_output":
      case "function_call_output": {
        turn = null;
        const result = item as { call_id: string; output: string | Array<{ text: string }> };
        const content = typeof result.output === "string" ? result.output : result.output.map((p) => p.text).join("\n");
        out.push({ role: "tool", content, toolCallId: result.call_id, toolCalls: [], name: callNames.get(result.call_id) ?? null });
        return;
      }
      case "message": {
        const message = item as { role: string; content: Array<{ type: string; text?: string; refusal?: string; image_url?: string; input_audio?: InputAudioPart["input_audio"] }> };
        if (message.role === "assistant") {
          const m = assistant();
          m.content = (m.content as string) + message.content.map((p) => p.text ?? p.refusal ?? "").join("");
          return;
        }
        turn = null;
        const role = message.role === "user" ? "user" : "system";
        out.push({ role, content: partsContent(message.content), toolCalls: [], toolCallId: null, name: null, param: `${param}[${index}]` });
        return;
      }
      default:
        throw invalidParam(param, `Items of type \`${item.type}\` cannot be read by the model here.`);
    }
  });
  return out;
}

/** Text parts joined (as the chat face flattens text-only arrays); with images or audio, chat content parts. */
function partsContent(parts: Array<{ type: string; text?: string; image_url?: string; detail?: string; input_audio?: InputAudioPart["input_audio"] }>): string | ContentPart[] {
  if (parts.every((p) => p.type !== "input_image" && p.type !== "input_audio")) return parts.map((p) => p.text ?? "").join("\n");
  return parts.map((p): ContentPart => {
    if (p.type === "input_image") return { type: "image_url", image_url: { url: p.image_url as string } };
    if (p.type === "input_audio") return { type: "input_audio", input_audio: p.input_audio! };
    return { type: "text", text: p.text ?? "" };
  });
}
