/**
 * `POST /embeddings` bodies: raw JSON in, a normalized request out, or a 400
 * naming the offending param (`input[3]` for one bad input). The model's own
 * limits (window, size) are checked later, where the model is known.
 */
import { ApiError, invalidParam } from "./api-error.js";

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

/** One input: a text, or token ids (engines that take them only). */
export type EmbeddingInput = string | number[];

export interface NormalizedEmbeddingsRequest {
  /** Exactly as sent: echoed in the response. */
  model: string;
  inputs: EmbeddingInput[];
  /** Whether any input is token ids. */
  hasTokenIds: boolean;
  encodingFormat: "float" | "base64";
  dimensions: number | undefined;
}

const isTokenId = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;

export function validateEmbeddingsRequest(raw: unknown): NormalizedEmbeddingsRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ApiError({ status: 400, code: "invalid_request_body", message: "The request body must be a JSON object with `model` and `input`." });
  }
  const body = raw as Record<string, unknown>;
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw invalidParam("model", "`model` is required and must be a non-empty string naming an embedding model, e.g. `snowflake-arctic-embed-s`.", model === undefined || model === null ? "missing_required_parameter" : "invalid_type");
  }
  const { inputs, hasTokenIds } = validateInput(body.input);

  const format = body.encoding_format;
  if (format !== undefined && format !== null && format !== "float" && format !== "base64") {
    throw invalidParam("encoding_format", "`encoding_format` must be `float` or `base64`.");
  }
  const dimensions = body.dimensions;
  if (dimensions !== undefined && dimensions !== null && !(typeof dimensions === "number" && Number.isInteger(dimensions) && dimensions >= 1)) {
    throw invalidParam("dimensions", "`dimensions` must be a positive integer (the model's vector size).");
  }
  if (body.user !== undefined && body.user !== null && typeof body.user !== "string") {
    throw invalidParam("user", "`user` must be a string.", "invalid_type");
  }
  return {
    model,
    inputs,
    hasTokenIds,
    encodingFormat: format === "base64" ? "base64" : "float",
    dimensions: typeof dimensions === "number" ? dimensions : undefined,
  };
}

/** The 400 for one input longer than the model's window; `size` says how long it is ("600 tokens", "longer than 512 tokens"). */
export function inputTooLong(param: string, size: string, modelId: string, window: number): ApiError {
  return new ApiError({
    status: 400,
    code: "context_length_exceeded",
    param,
    message: `\`${param}\` is ${size}; ${modelId} reads at most ${window} tokens per input. Split the text into shorter passages.`,
  });
}

function validateInput(input: unknown): { inputs: EmbeddingInput[]; hasTokenIds: boolean } {
  if (input === undefined || input === null) {
    throw invalidParam("input", "`input` is required: a string, an array of strings, or token ids.", "missing_required_parameter");
  }
  if (typeof input === "string") {
    if (input === "") throw invalidParam("input", "`input` is an empty string; send at least one character.", "empty_input");
    return { inputs: [input], hasTokenIds: false };
  }
  if (!Array.isArray(input)) throw invalidParam("input", "`input` must be a string, an array of strings, or token ids.", "invalid_type");
  if (input.length === 0) throw invalidParam("input", "`input` is an empty array; send at least one input.", "empty_input");
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw invalidParam("input", `\`input\` has ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} are allowed per request. Split it into several requests.`, "too_many_inputs");
  }
  // One token array: [1, 2, 3].
  if (input.every((v) => typeof v === "number")) {
    const bad = input.findIndex((v) => !isTokenId(v));
    if (bad >= 0) throw invalidParam(`input[${bad}]`, `\`input[${bad}]\` is not a token id (a non-negative integer).`);
    return { inputs: [input as number[]], hasTokenIds: true };
  }
  let hasTokenIds = false;
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (typeof item === "string") {
      if (item === "") throw invalidParam(param, `\`${param}\` is an empty string; every input needs at least one character.`, "empty_input");
    } else if (Array.isArray(item)) {
      if (item.length === 0) throw invalidParam(param, `\`${param}\` is an empty token array.`, "empty_input");
      if (!item.every(isTokenId)) throw invalidParam(param, `\`${param}\` must hold token ids (non-negative integers).`);
      hasTokenIds = true;
    } else {
      throw invalidParam(param, `\`${param}\` must be a string (or an array of token ids), got ${item === null ? "null" : typeof item}.`, "invalid_type");
    }
  });
  return { inputs: input as EmbeddingInput[], hasTokenIds };
}
