/**
 * Continuing a reply from the text it had reached (`EngineRequest.continueReply`,
 * a background response resumed after its worker stopped). Prefilling the
 * prompt and the reply so far rebuilds the KV cache, and with it everything a
 * greedy decode depends on — unless the request carries decoding state that
 * lives outside the tokens: a grammar's position (response formats, tool
 * grammars), penalty counts over the tokens generated, a reasoning budget
 * partly spent. Such a request cannot be continued exactly; it is
 * regenerated from the start instead (background-run.ts checks that the
 * regenerated events are the ones sent before).
 */
import type { EngineRequest } from "./types.js";

/** Whether everything greedy decoding of `request` depends on is in its prompt and reply text. */
export function decodingStateIsInTheText(request: EngineRequest): boolean {
  const sampling = request.sampling;
  return (
    request.responseFormat === undefined &&
    request.rawPrompt === undefined &&
    !request.continueFinalMessage &&
    !sampling.presence_penalty &&
    !sampling.frequency_penalty &&
    (sampling.repetition_penalty ?? 1) === 1 &&
    !(request.thinking.enabled && request.thinking.budgetTokens !== undefined)
  );
}
