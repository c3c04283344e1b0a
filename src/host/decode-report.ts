/**
 * How the engine decoded a reply, as the host reports it: forward passes and
 * speculative drafts in `x_webgpu` (chat completions, chunks, Responses), and
 * OpenAI's Predicted Outputs counts in `completion_tokens_details`.
 */
import type { EngineUsage } from "../engine/types.js";
import type { Usage, WebGpuStats } from "../protocol/types.js";

export type DecodeCounts = Pick<WebGpuStats, "decode_passes" | "draft_tokens" | "accepted_draft_tokens" | "jump_forward_tokens" | "batch">;

/** An engine that does not count its passes decodes one token per pass. */
export function decodeCounts(usage: EngineUsage): DecodeCounts {
  return {
    decode_passes: usage.decodePasses ?? usage.completionTokens,
    draft_tokens: usage.draftTokens ?? 0,
    accepted_draft_tokens: usage.acceptedDraftTokens ?? 0,
    // Only where a grammar forced drafts: other replies stay as they were.
    ...(usage.jumpForwardTokens ? { jump_forward_tokens: usage.jumpForwardTokens } : {}),
    // Only a batching engine reports it: others' replies stay as they were.
    ...(usage.batch ? { batch: { max_rows: usage.batch.maxRows, mean_rows: usage.batch.meanRows, passes: usage.batch.passes } } : {}),
  };
}

/**
 * Of `fed` prompt tokens (the prompt, and the reply tokens a continuation
 * feeds again), those the cache held: never all of them, since at least one
 * is always prefilled (its logits give the first output token).
 */
export function cachedOfFed(fed: number, cachedTokens: number): number {
  return Math.max(0, Math.min(cachedTokens, fed - 1));
}

/** Adds one choice's counts to the request's stats (summed over choices, as prefill_tokens; rows per pass: most, and mean over all passes). */
export function addDecodeCounts(stats: WebGpuStats, counts: DecodeCounts): void {
  stats.decode_passes += counts.decode_passes;
  stats.draft_tokens += counts.draft_tokens;
  stats.accepted_draft_tokens += counts.accepted_draft_tokens;
  if (counts.jump_forward_tokens) stats.jump_forward_tokens = (stats.jump_forward_tokens ?? 0) + counts.jump_forward_tokens;
  if (counts.batch) stats.batch = mergeBatch(stats.batch, counts.batch);
}

function mergeBatch(a: WebGpuStats["batch"], b: NonNullable<WebGpuStats["batch"]>): NonNullable<WebGpuStats["batch"]> {
  if (!a) return { ...b };
  const passes = a.passes + b.passes;
  const mean = passes === 0 ? 0 : (a.mean_rows * a.passes + b.mean_rows * b.passes) / passes;
  return { max_rows: Math.max(a.max_rows, b.max_rows), mean_rows: Math.round(mean * 100) / 100, passes };
}

/** `accepted_prediction_tokens` / `rejected_prediction_tokens`, for a request with a prediction. */
export function predictionDetails(usage: EngineUsage, predicted: boolean): Pick<Usage["completion_tokens_details"], "accepted_prediction_tokens" | "rejected_prediction_tokens"> {
  if (!predicted) return {};
  return { accepted_prediction_tokens: usage.acceptedPredictionTokens ?? 0, rejected_prediction_tokens: usage.rejectedPredictionTokens ?? 0 };
}

/** Sums the details of two choices' usage (prediction counts only where either has them). */
export function addCompletionDetails(a: Usage["completion_tokens_details"], b: Usage["completion_tokens_details"]): Usage["completion_tokens_details"] {
  const sum: Usage["completion_tokens_details"] = { reasoning_tokens: a.reasoning_tokens + b.reasoning_tokens };
  if (a.accepted_prediction_tokens !== undefined || b.accepted_prediction_tokens !== undefined) {
    sum.accepted_prediction_tokens = (a.accepted_prediction_tokens ?? 0) + (b.accepted_prediction_tokens ?? 0);
    sum.rejected_prediction_tokens = (a.rejected_prediction_tokens ?? 0) + (b.rejected_prediction_tokens ?? 0);
  }
  return sum;
}
