/**
 * The Prompt API reports failures as DOMExceptions with the names its
 * explainer gives; the pipeline reports OpenAI-shaped ApiErrors. This module
 * translates, in one place.
 */
import { ApiError, isAbortError } from "../protocol/api-error.js";

export type PromptApiErrorName =
  | "AbortError"
  | "InvalidStateError"
  | "NotSupportedError"
  | "QuotaExceededError"
  | "SyntaxError"
  | "EncodingError"
  | "NetworkError"
  | "OperationError";

export function domError(name: PromptApiErrorName, message: string): DOMException {
  return new DOMException(message, name);
}

/**
 * A `QuotaExceededError` carrying `requested` (tokens the input needs) and
 * `quota` (tokens left in the context window), as the explainer's proposed
 * QuotaExceededError class does.
 */
export function quotaExceeded(requested: number, quota: number): DOMException & { requested: number; quota: number } {
  const error = domError("QuotaExceededError", `The input needs ${requested} tokens; the session has ${quota} left in its context window (initial prompts are never evicted).`);
  return Object.assign(error, { requested, quota });
}

/** What an aborted signal rejects with: its reason, or an AbortError. */
export function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? domError("AbortError", "The operation was aborted.");
}

/** Codes of the pipeline's refusals that mean "this model or device cannot do that". */
const NOT_SUPPORTED_CODES = new Set(["webgpu_unavailable", "unsupported_device", "model_does_not_fit", "provider_requirements_unmet", "model_not_found", "unsupported_input", "unsupported_parameter"]);

/** Any failure of the client, as the DOMException a Prompt API caller expects. */
export function toDomException(error: unknown, signal?: AbortSignal): unknown {
  if (error instanceof DOMException || error instanceof TypeError) return error;
  if (signal?.aborted) return abortReason(signal);
  if (isAbortError(error)) return domError("AbortError", "The operation was aborted.");
  if (!(error instanceof ApiError)) return domError("OperationError", error instanceof Error ? error.message : String(error));
  if (error.code === "context_length_exceeded") return domError("QuotaExceededError", error.message);
  if (error.param?.startsWith("response_format")) return domError("NotSupportedError", error.message);
  if (error.code && NOT_SUPPORTED_CODES.has(error.code)) return domError("NotSupportedError", error.message);
  if (error.status === 400 || error.status === 404 || error.status === 413) return domError("NotSupportedError", error.message);
  if (error.code === "download_failed" || error.code === "network_error") return domError("NetworkError", error.message);
  return domError("OperationError", error.message);
}
