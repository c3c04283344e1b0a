/**
 * `POST /completions` bodies (the legacy Completions API): raw JSON in, a
 * normalized request out, or a 400 naming the offending param. The sampling
 * fields are checked as chat checks them (validate.ts); what web-llm's
 * completion API cannot serve is refused by name with the reason.
 */
import { ApiError, invalidParam } from "./api-error.js";
import { describe, isAbsent, isObject, MAX_N, MAX_USER_LENGTH, optionalBoolean, optionalInteger, optionalNumber, optionalString, validateLogitBias, validateStop, validateStreamOptions, type Body } from "./params.js";

/** The legacy API's default `max_tokens`. */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** The legacy API's most alternatives per token. */
export const COMPLETIONS_MAX_LOGPROBS = 5;
/** Prompts one request may carry (each runs `n` generations in turn). */
export const MAX_PROMPTS = 64;

export interface NormalizedCompletionRequest {
  /** Exactly as sent: echoed in the response. */
  model: string;
  prompts: string[];
  maxTokens: number;
  n: number;
  echo: boolean;
  /** Alternatives per token; undefined: no logprobs. */
  logprobs: number | undefined;
  stop: string[];
  stream: boolean;
  includeUsage: boolean;
  seed?: number;
  temperature?: number;
  top_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  logit_bias?: Record<string, number>;
  /** `user`: keys the prompt cache. */
  cacheKey?: string;
}

export function validateCompletionRequest(raw: unknown): NormalizedCompletionRequest {
  if (!isObject(raw)) {
    throw new ApiError({ status: 400, code: "invalid_request_body", message: `The request body must be a JSON object with \`model\` and \`prompt\`, got ${describe(raw)}.` });
  }
  const body = raw as Body;
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw invalidParam("model", "`model` is required and must be a non-empty string (a catalog id such as `Qwen3-0.6B-q4f16_1-MLC` or an alias).", isAbsent(model) ? "missing_required_parameter" : "invalid_type");
  }
  refuseUnservable(body);
  const prompts = validatePrompt(body.prompt);
  const stream = optionalBoolean(body, "stream") ?? false;
  const includeUsage = validateStreamOptions(body, stream);
  const echo = optionalBoolean(body, "echo") ?? false;
  const logprobs = optionalInteger(body, "logprobs", 0, COMPLETIONS_MAX_LOGPROBS);
  if (echo && logprobs !== undefined) {
    throw invalidParam("logprobs", "`logprobs` with `echo: true` asks for the prompt tokens' log probabilities, which web-llm does not compute (it reports generated tokens only). Drop `echo`, or `logprobs`.", "unsupported_parameter");
  }
  return {
    model,
    prompts,
    maxTokens: optionalInteger(body, "max_tokens", 1) ?? COMPLETIONS_DEFAULT_MAX_TOKENS,
    n: optionalInteger(body, "n", 1, MAX_N) ?? 1,
    echo,
    logprobs,
    stop: validateStop(body.stop),
    stream,
    includeUsage,
    seed: optionalInteger(body, "seed", Number.MIN_SAFE_INTEGER),
    temperature: optionalNumber(body, "temperature", 0, 2),
    top_p: optionalNumber(body, "top_p", 0, 1),
    presence_penalty: optionalNumber(body, "presence_penalty", -2, 2),
    frequency_penalty: optionalNumber(body, "frequency_penalty", -2, 2),
    logit_bias: validateLogitBias(body.logit_bias),
    cacheKey: optionalString(body, "user", MAX_USER_LENGTH),
  };
}

/** What the legacy API defines but web-llm's completion API cannot do. */
function refuseUnservable(body: Body): void {
  if (!isAbsent(body.suffix)) {
    optionalString(body, "suffix");
    throw invalidParam("suffix", "`suffix` (text after the insertion point) is not supported: web-llm's completion API only continues a prompt, it has no insertion mode.", "unsupported_parameter");
  }
  const bestOf = optionalInteger(body, "best_of", 1, 20);
  if (bestOf !== undefined && bestOf > 1) {
    throw invalidParam("best_of", "`best_of` greater than 1 is not supported: web-llm cannot generate candidates and return the one with the highest log probability per token. Use `n` and choose among the choices yourself.", "unsupported_parameter");
  }
}

function validatePrompt(v: unknown): string[] {
  if (isAbsent(v)) {
    throw invalidParam("prompt", "`prompt` is required: the text the model continues (a string, or an array of strings).", "missing_required_parameter");
  }
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list)) throw invalidParam("prompt", `\`prompt\` must be a string or an array of strings, got ${describe(v)}.`, "invalid_type");
  if (list.length === 0) throw invalidParam("prompt", "`prompt` must not be an empty array.");
  if (list.length > MAX_PROMPTS) throw invalidParam("prompt", `\`prompt\` takes at most ${MAX_PROMPTS} prompts, got ${list.length}.`);
  list.forEach((item, i) => {
    const at = typeof v === "string" ? "prompt" : `prompt[${i}]`;
    if (typeof item === "number" || (Array.isArray(item) && item.every((t) => typeof t === "number"))) {
      throw invalidParam(at, "Prompts as token ids are not supported: web-llm's completion API takes text. Send the prompt as a string.", "unsupported_parameter");
    }
    if (typeof item !== "string") throw invalidParam(at, `\`${at}\` must be a string, got ${describe(item)}.`, "invalid_type");
    if (item === "") throw invalidParam(at, `\`${at}\` must not be empty: web-llm adds no start token to a raw prompt, so an empty one leaves the model nothing to continue.`);
  });
  return list as string[];
}
