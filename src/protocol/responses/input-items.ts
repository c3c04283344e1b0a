/**
 * The `input` of a `POST /responses` body, item by item, into stored items:
 * each checked (every invalid value → 400 naming its `param`), given an id,
 * and `item_reference`s resolved through the store's lookup. Compaction items
 * stand for the turns they hold. The conversion of items into the chat face's
 * messages is items.ts.
 */
import { checkTextDepth } from "../json-depth.js";
import { invalidParam } from "../api-error.js";
import { expandCompactionItems } from "./compact.js";
import { normalizeAudioPart } from "../audio-part.js";
import type { NormalizedMessage } from "../normalized.js";
import { checkImageDataUrl, describe, isAbsent, isObject } from "../params.js";
import { randomId } from "../ids.js";
import { noToolCallFound } from "../tool-pairing.js";
import { hosted } from "./hosted.js";
import { validateMcpItem, type McpListToolsItem } from "./mcp-items.js";
import type { FunctionCallItem, FunctionCallOutputItem, InputItem, OutputItem } from "./types.js";

/** What the store answers for `previous_response_id` and `item_reference`. */
export interface ResponsesLookup {
  /** The conversation a stored response ends (its inputs, without instructions, and its output), or undefined. */
  history(responseId: string): NormalizedMessage[] | undefined;
  /** A stored input or output item by id. */
  item(itemId: string): InputItem | OutputItem | undefined;
  /** A stored response's output and the `mcp` listings its conversation has (for the `mcp` tool: host/responses-mcp.ts). */
  previous?(responseId: string): { output: OutputItem[]; mcpListings: McpListToolsItem[] } | undefined;
}

/** Every `function_call_output` answers a `function_call` of this input or of the chain (`chainCalls`), as the hosted API requires. */
export function checkOutputsAnswerCalls(items: readonly InputItem[], chainCalls: ReadonlyMap<string, string>): void {
  const calls = new Set(chainCalls.keys());
  for (const item of items) if (item.type === "function_call" || item.type === "custom_tool_call") calls.add((item as FunctionCallItem).call_id);
  for (const item of items) {
    const callId = (item as FunctionCallOutputItem).call_id;
    if ((item.type === "function_call_output" || item.type === "custom_tool_call_output") && !calls.has(callId)) throw noToolCallFound(callId);
  }
}

export const newItemId = (prefix: string) => `${prefix}_${randomId(24)}`;

/** `input` as stored items (ids assigned), item references resolved. */
export function validateInput(v: unknown, lookup: ResponsesLookup): InputItem[] {
  if (isAbsent(v)) return [];
  if (typeof v === "string") return [{ type: "message", id: newItemId("msg"), status: "completed", role: "user", content: [{ type: "input_text", text: v }] }];
  if (!Array.isArray(v)) throw invalidParam("input", `\`input\` must be a string or an array of items, got ${describe(v)}.`, "invalid_type");
  // Compaction items (from /responses/compact) stand for the turns they hold.
  return expandCompactionItems(v).map((item, i) => validateItem(item, `input[${i}]`, lookup));
}

function validateItem(item: unknown, param: string, lookup: ResponsesLookup): InputItem {
  if (!isObject(item)) throw invalidParam(param, `\`${param}\` must be an item object, got ${describe(item)}.`, "invalid_type");
  // A message may leave out `type` (the "easy input message").
  const type = isAbsent(item.type) && typeof item.role === "string" ? "message" : item.type;
  const id = typeof item.id === "string" && item.id !== "" ? item.id : undefined;
  switch (type) {
    case "message":
      return validateMessageItem(item, param, id);
    case "function_call": {
      const callId = requiredString(item, "call_id", param);
      const name = requiredString(item, "name", param);
      const args = item.arguments;
      if (typeof args !== "string") throw invalidParam(`${param}.arguments`, `\`${param}.arguments\` must be the call's arguments as a JSON string.`, isAbsent(args) ? "missing_required_parameter" : "invalid_type");
      checkTextDepth(args, `${param}.arguments`);
      return { type: "function_call", id: id ?? newItemId("fc"), call_id: callId, name, arguments: args, status: "completed" };
    }
    case "custom_tool_call": {
      const input = item.input;
      if (typeof input !== "string") throw invalidParam(`${param}.input`, `\`${param}.input\` must be the call's input text.`, isAbsent(input) ? "missing_required_parameter" : "invalid_type");
      return { type: "custom_tool_call", id: id ?? newItemId("ctc"), call_id: requiredString(item, "call_id", param), name: requiredString(item, "name", param), input };
    }
    case "custom_tool_call_output": {
      const output = item.output;
      if (typeof output !== "string" && !Array.isArray(output)) throw invalidParam(`${param}.output`, `\`${param}.output\` must be a string or an array of input_text parts.`, isAbsent(output) ? "missing_required_parameter" : "invalid_type");
      const parts = typeof output === "string" ? output : output.map((part, j) => {
        const p = `${param}.output[${j}]`;
        if (!isObject(part) || part.type !== "input_text" || typeof part.text !== "string") throw invalidParam(p, `\`${p}\` must be {"type": "input_text", "text": ...}: a local model reads tool results as text.`);
        return { type: "input_text" as const, text: part.text };
      });
      return { type: "custom_tool_call_output", id: id ?? newItemId("ctco"), call_id: requiredString(item, "call_id", param), output: parts };
    }
    case "function_call_output": {
      const callId = requiredString(item, "call_id", param);
      const output = item.output;
      if (typeof output === "string") return { type: "function_call_output", id: id ?? newItemId("fco"), call_id: callId, output, status: "completed" };
      if (!Array.isArray(output)) throw invalidParam(`${param}.output`, `\`${param}.output\` must be a string or an array of input_text parts.`, isAbsent(output) ? "missing_required_parameter" : "invalid_type");
      const parts = output.map((part, j) => {
        const p = `${param}.output[${j}]`;
        if (!isObject(part) || part.type !== "input_text" || typeof part.text !== "string") throw invalidParam(p, `\`${p}\` must be {"type": "input_text", "text": ...}: a local model reads tool results as text.`);
        return { type: "input_text" as const, text: part.text };
      });
      return { type: "function_call_output", id: id ?? newItemId("fco"), call_id: callId, output: parts, status: "completed" };
    }
    case "reasoning": {
      const summary = validateTextParts(item.summary ?? [], `${param}.summary`, "summary_text");
      const content = isAbsent(item.content) ? undefined : validateTextParts(item.content, `${param}.content`, "reasoning_text");
      return {
        type: "reasoning",
        id: id ?? newItemId("rs"),
        summary: summary.map((text) => ({ type: "summary_text", text })),
        ...(content ? { content: content.map((text) => ({ type: "reasoning_text" as const, text })) } : {}),
        ...(typeof item.encrypted_content === "string" ? { encrypted_content: item.encrypted_content } : {}),
      };
    }
    case "item_reference": {
      const ref = requiredString(item, "id", param);
      const found = lookup.item(ref);
      if (!found) throw invalidParam(`${param}.id`, `No stored item with id '${ref}': item references resolve against responses this client stored (store: true) and still holds.`, "item_not_found");
      return structuredClone(found) as InputItem;
    }
    default: {
      const mcp = validateMcpItem(item, type, param, id);
      if (mcp) return mcp;
      if (typeof type === "string" && /^(web_search|file_search|computer|code_interpreter|image_generation|local_shell)/.test(type)) throw hosted(`${param}.type`, `The hosted item type \`${type}\``);
      throw invalidParam(`${param}.type`, `\`${param}.type\` must be "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning", "item_reference" or an \`mcp\` tool's item, got ${JSON.stringify(type)}.`);
    }
  }
}

function requiredString(item: Record<string, unknown>, key: string, param: string): string {
  const v = item[key];
  if (typeof v !== "string" || v === "") throw invalidParam(`${param}.${key}`, `\`${param}.${key}\` is required: a non-empty string.`, isAbsent(v) ? "missing_required_parameter" : "invalid_type");
  return v;
}

function validateTextParts(v: unknown, param: string, type: string): string[] {
  if (!Array.isArray(v)) throw invalidParam(param, `\`${param}\` must be an array of {"type": "${type}", "text": ...}.`, "invalid_type");
  return v.map((part, j) => {
    if (!isObject(part) || part.type !== type || typeof part.text !== "string") throw invalidParam(`${param}[${j}]`, `\`${param}[${j}]\` must be {"type": "${type}", "text": ...}.`);
    return part.text;
  });
}

const ROLES = new Set(["user", "system", "developer", "assistant"]);

function validateMessageItem(item: Record<string, unknown>, param: string, id: string | undefined): InputItem {
  const role = item.role;
  if (typeof role !== "string" || !ROLES.has(role)) throw invalidParam(`${param}.role`, `\`${param}.role\` must be one of user, system, developer, assistant (got ${JSON.stringify(role)}).`);
  const r = role as "user" | "system" | "developer" | "assistant";
  const content = item.content;
  const textType = r === "assistant" ? "output_text" : "input_text";
  const makeText = (text: string) => (textType === "output_text" ? { type: "output_text" as const, text, annotations: [] } : { type: "input_text" as const, text });
  if (typeof content === "string") return { type: "message", id: id ?? newItemId("msg"), status: "completed", role: r, content: [makeText(content)] };
  if (!Array.isArray(content)) throw invalidParam(`${param}.content`, `\`${param}.content\` must be a string or an array of content parts.`, isAbsent(content) ? "missing_required_parameter" : "invalid_type");
  const parts = content.map((part, j) => {
    const p = `${param}.content[${j}]`;
    if (!isObject(part)) throw invalidParam(p, `\`${p}\` must be a content part object.`, "invalid_type");
    switch (part.type) {
      case "input_text":
      case "output_text":
      case "text":
        if (typeof part.text !== "string") throw invalidParam(`${p}.text`, `\`${p}.text\` must be a string.`, "invalid_type");
        return makeText(part.text);
      case "refusal":
        if (r !== "assistant" || typeof part.refusal !== "string") throw invalidParam(p, `\`${p}\`: refusal parts belong to assistant messages and carry a \`refusal\` string.`);
        return { type: "refusal" as const, refusal: part.refusal };
      case "input_image": {
        if (r !== "user") throw invalidParam(`${p}.type`, `\`${p}\`: images are accepted only in user messages.`);
        if (!isAbsent(part.file_id)) throw hosted(`${p}.file_id`, "Images by `file_id` (the hosted Files API)");
        const url = part.image_url;
        if (typeof url !== "string") throw invalidParam(`${p}.image_url`, `\`${p}.image_url\` must be a data URL string.`, "invalid_type");
        checkImageDataUrl(url, `${p}.image_url`);
        const detail = part.detail === "low" || part.detail === "high" || part.detail === "auto" ? part.detail : undefined;
        return { type: "input_image" as const, image_url: url, ...(detail ? { detail } : {}) };
      }
      case "input_audio":
        if (r !== "user") throw invalidParam(`${p}.type`, `\`${p}\`: audio is accepted only in user messages.`);
        return normalizeAudioPart(part, p);
      case "input_file":
        throw hosted(`${p}.type`, "File inputs (`input_file`)");
      default:
        throw invalidParam(`${p}.type`, `\`${p}.type\` must be "input_text", "input_image", "input_audio" (user) or "output_text" (assistant), got ${JSON.stringify(part.type)}.`);
    }
  });
  return { type: "message", id: id ?? newItemId("msg"), status: "completed", role: r, content: parts };
}

