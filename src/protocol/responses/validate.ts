/**
 * Validation and normalization of a `POST /responses` body into the same
 * NormalizedRequest the chat face produces (so the rest of the pipeline —
 * family shaping, grammar, parsers, KV-reuse memory — is shared), plus what
 * the Response object echoes. Every invalid value → 400 naming its `param`,
 * as protocol/validate.ts does for chat. Hosted-only features → 400 saying
 * they are not available on a local model.
 *
 * `previous_response_id` and `item_reference` items are resolved through a
 * lookup into the host's response store. The input items are checked in
 * input-items.ts and turned into messages in items.ts.
 */
import { checkValueDepth } from "../json-depth.js";
import { ApiError, invalidParam } from "../api-error.js";
import type { NormalizedMessage, NormalizedRequest } from "../normalized.js";
import {
  ANY_OBJECT_SCHEMA, checkFunctionFields, checkSchemaDepth, describe, effortParam, isAbsent, isObject, MAX_CACHE_KEY_LENGTH, MAX_IMAGES, MAX_USER_LENGTH,
  optionalBoolean, optionalInteger, optionalNumber, optionalString, type Body,
} from "../params.js";
import type { FunctionTool, ReasoningEffort, ToolChoice } from "../types.js";
import type { EngineResponseFormat } from "../normalized.js";
import { checkSchemaGrammar } from "../grammar-refusal.js";
import { appGrammarEbnf, readAppGrammar } from "../app-grammar.js";
import { validateCustomTool, type CustomTools } from "../custom-tools.js";
import { hosted } from "./hosted.js";
import { checkOutputsAnswerCalls, validateInput, type ResponsesLookup } from "./input-items.js";
import { itemsToMessages } from "./items.js";
import type { FunctionToolParam, CustomToolParam, InputItem, ResponseObject, ResponsesToolChoice, TextFormat } from "./types.js";
import { validateMcpTool, type McpPlan, type McpServerSpec, type McpToolParam } from "./mcp-items.js";

/** The hosted API's limits. */
const MAX_TOP_LOGPROBS = 20;
const MAX_METADATA_KEYS = 16;

/** The settings a Response object echoes: everything but its id, times, status, output and usage. */
export type ResponseEcho = Pick<
  ResponseObject,
  | "model" | "previous_response_id" | "instructions" | "tools" | "tool_choice" | "truncation" | "parallel_tool_calls" | "text"
  | "top_p" | "presence_penalty" | "frequency_penalty" | "top_logprobs" | "temperature" | "reasoning" | "max_output_tokens"
  | "max_tool_calls" | "store" | "background" | "service_tier" | "metadata" | "safety_identifier" | "prompt_cache_key" | "user"
>;

export interface ResponsesRequest {
  normalized: NormalizedRequest;
  /** This request's own input items, each with an id (what `input_items` lists). */
  inputItems: InputItem[];
  /** The conversation up to this turn without instructions: the previous response's, then this input. */
  history: NormalizedMessage[];
  echo: ResponseEcho;
  store: boolean;
  /** `reasoning.summary` was asked for: the reasoning text is given as `summary_text` too. */
  summary: boolean;
  /** `include: ["message.output_text.logprobs"]` or `top_logprobs` > 0. */
  logprobs: boolean;
  /** The body as received (set by the Responses face: what a background response's journal keeps to resume it). */
  body?: unknown;
  /** The `mcp` tools (their headers apart from the echo); their tools join `normalized.tools` once listed (host/responses-mcp.ts). */
  mcpServers: McpServerSpec[];
  /** Set by the host once the `mcp` tools are listed (host/responses-mcp.ts). */
  mcp?: McpPlan;
}


const HOSTED_TOOLS = /^(web_search.*|file_search|code_interpreter|computer.*|image_generation|local_shell|shell|apply_patch)$/;

/** The request checked field by field, then as a whole for nesting (json-depth.ts): what no field check reached cannot be a stack overflow later. */
export function validateResponsesRequest(raw: unknown, lookup: ResponsesLookup): ResponsesRequest {
  const request = validateFields(raw, lookup);
  checkValueDepth(raw);
  return request;
}

function validateFields(raw: unknown, lookup: ResponsesLookup): ResponsesRequest {
  if (!isObject(raw)) {
    throw new ApiError({ status: 400, code: "invalid_request_body", message: `The request body must be a JSON object, got ${describe(raw)}.` });
  }
  const body = raw as Body;
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw invalidParam("model", "`model` is required and must be a non-empty string (a catalog id such as `Qwen3-0.6B-q4f16_1-MLC` or an alias such as `Qwen/Qwen3-0.6B`).", isAbsent(model) ? "missing_required_parameter" : "invalid_type");
  }

  // Hosted-only features first: the clearest answer for a request that cannot work here at all.
  if (!isAbsent(body.background) && typeof body.background !== "boolean") throw invalidParam("background", "`background` must be a boolean.", "invalid_type");
  if (!isAbsent(body.conversation)) throw hosted("conversation", "`conversation` (server-side conversation objects)");
  if (!isAbsent(body.prompt)) throw hosted("prompt", "`prompt` (stored prompt templates)");

  const stream = optionalBoolean(body, "stream") ?? false;
  validateStreamOptions(body, stream);
  const store = optionalBoolean(body, "store") ?? true;
  const background = optionalBoolean(body, "background") ?? false;
  if (background && !store) throw invalidParam("background", "`background: true` needs `store: true` (the default): a background response is read back with retrieve, so it must be stored.");
  const instructions = optionalString(body, "instructions") ?? null;
  const previousId = optionalString(body, "previous_response_id") ?? null;
  const include = validateInclude(body.include);
  const topLogprobs = optionalInteger(body, "top_logprobs", 0, MAX_TOP_LOGPROBS);
  const logprobs = include.has("message.output_text.logprobs") || (topLogprobs ?? 0) > 0;
  const maxOutputTokens = optionalInteger(body, "max_output_tokens", 1) ?? null;
  const maxToolCalls = optionalInteger(body, "max_tool_calls", 1) ?? null;
  const temperature = optionalNumber(body, "temperature", 0, 2);
  const topP = optionalNumber(body, "top_p", 0, 1);
  const presencePenalty = optionalNumber(body, "presence_penalty", -2, 2);
  const frequencyPenalty = optionalNumber(body, "frequency_penalty", -2, 2);
  const truncation = validateTruncation(body.truncation);
  const metadata = validateMetadata(body.metadata);
  const promptCacheKey = optionalString(body, "prompt_cache_key", MAX_CACHE_KEY_LENGTH) ?? null;
  const safetyIdentifier = optionalString(body, "safety_identifier", MAX_CACHE_KEY_LENGTH) ?? null;
  const user = optionalString(body, "user", MAX_USER_LENGTH) ?? null;
  const serviceTier = optionalString(body, "service_tier");
  const parallelToolCalls = optionalBoolean(body, "parallel_tool_calls") ?? true;
  const { tools, customTools, mcpServers, echo: toolsEcho } = validateTools(body.tools);
  const { choice, echo: choiceEcho, allowed } = validateToolChoice(body.tool_choice, tools, mcpServers);
  const { format, responseFormat } = validateText(body.text);
  const { effort, summary, echo: reasoningEcho } = validateReasoning(body.reasoning);

  // The conversation: the previous response's, then this input.
  let prior: NormalizedMessage[] = [];
  if (previousId !== null) {
    const found = lookup.history(previousId);
    if (!found) {
      throw new ApiError({ status: 400, param: "previous_response_id", code: "previous_response_not_found", message: `Previous response with id '${previousId}' not found: it was deleted, dropped by the response store's retention (responsesStore: maxResponses, maxBytes, maxAgeMs; oldest first), stored with \`store: false\`, or kept in another client's memory store.` });
    }
    prior = found;
  }
  const inputItems = validateInput(body.input, lookup);
  const callNames = new Map<string, string>();
  for (const m of prior) for (const c of m.toolCalls) callNames.set(c.id, c.function.name);
  checkOutputsAnswerCalls(inputItems, callNames);
  const input = itemsToMessages(inputItems, "input", callNames);
  // An approval answered with `previous_response_id` is the whole input: the call it approves is what the model reads next.
  if (input.length === 0 && !inputItems.some((item) => item.type === "mcp_approval_response")) {
    throw invalidParam("input", "`input` must hold at least one message, function call output or other item the model can read.", "missing_required_parameter");
  }
  const images = input.reduce((n, m) => n + (Array.isArray(m.content) ? m.content.filter((p) => p.type === "image_url").length : 0), 0);
  if (images > MAX_IMAGES) throw new ApiError({ status: 413, param: "input", code: "too_many_images", message: `A request may carry at most ${MAX_IMAGES} images, got ${images}.` });
  const history = [...prior, ...input];
  const system: NormalizedMessage[] = instructions !== null ? [{ role: "system", content: instructions, toolCalls: [], toolCallId: null, name: null }] : [];

  const normalized: NormalizedRequest = {
    model,
    messages: [...system, ...history],
    maxTokens: maxOutputTokens ?? undefined,
    stream,
    includeUsage: false,
    temperature,
    top_p: topP,
    presence_penalty: presencePenalty,
    frequency_penalty: frequencyPenalty,
    stop: [],
    topLogprobs: logprobs ? (topLogprobs ?? 0) : undefined,
    tools: allowed,
    ...(Object.keys(customTools).length > 0 ? { customTools } : {}),
    toolChoice: choice,
    parallelToolCalls: parallelToolCalls && maxToolCalls !== 1,
    responseFormat,
    ...(responseFormat ? { responseFormatParam: "text.format" as const } : {}),
    reasoningEffort: effort,
    cacheKey: promptCacheKey ?? safetyIdentifier ?? user ?? undefined,
    provider: undefined,
    n: 1,
    // A Responses turn is always a new assistant item, even after an assistant message.
    continueFinalMessage: false,
  };
  return {
    normalized,
    inputItems,
    history,
    store,
    summary,
    logprobs,
    mcpServers,
    echo: {
      model,
      previous_response_id: previousId,
      instructions,
      tools: toolsEcho,
      tool_choice: choiceEcho,
      truncation,
      parallel_tool_calls: parallelToolCalls,
      text: { format },
      top_p: topP ?? 1,
      presence_penalty: presencePenalty ?? 0,
      frequency_penalty: frequencyPenalty ?? 0,
      top_logprobs: topLogprobs ?? 0,
      temperature: temperature ?? 1,
      reasoning: reasoningEcho,
      max_output_tokens: maxOutputTokens,
      max_tool_calls: maxToolCalls,
      store,
      background,
      service_tier: serviceTier ?? "default",
      metadata,
      safety_identifier: safetyIdentifier,
      prompt_cache_key: promptCacheKey,
      user,
    },
  };
}

// ── scalars ────────────────────────────────────────────────────────────────

function validateStreamOptions(body: Body, stream: boolean): void {
  const v = body.stream_options;
  if (isAbsent(v)) return;
  if (!isObject(v)) throw invalidParam("stream_options", "`stream_options` must be an object such as {\"include_obfuscation\": false}.", "invalid_type");
  if (!stream) throw invalidParam("stream_options", "`stream_options` is only allowed when `stream` is true.");
  // Obfuscation pads events against side channels on the network; a local stream never leaves the page, so none is added.
  if (!isAbsent(v.include_obfuscation) && typeof v.include_obfuscation !== "boolean") {
    throw invalidParam("stream_options.include_obfuscation", "`stream_options.include_obfuscation` must be a boolean.", "invalid_type");
  }
}

const INCLUDABLE = new Set(["message.output_text.logprobs", "reasoning.encrypted_content"]);
const HOSTED_INCLUDES = new Set(["file_search_call.results", "web_search_call.results", "web_search_call.action.sources", "code_interpreter_call.outputs", "computer_call_output.output.image_url", "message.input_image.image_url"]);

function validateInclude(v: unknown): Set<string> {
  if (isAbsent(v)) return new Set();
  if (!Array.isArray(v)) throw invalidParam("include", "`include` must be an array of strings such as \"message.output_text.logprobs\".", "invalid_type");
  v.forEach((entry, i) => {
    if (typeof entry !== "string") throw invalidParam(`include[${i}]`, `\`include[${i}]\` must be a string.`, "invalid_type");
    if (HOSTED_INCLUDES.has(entry)) throw hosted(`include[${i}]`, `\`include: "${entry}"\``);
    if (!INCLUDABLE.has(entry)) throw invalidParam(`include[${i}]`, `\`include[${i}]\` must be "message.output_text.logprobs" or "reasoning.encrypted_content", got ${JSON.stringify(entry)}.`);
  });
  return new Set(v as string[]);
}

function validateTruncation(v: unknown): "auto" | "disabled" {
  if (isAbsent(v)) return "disabled";
  if (v !== "auto" && v !== "disabled") throw invalidParam("truncation", "`truncation` must be \"auto\" or \"disabled\".");
  return v;
}

function validateMetadata(v: unknown): Record<string, string> {
  if (isAbsent(v)) return {};
  if (!isObject(v)) throw invalidParam("metadata", "`metadata` must be an object of string values.", "invalid_type");
  const entries = Object.entries(v);
  if (entries.length > MAX_METADATA_KEYS) throw invalidParam("metadata", `\`metadata\` takes at most ${MAX_METADATA_KEYS} keys, got ${entries.length}.`);
  for (const [key, value] of entries) {
    if (key.length > 64) throw invalidParam("metadata", `\`metadata\` keys must be at most 64 characters ("${key.slice(0, 20)}…").`);
    if (typeof value !== "string") throw invalidParam(`metadata.${key}`, `\`metadata.${key}\` must be a string.`, "invalid_type");
    if (value.length > 512) throw invalidParam(`metadata.${key}`, `\`metadata.${key}\` must be at most 512 characters.`);
  }
  return { ...(v as Record<string, string>) };
}

// ── tools ──────────────────────────────────────────────────────────────────

function validateTools(v: unknown): { tools: FunctionTool[]; customTools: CustomTools; mcpServers: McpServerSpec[]; echo: Array<FunctionToolParam | CustomToolParam | McpToolParam> } {
  const customTools: CustomTools = {};
  const mcpServers: McpServerSpec[] = [];
  if (isAbsent(v)) return { tools: [], customTools, mcpServers, echo: [] };
  if (!Array.isArray(v)) throw invalidParam("tools", "`tools` must be an array of {\"type\": \"function\", \"name\": ..., \"parameters\": {...}}.", "invalid_type");
  const names = new Set<string>();
  const labels = new Set<string>();
  const echo: Array<FunctionToolParam | CustomToolParam | McpToolParam> = [];
  const tools = v.flatMap((tool, i): FunctionTool[] => {
    const param = `tools[${i}]`;
    if (!isObject(tool)) throw invalidParam(param, `\`${param}\` must be an object.`, "invalid_type");
    if (typeof tool.type === "string" && HOSTED_TOOLS.test(tool.type)) throw hosted(`${param}.type`, `The hosted tool \`${tool.type}\``);
    if (tool.type === "mcp") {
      // The server's tools are known once listed (host/responses-mcp.ts).
      const server = validateMcpTool(tool, param, labels);
      mcpServers.push(server);
      echo.push(server.echo);
      return [];
    }
    if (tool.type === "custom") {
      const custom = validateCustomTool(tool, param, names);
      customTools[custom.spec.name] = custom.spec;
      echo.push({ type: "custom", name: custom.spec.name, ...(custom.description !== null ? { description: custom.description } : {}), format: custom.format });
      return [custom.tool];
    }
    if (tool.type !== "function") throw invalidParam(`${param}.type`, `\`${param}.type\` must be "function" (function tools are the tools a local model can call), got ${JSON.stringify(tool.type)}.`);
    checkFunctionFields(tool, param, names);
    const name = tool.name as string;
    if (!isAbsent(tool.strict) && typeof tool.strict !== "boolean") throw invalidParam(`${param}.strict`, `\`${param}.strict\` must be a boolean.`, "invalid_type");
    const description = typeof tool.description === "string" ? tool.description : null;
    const parameters = isObject(tool.parameters) ? tool.parameters : null;
    const strict = typeof tool.strict === "boolean" ? tool.strict : null;
    echo.push({ type: "function", name, description, parameters, strict });
    return [{
      type: "function",
      function: {
        name,
        ...(description !== null ? { description } : {}),
        parameters: parameters ?? { type: "object", properties: {} },
        // Only `strict: true` says something to the model; false renders as absent, so a Responses tool (whose SDK type requires
        // `strict`) renders like the same chat tool, and requests of both faces share their cached prompt prefix.
        ...(strict === true ? { strict } : {}),
      },
    }];
  });
  return { tools, customTools, mcpServers, echo };
}

function validateToolChoice(v: unknown, tools: FunctionTool[], mcpServers: McpServerSpec[]): { choice: ToolChoice; echo: ResponsesToolChoice; allowed: FunctionTool[] } {
  const declared = (name: string, param: string) => {
    if (!tools.some((t) => t.function.name === name)) throw invalidParam(param, `\`${param}\` names the function \`${name}\`, which is not declared in \`tools\`.`);
  };
  if (isAbsent(v)) return { choice: tools.length > 0 ? "auto" : "none", echo: "auto", allowed: tools };
  if (isObject(v) && v.type === "mcp") {
    // Applied once the server's tools are listed (host/responses-mcp.ts): the named tool, or any of the server's.
    if (typeof v.server_label !== "string" || !mcpServers.some((s) => s.echo.server_label === v.server_label)) throw invalidParam("tool_choice.server_label", "`tool_choice.server_label` must be the `server_label` of an `mcp` tool in `tools`.");
    if (!isAbsent(v.name) && typeof v.name !== "string") throw invalidParam("tool_choice.name", "`tool_choice.name` must be a tool name of that server.", "invalid_type");
    return { choice: "none", echo: { type: "mcp", server_label: v.server_label, name: typeof v.name === "string" ? v.name : null }, allowed: tools };
  }
  if (v === "auto" || v === "none" || v === "required") {
    if (v === "required" && tools.length === 0 && mcpServers.length === 0) throw invalidParam("tool_choice", "`tool_choice: \"required\"` needs at least one tool in `tools`.");
    return { choice: v === "auto" && tools.length === 0 ? "none" : v, echo: v, allowed: tools };
  }
  if (isObject(v) && v.type === "function") {
    if (typeof v.name !== "string") throw invalidParam("tool_choice.name", "`tool_choice.name` must be the name of a declared function.", "invalid_type");
    declared(v.name, "tool_choice.name");
    return { choice: { type: "function", function: { name: v.name } }, echo: { type: "function", name: v.name }, allowed: tools };
  }
  if (isObject(v) && v.type === "custom") {
    if (typeof v.name !== "string") throw invalidParam("tool_choice.name", "`tool_choice.name` must be the name of a declared custom tool.", "invalid_type");
    declared(v.name, "tool_choice.name");
    return { choice: { type: "function", function: { name: v.name } }, echo: { type: "custom", name: v.name }, allowed: tools };
  }
  if (isObject(v) && v.type === "allowed_tools") {
    if (v.mode !== "auto" && v.mode !== "required") throw invalidParam("tool_choice.mode", "`tool_choice.mode` must be \"auto\" or \"required\".");
    if (!Array.isArray(v.tools) || v.tools.length === 0) throw invalidParam("tool_choice.tools", "`tool_choice.tools` must be a non-empty array of {\"type\": \"function\", \"name\": ...}.", "invalid_type");
    const names = v.tools.map((t, i) => {
      const param = `tool_choice.tools[${i}]`;
      if (!isObject(t) || (t.type !== "function" && t.type !== "custom") || typeof t.name !== "string") throw invalidParam(param, `\`${param}\` must be {"type": "function", "name": ...}.`);
      declared(t.name, `${param}.name`);
      return { type: t.type as "function" | "custom", name: t.name };
    });
    const allowed = tools.filter((t) => names.some((n) => n.name === t.function.name));
    return { choice: v.mode, echo: { type: "allowed_tools", mode: v.mode, tools: names }, allowed };
  }
  if (isObject(v) && typeof v.type === "string" && HOSTED_TOOLS.test(v.type)) throw hosted("tool_choice.type", `The hosted tool \`${v.type}\``);
  throw invalidParam("tool_choice", "`tool_choice` must be \"auto\", \"none\", \"required\", {\"type\": \"function\", \"name\": ...} or {\"type\": \"allowed_tools\", ...}.");
}

// ── text.format, reasoning ─────────────────────────────────────────────────

function validateText(v: unknown): { format: TextFormat; responseFormat: EngineResponseFormat | undefined } {
  if (isAbsent(v)) return { format: { type: "text" }, responseFormat: undefined };
  if (!isObject(v)) throw invalidParam("text", "`text` must be an object such as {\"format\": {\"type\": \"json_object\"}}.", "invalid_type");
  if (!isAbsent(v.verbosity) && v.verbosity !== "low" && v.verbosity !== "medium" && v.verbosity !== "high") {
    throw invalidParam("text.verbosity", "`text.verbosity` must be \"low\", \"medium\" or \"high\".");
  }
  const f = v.format;
  if (isAbsent(f)) return { format: { type: "text" }, responseFormat: undefined };
  if (!isObject(f)) throw invalidParam("text.format", "`text.format` must be an object such as {\"type\": \"json_schema\", \"name\": ..., \"schema\": {...}}.", "invalid_type");
  switch (f.type) {
    case "text":
      return { format: { type: "text" }, responseFormat: undefined };
    case "json_object":
      return { format: { type: "json_object" }, responseFormat: { type: "json_object", schema: ANY_OBJECT_SCHEMA } };
    case "json_schema": {
      if (!isAbsent(f.name) && (typeof f.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(f.name))) {
        throw invalidParam("text.format.name", "`text.format.name` must be 1–64 characters of a-z, A-Z, 0-9, underscores or dashes.");
      }
      if (!isObject(f.schema)) throw invalidParam("text.format.schema", "`text.format.schema` must be a JSON Schema object.", isAbsent(f.schema) ? "missing_required_parameter" : "invalid_type");
      checkSchemaDepth(f.schema, "text.format.schema");
      checkSchemaGrammar(f.schema, "text.format.schema");
      if (!isAbsent(f.strict) && typeof f.strict !== "boolean") throw invalidParam("text.format.strict", "`text.format.strict` must be a boolean.", "invalid_type");
      if (!isAbsent(f.description) && typeof f.description !== "string") throw invalidParam("text.format.description", "`text.format.description` must be a string.", "invalid_type");
      const format: TextFormat = {
        type: "json_schema",
        name: typeof f.name === "string" ? f.name : "response",
        schema: f.schema,
        strict: typeof f.strict === "boolean" ? f.strict : null,
        ...(typeof f.description === "string" ? { description: f.description } : {}),
      };
      return { format, responseFormat: { type: "json_object", schema: JSON.stringify(f.schema) } };
    }
    case "grammar": {
      // A library extension: the app's own regex or Lark grammar (docs/grammars.md).
      const grammar = readAppGrammar(f, "text.format");
      return { format: { type: "grammar", ...grammar }, responseFormat: { type: "grammar", grammar: appGrammarEbnf(grammar, "text.format") } };
    }
    default:
      throw invalidParam("text.format.type", "`text.format.type` must be \"text\", \"json_object\", \"json_schema\" or \"grammar\".");
  }
}

const SUMMARIES = ["auto", "concise", "detailed"];

function validateReasoning(v: unknown): { effort: ReasoningEffort | undefined; summary: boolean; echo: ResponseObject["reasoning"] } {
  if (isAbsent(v)) return { effort: undefined, summary: false, echo: { effort: null, summary: null } };
  if (!isObject(v)) throw invalidParam("reasoning", "`reasoning` must be an object such as {\"effort\": \"low\", \"summary\": \"auto\"}.", "invalid_type");
  const effort = effortParam(v.effort, "reasoning.effort");
  // `generate_summary` is the older name of `summary`.
  const summaryParam = isAbsent(v.summary) ? "reasoning.generate_summary" : "reasoning.summary";
  const summary = isAbsent(v.summary) ? v.generate_summary : v.summary;
  if (!isAbsent(summary) && (typeof summary !== "string" || !SUMMARIES.includes(summary))) throw invalidParam(summaryParam, `\`${summaryParam}\` must be "auto", "concise" or "detailed".`);
  return { effort, summary: !isAbsent(summary), echo: { effort: effort ?? null, summary: (summary as string | undefined) ?? null } };
}
