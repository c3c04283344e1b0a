/**
 * Continuing a reply from the text it had reached (`EngineRequest.continueReply`,
 * a background response resumed after its worker stopped). Prefilling the
 * prompt and the reply so far rebuilds the KV cache, and with it everything a
 * greedy decode depends on — except decoding state that lives outside the
 * tokens: a grammar's position (response formats, tool grammars: web-llm's
 * completion API, which a continuation goes through, takes none), penalty
 * counts over the tokens generated. A reasoning budget is handed on: what is
 * left of it, or none once the reasoning closed. A request that cannot be
 * continued is regenerated from the start instead (background-run.ts checks
 * that the regenerated events are the ones sent before).
 */
import type { EngineRequest } from "./types.js";

/** Whether `request`'s reply can go on after `continueReply` (`startTokens` long) as it would have. */
export function canContinue(request: EngineRequest, startTokens: number): boolean {
  const sampling = request.sampling;
  const budget = reasoningBudgetLeft(request, startTokens);
  return (
    request.responseFormat === undefined &&
    request.rawPrompt === undefined &&
    !request.continueFinalMessage &&
    !sampling.presence_penalty &&
    !sampling.frequency_penalty &&
    (sampling.repetition_penalty ?? 1) === 1 &&
    (budget === undefined || budget > 0)
  );
}

/**
 * The request that continues the reply: the start as an open final assistant
 * message, `max_tokens` and the reasoning budget less what the start spent.
 */
export function continuedRequest(request: EngineRequest, startTokens: number): EngineRequest {
  const start = request.continueReply ?? "";
  const budget = reasoningBudgetLeft(request, startTokens);
  return {
    ...request,
    messages: [...request.messages, { role: "assistant", content: start }],
    continueFinalMessage: true,
    continueReply: undefined,
    sampling: { ...request.sampling, max_tokens: Math.max(1, request.sampling.max_tokens - startTokens) },
    thinking: { ...request.thinking, budgetTokens: budget },
  };
}

/** The reasoning budget left after the start: none when there was none or the start closed its reasoning. */
function reasoningBudgetLeft(request: EngineRequest, startTokens: number): number | undefined {
  const thinking = request.thinking;
  if (!thinking.enabled || thinking.budgetTokens === undefined) return undefined;
  if (thinking.endMarker && request.continueReply?.includes(thinking.endMarker)) return undefined;
  return thinking.budgetTokens - startTokens;
}
