/**
 * The Responses `mcp` tool, run where the engine runs: the hosted-tool rounds
 * seam of responses-run.ts. Two steps:
 *
 * - `planMcp`, before the request takes its queue slot (network work never
 *   holds the engine): each server's tools are listed, or the listing is
 *   reused (from `previous_response_id`'s stored response or an
 *   `mcp_list_tools` item in `input`, as the hosted API reuses it); the
 *   allowed tools join the request's function tools, so the model calls them
 *   in its family's native format, constrained as function tools are; the
 *   calls the app approved (`mcp_approval_response`) run, the declined ones
 *   are told to the model.
 * - `McpRounds.generate`, in the slot: generation, then the MCP calls the
 *   model made run (or end the response as `mcp_approval_request`s), their
 *   results are given to the model, and it goes on, at most MAX_MCP_ROUNDS
 *   times. A failed call is an `mcp_call` with `error`, and the response goes on.
 */
import { invalidParam } from "../protocol/api-error.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { FunctionTool, ToolCall, ToolChoice } from "../protocol/types.js";
import type { ResponsesLookup } from "../protocol/responses/input-items.js";
import type { ResponsesRequest } from "../protocol/responses/validate.js";
import type { HostedCall, ResponseOutputBuilder } from "../protocol/responses/output-builder.js";
import type { OutputItem } from "../protocol/responses/types.js";
import {
  argumentsDone, callEnded, callStarted, isAllowed, listingEvents, needsApproval, newMcpId,
  type McpApprovalRequestItem, type McpApprovalResponseItem, type McpCallItem, type McpListToolsItem, type McpPlan, type McpServerSpec,
} from "../protocol/responses/mcp-items.js";
import type { McpPool } from "../mcp/pool.js";
import type { GenerationOutput, GenerationResult } from "./generation-output.js";

/** Generations of one response with MCP calls between them (the hosted API bounds its tool rounds too). */
export const MAX_MCP_ROUNDS = 8;

const message = (role: NormalizedMessage["role"], content: string, extra: Partial<NormalizedMessage> = {}): NormalizedMessage => ({ role, content, toolCalls: [], toolCallId: null, name: null, ...extra });

/** A call and its result as the model reads them next. */
function callMessages(call: { id: string; name: string; arguments: string }, result: string, content = ""): NormalizedMessage[] {
  const toolCall: ToolCall = { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
  return [message("assistant", content, { toolCalls: [toolCall] }), message("tool", result, { toolCallId: call.id, name: call.name })];
}

const resultText = (item: McpCallItem) => (item.error !== null ? `Error: ${item.error}` : (item.output ?? ""));

function parseArguments(text: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(text === "" ? "{}" : text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : "The arguments must be a JSON object.";
  } catch {
    return `The arguments are not valid JSON: ${text.slice(0, 200)}`;
  }
}

/** Runs `item`'s call on its server (never throws for the server's sake: a failure is `item.error`). */
async function runCall(item: McpCallItem, server: McpServerSpec, pool: McpPool, client: string | undefined, signal?: AbortSignal): Promise<void> {
  const args = parseArguments(item.arguments);
  const result = typeof args === "string"
    ? { output: null, error: args }
    : await pool.use({ url: server.url, headers: server.headers }, client, (connection) => connection.callTool(item.name, args, signal)).catch((error: unknown) => {
        if (signal?.aborted) throw error;
        return { output: null, error: error instanceof Error ? error.message : String(error) };
      });
  item.output = result.output;
  item.error = result.error;
  item.status = result.error !== null ? "failed" : "completed";
}

/**
 * Before the slot: listings, the offered tools, approvals answered. Sets
 * `request.mcp`; does nothing for a request without `mcp` tools or answers.
 */
export async function planMcp(request: ResponsesRequest, lookup: ResponsesLookup, pool: McpPool, signal?: AbortSignal): Promise<void> {
  const answers = request.inputItems.filter((item): item is McpApprovalResponseItem => item.type === "mcp_approval_response");
  if (request.mcpServers.length === 0 && answers.length === 0) return;
  const client = request.normalized.client;
  const previousId = request.echo.previous_response_id;
  const previous = previousId !== null ? lookup.previous?.(previousId) : undefined;

  // Listings: the last one sent back for a label wins, then the conversation's; a failed one is listed again.
  const known = new Map<string, McpListToolsItem>();
  for (const item of previous?.mcpListings ?? []) known.set(item.server_label, item);
  for (const item of request.inputItems) if (item.type === "mcp_list_tools") known.set((item as McpListToolsItem).server_label, item as McpListToolsItem);
  const plan: McpPlan = { listings: [], newListings: [], approved: [], owners: new Map() };
  for (const server of request.mcpServers) {
    const label = server.echo.server_label;
    let listing = known.get(label);
    if (!listing || listing.error) {
      listing = { type: "mcp_list_tools", id: newMcpId("mcpl"), server_label: label, tools: [], error: null };
      const fresh = listing;
      await pool.use({ url: server.url, headers: server.headers }, client, async (connection) => {
        // As the hosted API lists them: the tools `allowed_tools` lets through.
        fresh.tools = (await connection.listTools()).tools.filter((tool) => isAllowed(server.echo, tool));
      }).catch((error: unknown) => {
        fresh.error = error instanceof Error ? error.message : String(error);
      });
      if (signal?.aborted) throw signal.reason;
      plan.newListings.push(fresh);
    }
    plan.listings.push(listing);
    offerTools(request, server, listing, plan);
  }
  request.mcp = plan;
  applyToolChoice(request, plan);
  await answerApprovals(request, answers, lookup, previous?.output ?? [], pool, plan, signal);
}

/** The listing's allowed tools join the request's tools, as function tools (each name once in the request). */
function offerTools(request: ResponsesRequest, server: McpServerSpec, listing: McpListToolsItem, plan: McpPlan): void {
  const taken = new Set(request.normalized.tools.map((t) => t.function.name));
  for (const tool of listing.tools) {
    if (!isAllowed(server.echo, tool)) continue;
    if (taken.has(tool.name)) {
      throw invalidParam(`${server.param}.server_label`, `The MCP server "${server.echo.server_label}" has a tool named \`${tool.name}\`, and another tool of this request has that name: leave one out with \`allowed_tools\`.`, "duplicate_tool_name");
    }
    taken.add(tool.name);
    plan.owners.set(tool.name, { server, tool });
    const fn: FunctionTool = { type: "function", function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.input_schema } };
    request.normalized.tools = [...request.normalized.tools, fn];
  }
}

/** `tool_choice` as the echo asked, now that the servers' tools are known. */
function applyToolChoice(request: ResponsesRequest, plan: McpPlan): void {
  const choice = request.echo.tool_choice;
  const normalized = request.normalized;
  if (typeof choice === "object" && choice.type === "mcp") {
    const tools = [...plan.owners.values()].filter((o) => o.server.echo.server_label === choice.server_label);
    if (choice.name) {
      if (!tools.some((o) => o.tool.name === choice.name)) throw invalidParam("tool_choice.name", `\`tool_choice.name\`: the MCP server "${choice.server_label}" offers no tool \`${choice.name}\` (allowed and listed).`);
      normalized.toolChoice = { type: "function", function: { name: choice.name } };
    } else {
      if (tools.length === 0) throw invalidParam("tool_choice.server_label", `\`tool_choice\`: the MCP server "${choice.server_label}" offers no tools (allowed and listed).`);
      normalized.toolChoice = "required";
      normalized.tools = normalized.tools.filter((t) => plan.owners.get(t.function.name)?.server.echo.server_label === choice.server_label);
    }
  } else if (normalized.toolChoice === "none" && choice === "auto" && normalized.tools.length > 0) {
    normalized.toolChoice = "auto";
  }
}

/** Each `mcp_approval_response`: an approved call runs now (its `mcp_call` opens the output); a declined one is told to the model. */
async function answerApprovals(request: ResponsesRequest, answers: McpApprovalResponseItem[], lookup: ResponsesLookup, previousOutput: OutputItem[], pool: McpPool, plan: McpPlan, signal?: AbortSignal): Promise<void> {
  for (const answer of answers) {
    const index = request.inputItems.indexOf(answer);
    const param = `input[${index}].approval_request_id`;
    const asked = [...request.inputItems, ...previousOutput].find((item) => item.type === "mcp_approval_request" && item.id === answer.approval_request_id)
      ?? lookup.item(answer.approval_request_id);
    if (!asked || asked.type !== "mcp_approval_request") {
      throw invalidParam(param, `\`${param}\` names no \`mcp_approval_request\`: send it with the \`previous_response_id\` of the response that asked, or with the request item in \`input\`.`, "approval_request_not_found");
    }
    const requestItem = asked as McpApprovalRequestItem;
    const server = request.mcpServers.find((s) => s.echo.server_label === requestItem.server_label);
    if (!server) throw invalidParam(param, `\`${param}\` answers a call of the MCP server "${requestItem.server_label}": that \`mcp\` tool must be in this request's \`tools\`.`, "mcp_server_missing");
    const tool = plan.owners.get(requestItem.name);
    if (answer.approve && (!tool || tool.server !== server)) {
      throw invalidParam(param, `\`${param}\` approves \`${requestItem.name}\`, which the MCP server "${server.echo.server_label}" does not offer here (\`allowed_tools\`).`, "tool_not_allowed");
    }
    if (answer.approve) {
      const item: McpCallItem = { type: "mcp_call", id: newMcpId("mcp"), server_label: server.echo.server_label, name: requestItem.name, arguments: requestItem.arguments, output: null, error: null, status: "in_progress", approval_request_id: requestItem.id };
      await runCall(item, server, pool, request.normalized.client, signal);
      plan.approved.push(item);
      // The model reads it now; the stored conversation gets it from the output item.
      for (const message of callMessages(item, resultText(item))) request.normalized.messages.push(message);
    } else {
      const told = callMessages({ id: requestItem.id, name: requestItem.name, arguments: requestItem.arguments }, `The user declined this call${answer.reason ? `: ${answer.reason}` : "."} It was not run.`);
      // Pushed one by one: never spread into call arguments (a long array overflows the stack).
      for (const message of told) {
        request.normalized.messages.push(message);
        request.history.push(message);
      }
    }
  }
}

/** What the rounds need from the pipeline: one generation, and the request prepared again with more messages. */
export interface RoundsPipeline<P> {
  generate(prepared: P, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult>;
  prepareAgain(prepared: P, messages: NormalizedMessage[], toolChoice?: ToolChoice): P;
}

/**
 * The generations of one response, in its slot: without `mcp` tools, one;
 * with them, the listing and approved-call items first, then generation and
 * the calls the model made, until it answers without one.
 */
export async function generateRounds<P>(
  request: ResponsesRequest,
  prepared: P,
  builder: ResponseOutputBuilder,
  output: GenerationOutput,
  pipeline: RoundsPipeline<P>,
  pool: McpPool,
  signal: AbortSignal,
): Promise<GenerationResult> {
  const plan = request.mcp;
  if (!plan) return pipeline.generate(prepared, output, signal);
  // The stream starts before the items that open the output.
  output.write([], undefined);
  for (const listing of plan.newListings) builder.addHosted(listing, { ...listing, tools: [] }, (index) => listingEvents(listing, index));
  for (const call of plan.approved) {
    builder.addHosted(call, { ...call, status: "in_progress", output: null, error: null }, (index) => [callStarted(call, index), argumentsDone(call, index), callEnded(call, index)]);
  }
  let total: GenerationResult | null = null;
  let messages = request.normalized.messages;
  // `max_tool_calls`, as the hosted API counts it: the calls made in this response (approved ones included); once spent, the model answers without tools.
  const maxCalls = request.echo.max_tool_calls ?? Infinity;
  let made = plan.approved.length;
  for (let round = 1; ; round++) {
    const before = builder.output.length;
    const result = await pipeline.generate(prepared, output, signal);
    total = total ? sumResults(total, result) : result;
    // This round's last item is done before its calls run (a call's arguments are complete before it is made).
    builder.finish(result.finish);
    const calls = builder.takeHostedCalls();
    const mcpCalls = calls.filter((c): c is HostedCall & { item: McpCallItem } => c.item.type === "mcp_call");
    for (const call of mcpCalls) {
      if (result.finish !== "stop") {
        // Cut off (max_output_tokens) or stopped: the arguments may be partial, so the call is not made.
        call.item.error = "The call was cut off before its arguments were complete; it was not made.";
        call.item.status = "incomplete";
      } else if (made >= maxCalls) {
        call.item.error = `max_tool_calls (${maxCalls}) was reached: the call was not made.`;
        call.item.status = "incomplete";
      } else {
        made++;
        const owner = plan.owners.get(call.item.name);
        if (owner) await runCall(call.item, owner.server, pool, request.normalized.client, signal);
        else call.item.error = `No tool \`${call.item.name}\` is offered here.`;
      }
      builder.settleHosted(call.item, call.index);
    }
    const produced = builder.output.slice(before);
    const waits = calls.length > mcpCalls.length;
    const functionCalls = produced.some((item) => item.type === "function_call" || item.type === "custom_tool_call");
    // Ends: the model answered, an approval is asked, the app has function calls to run, or the rounds are spent.
    if (mcpCalls.length === 0 || waits || functionCalls || result.finish !== "stop" || round >= MAX_MCP_ROUNDS) return total;
    const text = produced.map((item) => (item.type === "message" ? item.content.map((p) => p.text).join("") : "")).join("");
    const toolCalls: ToolCall[] = mcpCalls.map(({ item }) => ({ id: item.id, type: "function", function: { name: item.name, arguments: item.arguments } }));
    messages = [
      ...messages,
      message("assistant", text, { toolCalls }),
      ...mcpCalls.map(({ item }) => message("tool", resultText(item), { toolCallId: item.id, name: item.name })),
    ];
    // Spent: the model answers. A forced choice (`required`, a named tool) was met by this round's calls: later rounds choose freely,
    // or a forced call would be made again every round until the bound.
    const forced = request.normalized.toolChoice === "required" || typeof request.normalized.toolChoice === "object";
    prepared = pipeline.prepareAgain(prepared, messages, made >= maxCalls ? "none" : forced ? "auto" : undefined);
  }
}

function sumResults(a: GenerationResult, b: GenerationResult): GenerationResult {
  const usage = {
    ...b.usage,
    prompt_tokens: a.usage.prompt_tokens + b.usage.prompt_tokens,
    completion_tokens: a.usage.completion_tokens + b.usage.completion_tokens,
    total_tokens: a.usage.total_tokens + b.usage.total_tokens,
    prompt_tokens_details: { cached_tokens: a.usage.prompt_tokens_details.cached_tokens + b.usage.prompt_tokens_details.cached_tokens },
    completion_tokens_details: { ...b.usage.completion_tokens_details, reasoning_tokens: a.usage.completion_tokens_details.reasoning_tokens + b.usage.completion_tokens_details.reasoning_tokens },
  };
  const decode = {
    ...b.decode,
    decode_passes: a.decode.decode_passes + b.decode.decode_passes,
    draft_tokens: a.decode.draft_tokens + b.decode.draft_tokens,
    accepted_draft_tokens: a.decode.accepted_draft_tokens + b.decode.accepted_draft_tokens,
  };
  return { ...b, usage, decode };
}

/** The builder's `hostedCall` for a request: which names are MCP tools, and whether their calls wait for an approval. */
export function hostedCallsOf(request: ResponsesRequest): ((name: string) => { approval: boolean; server_label: string } | null) | undefined {
  const plan = request.mcp;
  if (!plan) return undefined;
  return (name) => {
    const owner = plan.owners.get(name);
    return owner ? { approval: needsApproval(owner.server.echo, owner.tool), server_label: owner.server.echo.server_label } : null;
  };
}
