/**
 * Shapes a validated request for the engine: the family's prompt context
 * (tools, thinking, the raw text of earlier replies), the engine request
 * (messages, sampling, grammar, thinking budget) and the request's stats.
 * Pure: the pipeline core calls it once the request holds its queue slot.
 */
import { newRequestId } from "../protocol/ids.js";
import type { NormalizedMessage, NormalizedRequest } from "../protocol/normalized.js";
import type { ReasoningEffort, WebGpuStats } from "../protocol/types.js";
import type { EngineRequest, GeneratedChunk } from "../engine/types.js";
import type { Family, PromptContext } from "../families/types.js";
import { contextWindowOf, type ModelRecord } from "../models/record.js";
import { ConversationMemory } from "./conversation-memory.js";
import { reachablePrediction } from "../protocol/prediction.js";

/** A request in its slot, ready to generate: what every face's `work` receives. */
export interface Prepared {
  request: NormalizedRequest;
  record: ModelRecord;
  family: Family;
  context: PromptContext;
  engineRequest: EngineRequest;
  stats: WebGpuStats;
  started: number;
  /** The reply's start, journaled by a run whose worker stopped: the generation continues after it where the engine can (generation-loop.ts). */
  resumeFrom?: GeneratedChunk[];
}

/** Reasoning budget (tokens) per effort; `max` is bounded only by max_tokens. */
const REASONING_BUDGET: Record<Exclude<ReasoningEffort, "none">, number | undefined> = {
  minimal: 128,
  low: 512,
  medium: 2048,
  high: 8192,
  xhigh: 16384,
  max: undefined,
};

/** `shaped`: the request's messages with audio prepared (what the prompt is built from); memory keys use the request's own. */
export function prepareRequest(
  request: NormalizedRequest,
  record: ModelRecord,
  family: Family,
  times: { arrived: number; started: number },
  shaped: NormalizedMessage[],
  memory: ConversationMemory,
): Prepared {
  const thinking = resolveThinking(family, request.reasoningEffort);
  const messages = request.messages;
  const context: PromptContext = {
    tools: request.toolChoice === "none" ? [] : request.tools,
    toolChoice: request.toolChoice,
    parallelToolCalls: request.parallelToolCalls,
    thinking: thinking.enabled,
    customTools: request.customTools,
    rawAssistantText: (message) => {
      const at = messages.indexOf(message);
      return memory.recall(ConversationMemory.keyOf(record.model_id, message, at > 0 ? messages[at - 1] : undefined, request.cacheKey, request.client), message);
    },
  };
  const window = contextWindowOf(record);
  // Without tools there is no call to constrain (families/grammar.ts is not consulted), as there is no tool block (families/shape.ts).
  const toolGrammar = context.tools.length > 0 ? family.toolGrammar(context) : undefined;
  const forcedTools = request.toolChoice === "required" || typeof request.toolChoice === "object";
  const maxTokens = Math.min(request.maxTokens ?? window, window);
  const engineRequest: EngineRequest = {
    model: record.model_id,
    messages: family.shapeMessages(shaped, context),
    sampling: {
      temperature: request.temperature,
      top_p: request.top_p,
      top_k: request.top_k,
      min_p: request.min_p,
      presence_penalty: request.presence_penalty,
      frequency_penalty: request.frequency_penalty,
      repetition_penalty: request.repetition_penalty,
      logit_bias: request.logit_bias,
      seed: request.seed,
      stop: request.stop,
      max_tokens: maxTokens,
    },
    responseFormat: forcedTools ? toolGrammar : (request.responseFormat ?? toolGrammar),
    thinking: {
      ...(thinking.enabled ? { enabled: true, budgetTokens: thinking.budget, endMarker: family.reasoning?.close } : { enabled: false }),
      ...(family.reasoning?.switchable ? { switchable: true } : {}),
    },
    continueFinalMessage: request.continueFinalMessage,
    topLogprobs: request.topLogprobs,
    ...(request.cacheKey !== undefined ? { promptCacheKey: request.cacheKey } : {}),
    // Cut before the engine tokenizes it: past what the reply can reach it could never be drafted from.
    ...(request.prediction !== undefined ? { prediction: reachablePrediction(request.prediction, maxTokens) } : {}),
  };
  return {
    request,
    record,
    family,
    context,
    engineRequest,
    started: times.started,
    stats: newStats(times),
  };
}

/** A request's `x_webgpu` before generation: queue time known, the rest filled in as it runs. */
export function newStats(times: { arrived: number; started: number }): WebGpuStats {
  return { request_id: newRequestId(), queue_ms: Math.round(times.started - times.arrived), ttft_ms: 0, prefill_tokens_per_s: 0, decode_tokens_per_s: 0, prefill_tokens: 0, decode_passes: 0, draft_tokens: 0, accepted_draft_tokens: 0 };
}

function resolveThinking(family: Family, effort: ReasoningEffort | undefined): { enabled: boolean; budget?: number } {
  if (!family.reasoning) return { enabled: false };
  if (effort === undefined) return { enabled: family.reasoning.defaultOn };
  if (effort === "none") return { enabled: false };
  return { enabled: true, budget: REASONING_BUDGET[effort] };
}
