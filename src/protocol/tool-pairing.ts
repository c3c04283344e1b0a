/**
 * Tool results pair with tool calls, as the hosted API requires, so an app
 * that works here does not break when it points at a hosted server (the
 * remote fallback makes that a real path). The messages and params are the
 * hosted API's own, word for word (its `param` form `messages.[i].role`, dot
 * included, and its spelling "preceeding"), since apps match on them; code null
 * as there.
 *
 * Chat: every run of `tool` messages must follow an assistant message with
 * `tool_calls`, answer only its call ids, and answer every one of them before
 * the next non-tool message. Responses: every `function_call_output` must name
 * a `function_call` of the input or of the `previous_response_id` chain.
 */
import { ApiError } from "./api-error.js";
import type { NormalizedMessage } from "./normalized.js";

const roleParam = (i: number) => `messages.[${i}].role`;

function orphanTool(i: number, id: string): ApiError {
  return new ApiError({
    status: 400,
    param: roleParam(i),
    message: `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (\`messages[${i}].tool_call_id\` is '${id}', which no tool call of the assistant message before it has.)`,
  });
}

function unanswered(i: number, ids: Iterable<string>): ApiError {
  return new ApiError({
    status: 400,
    param: roleParam(i),
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(", ")}`,
  });
}

/** Chat messages as sent (indices are the request's): throws the hosted API's 400 for an unpaired call or result. */
export function checkToolPairing(messages: readonly NormalizedMessage[]): void {
  /** The open assistant turn's call ids not answered yet; null when no turn is open. */
  let pending: Set<string> | null = null;
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      if (!pending?.delete(m.toolCallId ?? "")) throw orphanTool(i, m.toolCallId ?? "");
      return;
    }
    // Any other message closes the open turn: every call must have had its answer by now.
    if (pending && pending.size > 0) throw unanswered(i, pending);
    pending = m.role === "assistant" && m.toolCalls.length > 0 ? new Set(m.toolCalls.map((c) => c.id)) : null;
  });
  const open = pending as Set<string> | null;
  if (open && open.size > 0) throw unanswered(messages.length - 1, open);
}

/** Responses: the 400 for a `function_call_output` whose call_id names no known `function_call`. */
export function noToolCallFound(callId: string): ApiError {
  return new ApiError({ status: 400, param: "input", message: `No tool call found for function call output with call_id ${callId}.` });
}
