/**
 * The Responses `mcp` tool's shapes, as the hosted API defines them: the tool
 * parameter (validated here; its `headers` and `authorization` kept apart so
 * they are never echoed or stored), the items (`mcp_list_tools`, `mcp_call`,
 * `mcp_approval_request`, `mcp_approval_response`) as input and as output,
 * and the stream events of a listing and of a call. Running the tool is
 * host/responses-mcp.ts; the connections are src/mcp/.
 */
import { invalidParam } from "../api-error.js";
import { describe, isAbsent, isObject } from "../params.js";
import { checkTextDepth } from "../json-depth.js";
import { resolveServerUrl } from "../mcp-url.js";
import { randomId } from "../ids.js";

/** A tool of an MCP server's listing, as the `mcp_list_tools` item carries it. */
export interface McpToolInfo {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

/** Which tools need an approval: all, none, or by name (a tool matched by neither list needs one, as on the hosted API). */
export type ApprovalPolicy = "always" | "never" | { always?: ToolFilter; never?: ToolFilter };
export interface ToolFilter {
  tool_names?: string[];
  read_only?: boolean;
}

/** The `mcp` tool as a Response echoes it: no `headers`, no `authorization`. */
export interface McpToolParam {
  type: "mcp";
  server_label: string;
  server_url: string;
  server_description?: string;
  allowed_tools: string[] | ToolFilter | null;
  require_approval: ApprovalPolicy;
}

/** The `mcp` tool as the host runs it: the echo, the resolved URL, and the headers for the connection only. */
export interface McpServerSpec {
  param: string;
  echo: McpToolParam;
  url: string;
  /** Never stored, returned or logged. */
  headers: Record<string, string>;
}

export interface McpListToolsItem {
  type: "mcp_list_tools";
  id: string;
  server_label: string;
  tools: McpToolInfo[];
  error?: string | null;
}
export interface McpCallItem {
  type: "mcp_call";
  id: string;
  server_label: string;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
  status: "in_progress" | "completed" | "incomplete" | "failed";
  approval_request_id: string | null;
}
export interface McpApprovalRequestItem {
  type: "mcp_approval_request";
  id: string;
  server_label: string;
  name: string;
  arguments: string;
}
export interface McpApprovalResponseItem {
  type: "mcp_approval_response";
  id: string;
  approval_request_id: string;
  approve: boolean;
  reason: string | null;
}
export type McpItem = McpListToolsItem | McpCallItem | McpApprovalRequestItem | McpApprovalResponseItem;

export const newMcpId = (prefix: "mcpl" | "mcp" | "mcpr" | "mcpa") => `${prefix}_${randomId(24)}`;

const LABEL = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_HEADERS = 32;

/**
 * What the host knows of a request's `mcp` tools before generating
 * (host/responses-mcp.ts): every listing (reused or new; what the stored
 * response keeps for the next turn), the new ones (output items of this
 * response), the calls the app approved (run before the model goes on), and
 * which server each offered tool name belongs to.
 */
export interface McpPlan {
  listings: McpListToolsItem[];
  newListings: McpListToolsItem[];
  approved: McpCallItem[];
  owners: Map<string, { server: McpServerSpec; tool: McpToolInfo }>;
}

// ── the tool ────────────────────────────────────────────────────────────────

export function validateMcpTool(tool: Record<string, unknown>, param: string, labels: Set<string>): McpServerSpec {
  if (!isAbsent(tool.connector_id)) throw invalidParam(`${param}.connector_id`, `\`${param}.connector_id\`: OpenAI's hosted connectors run on OpenAI's servers; a local model connects to an MCP server by its \`server_url\`.`, "unsupported_on_local_model");
  if (!isAbsent(tool.tunnel_id)) throw invalidParam(`${param}.tunnel_id`, `\`${param}.tunnel_id\`: tunnels are OpenAI's hosted feature; a local model connects to an MCP server by its \`server_url\` (the browser must reach it directly).`, "unsupported_on_local_model");
  const label = tool.server_label;
  if (typeof label !== "string" || !LABEL.test(label)) throw invalidParam(`${param}.server_label`, `\`${param}.server_label\` is required: 1–64 characters of a-z, A-Z, 0-9, underscores or dashes.`, isAbsent(label) ? "missing_required_parameter" : "invalid_value");
  if (labels.has(label)) throw invalidParam(`${param}.server_label`, `Two \`mcp\` tools have the \`server_label\` "${label}": each server needs its own label.`);
  labels.add(label);
  const rawUrl = tool.server_url;
  if (typeof rawUrl !== "string" || rawUrl === "") throw invalidParam(`${param}.server_url`, `\`${param}.server_url\` is required: the URL of an MCP server (Streamable HTTP or HTTP+SSE).`, isAbsent(rawUrl) ? "missing_required_parameter" : "invalid_type");
  const url = resolveServerUrl(rawUrl, `${param}.server_url`);
  if (!isAbsent(tool.server_description) && typeof tool.server_description !== "string") throw invalidParam(`${param}.server_description`, `\`${param}.server_description\` must be a string.`, "invalid_type");
  const headers = validateHeaders(tool.headers, `${param}.headers`);
  if (!isAbsent(tool.authorization)) {
    if (typeof tool.authorization !== "string") throw invalidParam(`${param}.authorization`, `\`${param}.authorization\` must be a string (sent as a bearer token).`, "invalid_type");
    headers.Authorization = `Bearer ${tool.authorization}`;
  }
  const echo: McpToolParam = {
    type: "mcp",
    server_label: label,
    server_url: rawUrl,
    ...(typeof tool.server_description === "string" ? { server_description: tool.server_description } : {}),
    allowed_tools: validateAllowed(tool.allowed_tools, `${param}.allowed_tools`),
    require_approval: validateApproval(tool.require_approval, `${param}.require_approval`),
  };
  return { param, echo, url, headers };
}

function validateHeaders(v: unknown, param: string): Record<string, string> {
  if (isAbsent(v)) return {};
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be an object of header names to string values.`, "invalid_type");
  const entries = Object.entries(v);
  if (entries.length > MAX_HEADERS) throw invalidParam(param, `\`${param}\` takes at most ${MAX_HEADERS} headers, got ${entries.length}.`);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    // The value is a secret: the message names the header, never its value.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw invalidParam(param, `\`${param}\` has a header name that is not a valid HTTP token.`);
    if (typeof value !== "string" || /[\r\n]/.test(value)) throw invalidParam(`${param}.${name}`, `\`${param}.${name}\` must be a string without line breaks.`, "invalid_type");
    headers[name] = value;
  }
  return headers;
}

function validateFilter(v: unknown, param: string): ToolFilter {
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be {"tool_names": [...], "read_only": ...}.`, "invalid_type");
  const filter: ToolFilter = {};
  if (!isAbsent(v.tool_names)) filter.tool_names = names(v.tool_names, `${param}.tool_names`);
  if (!isAbsent(v.read_only)) {
    if (typeof v.read_only !== "boolean") throw invalidParam(`${param}.read_only`, `\`${param}.read_only\` must be a boolean.`, "invalid_type");
    filter.read_only = v.read_only;
  }
  return filter;
}

function names(v: unknown, param: string): string[] {
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string")) throw invalidParam(param, `\`${param}\` must be an array of tool names.`, "invalid_type");
  return [...(v as string[])];
}

function validateAllowed(v: unknown, param: string): McpToolParam["allowed_tools"] {
  if (isAbsent(v)) return null;
  if (Array.isArray(v)) return names(v, param);
  return validateFilter(v, param);
}

function validateApproval(v: unknown, param: string): ApprovalPolicy {
  if (isAbsent(v)) return "always";
  if (v === "always" || v === "never") return v;
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be "always", "never" or {"always": {"tool_names": [...]}, "never": {"tool_names": [...]}}, got ${describe(v)}.`);
  return {
    ...(isAbsent(v.always) ? {} : { always: validateFilter(v.always, `${param}.always`) }),
    ...(isAbsent(v.never) ? {} : { never: validateFilter(v.never, `${param}.never`) }),
  };
}

const matches = (filter: ToolFilter | undefined, tool: McpToolInfo) =>
  !!filter && ((filter.tool_names?.includes(tool.name) ?? false) || (filter.read_only === true && tool.annotations?.readOnlyHint === true));

/** Whether `allowed_tools` lets the model see `tool` (a list of names, or a filter: by name, or read-only tools). */
export function isAllowed(echo: McpToolParam, tool: McpToolInfo): boolean {
  const allowed = echo.allowed_tools;
  if (allowed === null) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  if (allowed.tool_names && !allowed.tool_names.includes(tool.name)) return false;
  if (allowed.read_only === true && tool.annotations?.readOnlyHint !== true) return false;
  return true;
}

/** Whether a call of `tool` waits for the app's approval. */
export function needsApproval(echo: McpToolParam, tool: McpToolInfo): boolean {
  const policy = echo.require_approval;
  if (policy === "always" || policy === "never") return policy === "always";
  if (matches(policy.never, tool)) return false;
  return true;
}

/** Whether a request body names an `mcp` tool or answers an approval: its calls reach a server. */
export function usesMcp(body: unknown): boolean {
  if (!isObject(body)) return false;
  const tools = Array.isArray(body.tools) && body.tools.some((t) => isObject(t) && t.type === "mcp");
  return tools || (Array.isArray(body.input) && body.input.some((item) => isObject(item) && item.type === "mcp_approval_response"));
}

/** `body` with every `mcp` tool's `headers` and `authorization` left out: what a background response's journal may keep. */
export function withoutMcpSecrets(body: unknown): unknown {
  if (!isObject(body) || !Array.isArray(body.tools) || !body.tools.some((t) => isObject(t) && t.type === "mcp")) return body;
  const tools = body.tools.map((tool) => {
    if (!isObject(tool) || tool.type !== "mcp") return tool;
    const { headers: _headers, authorization: _authorization, ...rest } = tool;
    return rest;
  });
  return { ...body, tools };
}

/** What `connectMcp` sends to the host: a server and its credentials (headers never stored or returned), and the tools it may use. */
export interface McpServerParams {
  server_url: string;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer …`. */
  authorization?: string;
  /** Only these tools (names); absent: all. */
  allowed_tools?: string[];
}

/** `McpServerParams` checked: the URL resolved, the headers with the bearer token, the allowed names. */
export function validateMcpServerParams(v: unknown, param = "server"): { url: string; headers: Record<string, string>; allowed: string[] | null } {
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be {"server_url": ..., "headers"?: {...}, "authorization"?: ..., "allowed_tools"?: [...]}.`, "invalid_type");
  if (typeof v.server_url !== "string" || v.server_url === "") throw invalidParam(`${param}.server_url`, `\`${param}.server_url\` is required: the URL of an MCP server.`, "missing_required_parameter");
  const url = resolveServerUrl(v.server_url, `${param}.server_url`);
  const headers = validateHeaders(v.headers, `${param}.headers`);
  if (!isAbsent(v.authorization)) {
    if (typeof v.authorization !== "string") throw invalidParam(`${param}.authorization`, `\`${param}.authorization\` must be a string (sent as a bearer token).`, "invalid_type");
    headers.Authorization = `Bearer ${v.authorization}`;
  }
  return { url, headers, allowed: isAbsent(v.allowed_tools) ? null : names(v.allowed_tools, `${param}.allowed_tools`) };
}

// ── items sent back in `input` ──────────────────────────────────────────────

function text(item: Record<string, unknown>, key: string, param: string): string {
  const v = item[key];
  if (typeof v !== "string" || v === "") throw invalidParam(`${param}.${key}`, `\`${param}.${key}\` is required: a non-empty string.`, isAbsent(v) ? "missing_required_parameter" : "invalid_type");
  return v;
}
const nullableText = (item: Record<string, unknown>, key: string, param: string): string | null => {
  const v = item[key];
  if (isAbsent(v)) return null;
  if (typeof v !== "string") throw invalidParam(`${param}.${key}`, `\`${param}.${key}\` must be a string or null.`, "invalid_type");
  return v;
};

/** An `mcp_*` input item, checked; null when `type` is not one. */
export function validateMcpItem(item: Record<string, unknown>, type: unknown, param: string, id: string | undefined): McpItem | null {
  switch (type) {
    case "mcp_list_tools": {
      if (!Array.isArray(item.tools)) throw invalidParam(`${param}.tools`, `\`${param}.tools\` must be the listing's array of tools.`, "invalid_type");
      const tools = item.tools.map((tool, j): McpToolInfo => {
        const p = `${param}.tools[${j}]`;
        if (!isObject(tool) || typeof tool.name !== "string") throw invalidParam(p, `\`${p}\` must be a tool {"name": ..., "input_schema": {...}}.`, "invalid_type");
        return {
          name: tool.name,
          description: typeof tool.description === "string" ? tool.description : null,
          input_schema: isObject(tool.input_schema) ? tool.input_schema : { type: "object" },
          annotations: isObject(tool.annotations) ? tool.annotations : null,
        };
      });
      return { type: "mcp_list_tools", id: id ?? newMcpId("mcpl"), server_label: text(item, "server_label", param), tools, ...(typeof item.error === "string" ? { error: item.error } : {}) };
    }
    case "mcp_call": {
      const args = text(item, "arguments", param);
      checkTextDepth(args, `${param}.arguments`);
      const error = nullableText(item, "error", param);
      return {
        type: "mcp_call", id: id ?? newMcpId("mcp"), server_label: text(item, "server_label", param), name: text(item, "name", param), arguments: args,
        output: nullableText(item, "output", param), error, status: error ? "failed" : "completed", approval_request_id: nullableText(item, "approval_request_id", param),
      };
    }
    case "mcp_approval_request": {
      if (!id) throw invalidParam(`${param}.id`, `\`${param}.id\` is required: the id an \`mcp_approval_response\` answers.`, "missing_required_parameter");
      return { type: "mcp_approval_request", id, server_label: text(item, "server_label", param), name: text(item, "name", param), arguments: text(item, "arguments", param) };
    }
    case "mcp_approval_response": {
      if (typeof item.approve !== "boolean") throw invalidParam(`${param}.approve`, `\`${param}.approve\` is required: true to run the call, false to decline it.`, isAbsent(item.approve) ? "missing_required_parameter" : "invalid_type");
      return { type: "mcp_approval_response", id: id ?? newMcpId("mcpa"), approval_request_id: text(item, "approval_request_id", param), approve: item.approve, reason: nullableText(item, "reason", param) };
    }
    default:
      return null;
  }
}

// ── stream events ───────────────────────────────────────────────────────────

type At = { item_id: string; output_index: number; sequence_number: number };
export type McpStreamEvent =
  | ({ type: "response.mcp_list_tools.in_progress" | "response.mcp_list_tools.completed" | "response.mcp_list_tools.failed" } & At)
  | ({ type: "response.mcp_call.in_progress" | "response.mcp_call.completed" | "response.mcp_call.failed" } & At)
  | ({ type: "response.mcp_call_arguments.delta"; delta: string } & At)
  | ({ type: "response.mcp_call_arguments.done"; arguments: string } & At);

const at = (item_id: string, output_index: number) => ({ item_id, output_index, sequence_number: 0 });

/** The events inside a listing's output_item.added/done. */
export function listingEvents(item: McpListToolsItem, index: number): McpStreamEvent[] {
  return [
    { type: "response.mcp_list_tools.in_progress", ...at(item.id, index) },
    { type: item.error ? "response.mcp_list_tools.failed" : "response.mcp_list_tools.completed", ...at(item.id, index) },
  ];
}
export const callStarted = (item: McpCallItem, index: number): McpStreamEvent => ({ type: "response.mcp_call.in_progress", ...at(item.id, index) });
export const argumentsDelta = (item: McpCallItem, index: number, delta: string): McpStreamEvent => ({ type: "response.mcp_call_arguments.delta", ...at(item.id, index), delta });
export const argumentsDone = (item: McpCallItem, index: number): McpStreamEvent => ({ type: "response.mcp_call_arguments.done", ...at(item.id, index), arguments: item.arguments });
export const callEnded = (item: McpCallItem, index: number): McpStreamEvent => ({ type: item.error !== null ? "response.mcp_call.failed" : "response.mcp_call.completed", ...at(item.id, index) });
