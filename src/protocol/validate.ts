/**
 * Request validation and normalization: a raw body (anything) in, a
 * `NormalizedRequest` out, or an `ApiError` 400 naming the offending `param`
 * with a message that says what is allowed. Unknown fields are ignored.
 */
import { validatePrediction } from "./prediction.js";
import { checkTextDepth, checkValueDepth } from "./json-depth.js";
import { ApiError, invalidParam } from "./api-error.js";
import { normalizeAudioPart } from "./audio-part.js";
import {
  ANY_OBJECT_SCHEMA, checkFunctionFields, checkImageDataUrl, checkSchemaDepth, describe, effortParam, isAbsent, isObject, MAX_CACHE_KEY_LENGTH, MAX_IMAGES, MAX_N, MAX_USER_LENGTH,
  optionalBoolean, optionalInteger, optionalNumber, optionalString, validateLogitBias, validateStop, validateStreamOptions, type Body,
} from "./params.js";
import type {
  ChatMessage,
  ContentPart,
  FunctionTool,
  ProviderPreferences,
  ReasoningEffort,
  ToolCall,
  ToolChoice,
} from "./types.js";
import type { EngineResponseFormat } from "./normalized.js";
import { customCallArguments, validateCustomTool, type CustomTools } from "./custom-tools.js";
import { checkToolPairing } from "./tool-pairing.js";
import { checkSchemaGrammar } from "./grammar-refusal.js";
import { appGrammarEbnf, readAppGrammar } from "./app-grammar.js";

export const MAX_TOP_LOGPROBS = 30;
/** Deepest nesting accepted in a JSON Schema (tool parameters, response_format): deeper ones overflow the stack when serialized. */
export { MAX_SCHEMA_DEPTH } from "./params.js";

/** The normalized request's types live in normalized.ts (files that only name them import it); re-exported here as before. */
export type { NormalizedMessage, NormalizedRequest } from "./normalized.js";
import type { NormalizedMessage, NormalizedRequest } from "./normalized.js";

/** The request checked field by field, then as a whole for nesting (json-depth.ts): what no field check reached cannot be a stack overflow later. */
export function validateRequest(raw: unknown): NormalizedRequest {
  const request = validateFields(raw);
  checkValueDepth(raw);
  return request;
}

function validateFields(raw: unknown): NormalizedRequest {
  if (!isObject(raw)) {
    throw new ApiError({
      status: 400,
      code: "invalid_request_body",
      message: `The request body must be a JSON object, got ${describe(raw)}.`,
    });
  }
  const body = raw as Body;

  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw invalidParam("model", "`model` is required and must be a non-empty string (a catalog id such as `Qwen3-0.6B-q4f16_1-MLC` or an alias such as `Qwen/Qwen3-0.6B`).", isAbsent(model) ? "missing_required_parameter" : "invalid_type");
  }

  refuseUnservableParams(body);
  const messages = validateMessages(body.messages);
  checkToolPairing(messages);
  const stream = optionalBoolean(body, "stream") ?? false;
  const includeUsage = validateStreamOptions(body, stream);
  const n = optionalInteger(body, "n", 1, MAX_N) ?? 1;
  if (stream && n > 1) throw invalidParam("n", "`n` greater than 1 is not supported with `stream: true`; send separate requests instead.");

  const maxTokens = optionalInteger(body, "max_completion_tokens", 1) ?? optionalInteger(body, "max_tokens", 1);
  // Validate max_tokens even when max_completion_tokens wins, so a bad value is never silently accepted.
  optionalInteger(body, "max_tokens", 1);

  const topLogprobs = validateLogprobs(body);
  const declared = validateTools(body.tools);
  const { tools, toolChoice } = validateToolChoice(body.tool_choice, declared.tools);
  const parallelToolCalls = optionalBoolean(body, "parallel_tool_calls") ?? true;
  const continueFinalMessage = messages[messages.length - 1].role === "assistant";
  // Validated even when a continuation forces thinking off, so a bad value is never silently accepted.
  const reasoningEffort = validateReasoning(body);
  // Both checked, so a bad `user` is refused even when `prompt_cache_key` wins.
  const promptCacheKey = optionalString(body, "prompt_cache_key", MAX_CACHE_KEY_LENGTH);
  const user = optionalString(body, "user", MAX_USER_LENGTH);

  return {
    model,
    messages,
    maxTokens,
    stream,
    includeUsage,
    temperature: optionalNumber(body, "temperature", 0, 2),
    top_p: optionalNumber(body, "top_p", 0, 1),
    top_k: optionalInteger(body, "top_k", -1),
    min_p: optionalNumber(body, "min_p", 0, 1),
    presence_penalty: optionalNumber(body, "presence_penalty", -2, 2),
    frequency_penalty: optionalNumber(body, "frequency_penalty", -2, 2),
    repetition_penalty: optionalPositive(body, "repetition_penalty"),
    logit_bias: validateLogitBias(body.logit_bias),
    seed: optionalInteger(body, "seed", Number.MIN_SAFE_INTEGER),
    stop: validateStop(body.stop),
    topLogprobs,
    tools,
    ...(Object.keys(declared.customTools).length > 0 ? { customTools: declared.customTools } : {}),
    toolChoice,
    parallelToolCalls,
    responseFormat: validateResponseFormat(body.response_format),
    reasoningEffort: continueFinalMessage ? "none" : reasoningEffort,
    cacheKey: promptCacheKey ?? user,
    provider: validateProvider(body.provider),
    n,
    continueFinalMessage,
    // Most requests predict nothing: prediction.ts (Predicted Outputs) is consulted only for one that does.
    prediction: isAbsent(body.prediction) ? undefined : validatePrediction(body.prediction),
  };
}

// ── what the API defines but a local model cannot serve ─────────────────────

/** Typed in (protocol/types.ts) so SDK-typed bodies compile; a 400 naming each here. */
function refuseUnservableParams(body: Body): void {
  if (!isAbsent(body.functions)) {
    throw invalidParam("functions", "`functions` (legacy function calling) is not supported; declare them as `tools` of `type: \"function\"` instead.", "unsupported_parameter");
  }
  if (!isAbsent(body.function_call)) {
    throw invalidParam("function_call", "`function_call` (legacy function calling) is not supported; use `tool_choice` with `tools` instead.", "unsupported_parameter");
  }
  if (!isAbsent(body.audio)) {
    throw invalidParam("audio", "Audio output (`audio`) is not available: local models here produce text only.", "unsupported_parameter");
  }
  const modalities = body.modalities;
  if (!isAbsent(modalities) && (!Array.isArray(modalities) || modalities.some((m) => m !== "text"))) {
    throw invalidParam("modalities", "`modalities` must be [\"text\"]: local models here produce text only.", "unsupported_parameter");
  }
  if (!isAbsent(body.web_search_options)) {
    throw invalidParam("web_search_options", "Web search (`web_search_options`) is a hosted tool and is not available on a local model.", "unsupported_parameter");
  }
}

// ── scalars ────────────────────────────────────────────────────────────────

function optionalPositive(body: Body, param: string): number | undefined {
  const v = body[param];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw invalidParam(param, `\`${param}\` must be a number greater than 0, got ${JSON.stringify(v)}.`);
  return v;
}

function validateLogprobs(body: Body): number | undefined {
  const logprobs = optionalBoolean(body, "logprobs");
  const top = optionalInteger(body, "top_logprobs", 0, MAX_TOP_LOGPROBS);
  if (top !== undefined && top > 0) return top;
  if (logprobs) return top ?? 0;
  return undefined;
}

function validateReasoning(body: Body): ReasoningEffort | undefined {
  let effort = effortParam(body.reasoning_effort, "reasoning_effort");
  const reasoning = body.reasoning;
  if (!isAbsent(reasoning)) {
    if (!isObject(reasoning)) throw invalidParam("reasoning", "`reasoning` must be an object such as {\"effort\": \"low\"} or {\"enabled\": false}.", "invalid_type");
    const nested = effortParam(reasoning.effort, "reasoning.effort"); // checked even when reasoning_effort wins
    effort ??= nested;
    if (!isAbsent(reasoning.enabled)) {
      if (typeof reasoning.enabled !== "boolean") throw invalidParam("reasoning.enabled", "`reasoning.enabled` must be a boolean.", "invalid_type");
      if (!reasoning.enabled) effort = "none";
      else if (effort === undefined) effort = "medium";
    }
  }
  const kwargs = body.chat_template_kwargs;
  if (!isAbsent(kwargs)) {
    if (!isObject(kwargs)) throw invalidParam("chat_template_kwargs", "`chat_template_kwargs` must be an object such as {\"enable_thinking\": false}.", "invalid_type");
    const enable = kwargs.enable_thinking;
    if (!isAbsent(enable)) {
      if (typeof enable !== "boolean") throw invalidParam("chat_template_kwargs.enable_thinking", "`chat_template_kwargs.enable_thinking` must be a boolean.", "invalid_type");
      if (!enable) effort = "none";
      else if (effort === undefined || effort === "none") effort = "medium";
    }
  }
  return effort;
}

function validateProvider(v: unknown): ProviderPreferences | undefined {
  if (isAbsent(v)) return undefined;
  if (!isObject(v)) throw invalidParam("provider", "`provider` must be an object.", "invalid_type");
  const features = v.require_features;
  if (!isAbsent(features) && (!Array.isArray(features) || features.some((f) => typeof f !== "string"))) {
    throw invalidParam("provider.require_features", "`provider.require_features` must be an array of WebGPU feature names such as \"shader-f16\".", "invalid_type");
  }
  const minMemory = v.min_memory_mb;
  if (!isAbsent(minMemory) && (typeof minMemory !== "number" || minMemory < 0)) {
    throw invalidParam("provider.min_memory_mb", "`provider.min_memory_mb` must be a non-negative number.", "invalid_type");
  }
  for (const key of ["allow_fallbacks", "require_local"] as const) {
    if (!isAbsent(v[key]) && typeof v[key] !== "boolean") throw invalidParam(`provider.${key}`, `\`provider.${key}\` must be a boolean.`, "invalid_type");
  }
  return v as ProviderPreferences;
}

// ── response_format ────────────────────────────────────────────────────────

function validateResponseFormat(v: unknown): EngineResponseFormat | undefined {
  if (isAbsent(v)) return undefined;
  if (!isObject(v)) throw invalidParam("response_format", "`response_format` must be an object such as {\"type\": \"json_object\"}.", "invalid_type");
  switch (v.type) {
    case "text":
      return undefined;
    case "json_object":
      return { type: "json_object", schema: ANY_OBJECT_SCHEMA };
    case "json_schema": {
      const spec = v.json_schema;
      if (!isObject(spec)) throw invalidParam("response_format.json_schema", "`response_format.json_schema` must be an object with a `schema`.", "invalid_type");
      const schema = spec.schema;
      if (isAbsent(schema)) return { type: "json_object", schema: ANY_OBJECT_SCHEMA };
      if (!isObject(schema)) throw invalidParam("response_format.json_schema.schema", "`response_format.json_schema.schema` must be a JSON Schema object.", "invalid_type");
      checkSchemaDepth(schema, "response_format.json_schema.schema");
      checkSchemaGrammar(schema, "response_format.json_schema.schema");
      return { type: "json_object", schema: JSON.stringify(schema) };
    }
    case "grammar":
      // A library extension: the app's own regex or Lark grammar (docs/grammars.md).
      return { type: "grammar", grammar: appGrammarEbnf(readAppGrammar(v, "response_format"), "response_format") };
    default:
      throw invalidParam("response_format.type", "`response_format.type` must be \"text\", \"json_object\", \"json_schema\" or \"grammar\".");
  }
}

// ── tools ──────────────────────────────────────────────────────────────────

/** Function tools and custom tools (as functions with one `input` string: protocol/custom-tools.ts). */
function validateTools(v: unknown): { tools: FunctionTool[]; customTools: CustomTools } {
  const customTools: CustomTools = {};
  if (isAbsent(v)) return { tools: [], customTools };
  if (!Array.isArray(v)) throw invalidParam("tools", "`tools` must be an array of {\"type\": \"function\", \"function\": {...}} objects.", "invalid_type");
  const names = new Set<string>();
  const tools = v.map((tool, i) => {
    const param = `tools[${i}]`;
    if (isObject(tool) && tool.type === "custom") {
      const custom = validateCustomTool(tool.custom, `${param}.custom`, names);
      customTools[custom.spec.name] = custom.spec;
      return custom.tool;
    }
    if (!isObject(tool) || tool.type !== "function" || !isObject(tool.function)) {
      throw invalidParam(param, `\`${param}\` must be {"type": "function", "function": {"name": ..., "parameters": {...}}}.`);
    }
    const fn = tool.function;
    checkFunctionFields(fn, `${param}.function`, names);
    return {
      type: "function",
      function: {
        name: fn.name as string,
        ...(typeof fn.description === "string" ? { description: fn.description } : {}),
        parameters: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} },
        // false renders as absent (as on the Responses face): the prompt, and its cached prefix, are the same.
        ...(fn.strict === true ? { strict: true } : {}),
      },
    } satisfies FunctionTool;
  });
  return { tools, customTools };
}

function validateToolChoice(v: unknown, tools: FunctionTool[]): { tools: FunctionTool[]; toolChoice: ToolChoice } {
  if (isAbsent(v)) return { tools, toolChoice: tools.length > 0 ? "auto" : "none" };
  if (v === "auto" || v === "none" || v === "required") {
    if (v === "required" && tools.length === 0) throw invalidParam("tool_choice", "`tool_choice: \"required\"` needs at least one tool in `tools`.");
    return { tools, toolChoice: v };
  }
  if (isObject(v) && v.type === "function" && isObject(v.function) && typeof v.function.name === "string") {
    const name = v.function.name;
    if (!tools.some((t) => t.function.name === name)) {
      throw invalidParam("tool_choice", `\`tool_choice\` names the function \`${name}\`, which is not declared in \`tools\`.`);
    }
    return { tools, toolChoice: { type: "function", function: { name } } };
  }
  if (isObject(v) && v.type === "allowed_tools") return allowedTools(v.allowed_tools, tools);
  if (isObject(v) && v.type === "custom" && isObject(v.custom) && typeof v.custom.name === "string") {
    const name = v.custom.name;
    if (!tools.some((t) => t.function.name === name)) throw invalidParam("tool_choice", `\`tool_choice\` names the custom tool \`${name}\`, which is not declared in \`tools\`.`);
    return { tools, toolChoice: { type: "function", function: { name } } };
  }
  throw invalidParam("tool_choice", "`tool_choice` must be \"auto\", \"none\", \"required\", {\"type\": \"function\", \"function\": {\"name\": ...}} or {\"type\": \"allowed_tools\", ...}.");
}

/**
 * `allowed_tools`: the model may call only the listed tools (all stay declared
 * for the hosted API's prompt caching). Here the model is shown the allowed ones
 * only, which is what it may call; `mode` becomes the tool choice.
 */
function allowedTools(spec: unknown, tools: FunctionTool[]): { tools: FunctionTool[]; toolChoice: ToolChoice } {
  const param = "tool_choice.allowed_tools";
  if (!isObject(spec) || (spec.mode !== "auto" && spec.mode !== "required") || !Array.isArray(spec.tools)) {
    throw invalidParam(param, `\`${param}\` must be {"mode": "auto" | "required", "tools": [{"type": "function", "function": {"name": ...}}, ...]}.`);
  }
  const names = new Set<string>();
  spec.tools.forEach((entry: unknown, i: number) => {
    const p = `${param}.tools[${i}]`;
    const name =
      isObject(entry) && entry.type === "function" && isObject(entry.function) ? entry.function.name : isObject(entry) && entry.type === "custom" && isObject(entry.custom) ? entry.custom.name : undefined;
    if (typeof name !== "string") throw invalidParam(p, `\`${p}\` must be {"type": "function", "function": {"name": ...}}.`);
    if (!tools.some((t) => t.function.name === name)) throw invalidParam(p, `\`${p}\` names the function \`${name}\`, which is not declared in \`tools\`.`);
    names.add(name);
  });
  const allowed = tools.filter((t) => names.has(t.function.name));
  if (allowed.length === 0 && spec.mode === "required") throw invalidParam(param, `\`${param}\` with mode "required" needs at least one tool.`);
  return { tools: allowed, toolChoice: allowed.length === 0 ? "none" : spec.mode };
}

// ── messages ───────────────────────────────────────────────────────────────

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

function validateMessages(v: unknown): NormalizedMessage[] {
  if (isAbsent(v)) throw invalidParam("messages", "`messages` is required: an array of {role, content} objects.", "missing_required_parameter");
  if (!Array.isArray(v)) throw invalidParam("messages", `\`messages\` must be an array, got ${describe(v)}.`, "invalid_type");
  if (v.length === 0) throw invalidParam("messages", "`messages` must contain at least one message.");
  let images = 0;
  const out = v.map((m, i) => {
    const message = validateMessage(m, i);
    if (Array.isArray(message.content)) images += message.content.filter((p) => p.type === "image_url").length;
    return message;
  });
  if (images > MAX_IMAGES) {
    throw new ApiError({ status: 413, param: "messages", code: "too_many_images", message: `A request may carry at most ${MAX_IMAGES} images, got ${images}.` });
  }
  return out;
}

function validateMessage(m: unknown, i: number): NormalizedMessage {
  const param = `messages[${i}]`;
  if (!isObject(m)) throw invalidParam(param, `\`${param}\` must be an object with \`role\` and \`content\`, got ${describe(m)}.`, "invalid_type");
  const role = m.role;
  if (role === "function") {
    throw invalidParam(`${param}.role`, `\`${param}\` uses the legacy \`function\` role, which is not supported; send the result as {"role": "tool", "tool_call_id": ..., "content": ...}.`, "unsupported_value");
  }
  if (typeof role !== "string" || !ROLES.has(role)) {
    throw invalidParam(`${param}.role`, `\`${param}.role\` must be one of system, user, assistant, tool (got ${JSON.stringify(role)}).`);
  }
  const name = isAbsent(m.name) ? null : m.name;
  if (name !== null && typeof name !== "string") throw invalidParam(`${param}.name`, `\`${param}.name\` must be a string.`, "invalid_type");

  switch (role) {
    case "system":
    case "developer":
      return { role: "system", content: textContent(m.content, `${param}.content`, true), toolCalls: [], toolCallId: null, name };
    case "user":
      return { role: "user", content: userContent(m.content, `${param}.content`), toolCalls: [], toolCallId: null, name, param };
    case "tool": {
      if (typeof m.tool_call_id !== "string" || m.tool_call_id === "") {
        throw invalidParam(`${param}.tool_call_id`, `\`${param}.tool_call_id\` is required on tool messages: the id of the call this message answers.`, "missing_required_parameter");
      }
      return { role: "tool", content: textContent(m.content, `${param}.content`, true), toolCalls: [], toolCallId: m.tool_call_id, name };
    }
    default: {
      if (!isAbsent(m.audio)) throw invalidParam(`${param}.audio`, `\`${param}.audio\` (a previous audio reply) is not supported: local models here take text only.`, "unsupported_parameter");
      if (!isAbsent(m.function_call)) {
        throw invalidParam(`${param}.function_call`, `\`${param}.function_call\` (legacy function calling) is not supported; send the call in \`tool_calls\`.`, "unsupported_parameter");
      }
      const toolCalls = validateToolCalls(m.tool_calls, `${param}.tool_calls`);
      let content = isAbsent(m.content) ? "" : textContent(m.content, `${param}.content`, true, true);
      // A refusal sent back (hosted replies carry it instead of content) is what the assistant said.
      if (content === "" && typeof m.refusal === "string" && m.refusal !== "") content = m.refusal;
      if (!isAbsent(m.refusal) && typeof m.refusal !== "string") throw invalidParam(`${param}.refusal`, `\`${param}.refusal\` must be a string.`, "invalid_type");
      if (content === "" && toolCalls.length === 0 && isAbsent(m.content) && isAbsent(m.refusal)) {
        throw invalidParam(`${param}.content`, `\`${param}.content\` is required unless the assistant message has \`tool_calls\`.`, "missing_required_parameter");
      }
      const reasoning = typeof m.reasoning_content === "string" ? m.reasoning_content : typeof m.reasoning === "string" ? m.reasoning : undefined;
      return { role: "assistant", content, toolCalls, toolCallId: null, name, ...(reasoning === undefined ? {} : { reasoning }) };
    }
  }
}

/** Text-only content: a string, or an array of text parts joined (and refusal parts, in assistant messages). */
function textContent(v: unknown, param: string, required: boolean, refusals = false): string {
  if (typeof v === "string") return v;
  if (isAbsent(v)) {
    if (required) throw invalidParam(param, `\`${param}\` is required: a string or an array of text parts.`, "missing_required_parameter");
    return "";
  }
  if (!Array.isArray(v)) throw invalidParam(param, `\`${param}\` must be a string or an array of text parts, got ${describe(v)}.`, "invalid_type");
  return v
    .map((part, j) => {
      if (refusals && isObject(part) && part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
      if (!isObject(part) || part.type !== "text" || typeof part.text !== "string") {
        throw invalidParam(`${param}[${j}]`, `\`${param}[${j}]\` must be a text part {"type": "text", "text": "..."}; images are accepted only in user messages.`);
      }
      return part.text;
    })
    .join("\n");
}

function userContent(v: unknown, param: string): string | ContentPart[] {
  if (typeof v === "string") return v;
  if (isAbsent(v)) throw invalidParam(param, `\`${param}\` is required on user messages.`, "missing_required_parameter");
  if (!Array.isArray(v)) throw invalidParam(param, `\`${param}\` must be a string or an array of content parts, got ${describe(v)}.`, "invalid_type");
  if (v.length === 0) throw invalidParam(param, `\`${param}\` must not be an empty array.`);
  const parts = v.map((part, j): ContentPart => {
    const p = `${param}[${j}]`;
    if (!isObject(part)) throw invalidParam(p, `\`${p}\` must be a content part object.`, "invalid_type");
    if (part.type === "text") {
      if (typeof part.text !== "string") throw invalidParam(`${p}.text`, `\`${p}.text\` must be a string.`, "invalid_type");
      return { type: "text", text: part.text };
    }
    if (part.type === "image_url") {
      const image = part.image_url;
      const url = isObject(image) ? image.url : undefined;
      if (typeof url !== "string") throw invalidParam(`${p}.image_url.url`, `\`${p}.image_url.url\` must be a string.`, "invalid_type");
      checkImageDataUrl(url, `${p}.image_url.url`);
      return { type: "image_url", image_url: { url } };
    }
    if (part.type === "input_audio") return normalizeAudioPart(part, p);
    if (part.type === "file") {
      throw invalidParam(`${p}.type`, `\`${p}\` is a file part (\`file\`), which is not supported: there is no file store; send the text, images as data URIs, or audio as \`input_audio\`.`, "unsupported_content_type");
    }
    throw invalidParam(`${p}.type`, `\`${p}.type\` must be "text", "image_url" or "input_audio" (got ${JSON.stringify(part.type)}).`);
  });
  // Text-only arrays are flattened: web-llm accepts arrays only for models that take images or audio.
  return parts.every((part) => part.type === "text") ? parts.map((part) => (part as { text: string }).text).join("\n") : parts;
}

function validateToolCalls(v: unknown, param: string): ToolCall[] {
  if (isAbsent(v)) return [];
  if (!Array.isArray(v)) throw invalidParam(param, `\`${param}\` must be an array.`, "invalid_type");
  return v.map((call, j) => {
    const p = `${param}[${j}]`;
    if (isObject(call) && call.type === "custom") {
      // A custom call goes back to the model as the function call it was rendered as (protocol/custom-tools.ts).
      const custom = call.custom;
      if (!isObject(custom) || typeof custom.name !== "string" || typeof custom.input !== "string") {
        throw invalidParam(p, `\`${p}\` must be {"id", "type": "custom", "custom": {"name", "input"}}.`);
      }
      return { id: typeof call.id === "string" ? call.id : `call_${j}`, type: "function" as const, function: { name: custom.name, arguments: customCallArguments(custom.input) } };
    }
    if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== "string") {
      throw invalidParam(p, `\`${p}\` must be {"id", "type": "function", "function": {"name", "arguments"}}.`);
    }
    const args = call.function.arguments;
    if (!isAbsent(args) && typeof args !== "string") {
      throw invalidParam(`${p}.function.arguments`, `\`${p}.function.arguments\` must be a JSON string.`, "invalid_type");
    }
    if (typeof args === "string") checkTextDepth(args, `${p}.function.arguments`);
    return {
      id: typeof call.id === "string" ? call.id : `call_${j}`,
      type: "function",
      function: { name: call.function.name, arguments: typeof args === "string" ? args : "{}" },
    };
  });
}
