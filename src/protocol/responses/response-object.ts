/**
 * The Response object's own shapes, built from the request and the run's
 * result: the opening `in_progress` response a request starts, the finished
 * one, and the `incomplete` one a run whose worker stopped ends as. Pure
 * protocol (no host, no store): the host's Responses face and recovery both
 * build their responses here.
 */
import { randomId } from "../ids.js";
import type { Usage } from "../types.js";
import { responseUsage } from "./output-builder.js";
import type { ResponseObject } from "./types.js";
import type { ResponsesRequest } from "./validate.js";

export const newResponseId = () => `resp_${randomId(32)}`;

/** A stored response that is not done: retrieve answers its live state, cancel and streams reach its run. */
const UNFINISHED = new Set(["queued", "in_progress"]);

export function isUnfinished(status: ResponseObject["status"]): boolean {
  return UNFINISHED.has(status);
}

type WebGpuCounts = NonNullable<ResponseObject["x_webgpu"]>;

/** How a generation ended, as a finished response reports it (the host's GenerationResult). */
export interface FinishedGeneration {
  finish: string;
  usage: Usage;
  decode: Omit<WebGpuCounts, "resumed">;
  continued?: WebGpuCounts["resumed"];
}

/** The response a request opens with: `in_progress`, no output yet, its parameters echoed. */
export function baseResponse(request: ResponsesRequest): ResponseObject {
  const e = request.echo;
  return {
    id: newResponseId(),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    completed_at: null,
    status: "in_progress",
    incomplete_details: null,
    model: e.model,
    previous_response_id: e.previous_response_id,
    instructions: e.instructions,
    output: [],
    error: null,
    tools: e.tools,
    tool_choice: e.tool_choice,
    truncation: e.truncation,
    parallel_tool_calls: e.parallel_tool_calls,
    text: e.text,
    top_p: e.top_p,
    presence_penalty: e.presence_penalty,
    frequency_penalty: e.frequency_penalty,
    top_logprobs: e.top_logprobs,
    temperature: e.temperature,
    reasoning: e.reasoning,
    usage: null,
    max_output_tokens: e.max_output_tokens,
    max_tool_calls: e.max_tool_calls,
    store: e.store,
    background: e.background,
    service_tier: e.service_tier,
    metadata: e.metadata,
    safety_identifier: e.safety_identifier,
    prompt_cache_key: e.prompt_cache_key,
    user: e.user,
  };
}

/** A response whose worker stopped and that could not go on: `incomplete`, with `output` (what its events had sent). */
export function interruptedResponse(base: ResponseObject, output: ResponseObject["output"], code: string, message: string): ResponseObject {
  return {
    ...base,
    status: "incomplete",
    completed_at: Math.floor(Date.now() / 1000),
    incomplete_details: { reason: "interrupted" },
    error: { code, message },
    output,
  };
}

export function finalResponse(base: ResponseObject, output: ResponseObject["output"], result: FinishedGeneration): ResponseObject {
  const incomplete = result.finish === "length";
  return {
    ...base,
    completed_at: Math.floor(Date.now() / 1000),
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    output,
    usage: responseUsage(result.usage),
    x_webgpu: { ...result.decode, ...(result.continued ? { resumed: result.continued } : {}) },
  };
}
