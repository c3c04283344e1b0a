/**
 * web-llm failures → ApiError. web-llm's error classes are not exported, so
 * they are told apart by `err.name` (reference/webllm-0.2.86.md §11); a few
 * plain `Error`s are recognised by their message. Pure: tested in Node.
 */
import { ApiError } from "../../protocol/api-error.js";
import { DEVICE_LOST } from "../types.js";

const BAD_REQUEST = new Set([
  "UnsupportedFieldsError",
  "MessageOrderError",
  "SystemMessageOrderError",
  "ContentTypeError",
  "UnsupportedRoleError",
  "UserMessageContentErrorForNonVLM",
  "UnsupportedContentPartError",
  "UnsupportedDetailError",
  "UnsupportedImageURLError",
  "MultipleTextContentError",
  "StreamingCountError",
  "SeedTypeError",
  "InvalidStreamOptionsError",
  "InvalidResponseFormatError",
  "InvalidResponseFormatGrammarError",
  "InvalidResponseFormatStructuralTagError",
  "GrammarMatcherInitError",
  "CustomResponseFormatError",
  "CustomSystemPromptError",
  "UnsupportedModelIdError",
  "UnclearModelToUseError",
  "ConfigValueError",
  "MinValueError",
  "RangeError",
  "NonNegativeError",
  "InvalidNumberStringError",
  "DependencyError",
  "AudioInputError",
  "ReloadArgumentSizeUnmatchedError",
  "ReloadModelIdNotUniqueError",
  "CannotFindImageEmbedError",
]);

const NOT_FOUND = new Set(["ModelNotFoundError", "SpecifiedModelNotFoundError", "IncorrectPipelineLoadedError"]);

/** Names that mean the GPU device went away: the host unloads and reloads on the next request. */
const DEVICE_GONE = new Set(["DeviceLostError", "ModelNotLoadedError", "WorkerEngineModelNotLoadedError"]);

const NO_WEBGPU = new Set([
  "WebGPUNotAvailableError",
  "WebGPUNotFoundError",
  "ShaderF16SupportError",
  "FeatureSupportError",
  "NoServiceWorkerAPIError",
  "ServiceWorkerInitializationError",
  "NonWorkerEnvironmentError",
]);

const TOO_LARGE = new Set(["PrefillChunkSizeSmallerThanImageError", "EmbeddingExceedContextWindowSizeError"]);

/** Which phase failed: a load failure of the network kind is a bad gateway, not a bug. */
export type WebLlmPhase = "load" | "generate";

/**
 * Maps anything web-llm (or the browser under it) throws to an ApiError with
 * the contract's status. Aborts are not errors of web-llm: callers handle them first.
 */
export function mapWebLlmError(error: unknown, phase: WebLlmPhase = "generate"): ApiError {
  if (error instanceof ApiError) return error;
  const name = typeof error === "object" && error !== null ? String((error as { name?: unknown }).name ?? "") : "";
  const raw = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error);
  const message = raw || name || "web-llm failed without a message.";

  if (name === "ContextWindowSizeExceededError") {
    return new ApiError({
      status: 400,
      code: "context_length_exceeded",
      param: "messages",
      message: `${firstLine(message)}. Shorten the conversation (drop or summarise early messages) or lower max_tokens.`,
    });
  }
  if (DEVICE_GONE.has(name)) {
    return new ApiError({
      status: 503,
      code: DEVICE_LOST,
      message: `The GPU device was lost (${name}: ${firstLine(message)}). The model will be loaded again on the next request; if this repeats, use a smaller model or a shorter context.`,
    });
  }
  if (name === "GrammarMatcherInitError" || name.startsWith("InvalidResponseFormat") || name === "CustomResponseFormatError") {
    return new ApiError({ status: 400, code: "invalid_response_format", param: "response_format", message: `The response format could not be compiled: ${message}` });
  }
  if (/^Role is not supported: /.test(message)) {
    return new ApiError({
      status: 400,
      code: "unsupported_role",
      param: "messages",
      message: `${message}. This model's conversation template has no such role; send tool results as user messages or use a model whose family defines a tool role.`,
    });
  }
  if (BAD_REQUEST.has(name)) return new ApiError({ status: 400, code: "invalid_request", message: `${name}: ${message}` });
  if (NOT_FOUND.has(name)) return new ApiError({ status: 404, code: "model_not_found", param: "model", message: `${name}: ${message}` });
  if (TOO_LARGE.has(name)) return new ApiError({ status: 413, code: "input_too_large", param: "messages", message: `${name}: ${message}` });
  if (NO_WEBGPU.has(name) || /Unable to find a compatible GPU|Cannot initialize runtime because of requested/.test(message)) {
    return new ApiError({ status: 503, code: "webgpu_unavailable", message: `${name ? `${name}: ` : ""}${message}` });
  }
  if (name === "QuotaExceededError" || /Failed to store |ArtifactIndexedDBCache failed to fetch|QuotaExceeded/.test(message)) {
    return new ApiError({
      status: 507,
      code: "insufficient_storage",
      message: `Storing the model's files failed (${message}). Free browser storage (other sites, cached models) or pick a smaller model.`,
    });
  }
  if (name === "IntegrityError") return new ApiError({ status: 502, code: "integrity_error", message: `A model file failed its integrity check: ${message}` });
  if (phase === "load" && (name === "TypeError" && /fetch/i.test(message) || /Cannot fetch |NetworkError|Failed to fetch/.test(message))) {
    return new ApiError({ status: 502, code: "download_failed", message: `Downloading the model failed: ${message}. Check the connection (or the model URLs) and try again.` });
  }
  return new ApiError({ status: 500, code: "engine_error", message: `web-llm ${phase} failed: ${name && name !== "Error" ? `${name}: ` : ""}${message}` });
}

function firstLine(text: string): string {
  return text.split("\n")[0].replace(/[.\s]+$/, "");
}
