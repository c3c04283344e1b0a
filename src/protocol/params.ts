/**
 * The field checks every request body shares (chat completions, completions,
 * Responses, compaction, embeddings, transcription): each returns the value or
 * undefined when absent (undefined or null), and throws a 400 naming the field
 * and what it must be otherwise. Also the limits and the checks of fields that
 * more than one face takes (stop, logit_bias, stream_options, reasoning effort,
 * images).
 */
import { ApiError, invalidParam } from "./api-error.js";
import { checkSchemaGrammar } from "./grammar-refusal.js";
import type { ReasoningEffort } from "./types.js";

export type Body = Record<string, unknown>;

/** Deepest nesting accepted in a JSON Schema (tools, response formats). */
export const MAX_SCHEMA_DEPTH = 64;

/** `prompt_cache_key` and `safety_identifier`: the hosted API's 64 characters. */
export const MAX_CACHE_KEY_LENGTH = 64;

/**
 * `user` (every face): it keys the prompt cache when `prompt_cache_key` is
 * absent, and is kept with each cached sequence, so it is bounded like one
 * (a 5 MB `user` was accepted before). Generous: the hosted API documents no
 * bound, and an identifier longer than this is no identifier.
 */
export const MAX_USER_LENGTH = 256;

/** Function tool names as the hosted API allows them. */
export const TOOL_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const isAbsent = (v: unknown) => v === undefined || v === null;
/** What a wrong value was, for messages: "null", "an array", "a string", "a number", … */
export const describe = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "string" ? "a string" : `a ${typeof v}`);

export function optionalBoolean(body: Body, param: string): boolean | undefined {
  const v = body[param];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "boolean") throw invalidParam(param, `\`${param}\` must be a boolean (true or false), got ${describe(v)}.`, "invalid_type");
  return v;
}

export function optionalString(body: Body, param: string, maxLength?: number): string | undefined {
  const v = body[param];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "string") throw invalidParam(param, `\`${param}\` must be a string, got ${describe(v)}.`, "invalid_type");
  if (maxLength !== undefined && v.length > maxLength) throw invalidParam(param, `\`${param}\` must be at most ${maxLength} characters, got ${v.length}.`);
  return v;
}

export function optionalNumber(body: Body, param: string, min: number, max: number): number | undefined {
  const v = body[param];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw invalidParam(param, `\`${param}\` must be a number between ${min} and ${max}, got ${describe(v)}.`, "invalid_type");
  if (v < min || v > max) throw invalidParam(param, `\`${param}\` must be between ${min} and ${max}, got ${v}.`);
  return v;
}

export function optionalInteger(body: Body, param: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = body[param];
  if (isAbsent(v)) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalidParam(param, `\`${param}\` must be an integer, got ${typeof v === "number" ? v : describe(v)}.`, "invalid_type");
  if (v < min || v > max) {
    // Past the largest safe integer (seed: 1e300), "at least min" would be true and no help: name both ends.
    const range = max === Number.MAX_SAFE_INTEGER && v < min ? `at least ${min}` : `between ${min} and ${max}`;
    throw invalidParam(param, `\`${param}\` must be ${range}, got ${v}.`);
  }
  return v;
}

/** 400 when `value` nests objects/arrays deeper than MAX_SCHEMA_DEPTH. Iterative: it must not overflow on what it rejects. */
export function checkSchemaDepth(value: unknown, param: string): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== "object" || node === null) continue;
    if (depth > MAX_SCHEMA_DEPTH) {
      throw invalidParam(param, `\`${param}\` nests deeper than ${MAX_SCHEMA_DEPTH} levels; flatten the schema (use $defs and $ref for recursive shapes).`, "schema_too_deep");
    }
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/**
 * A function tool's name (valid, not declared twice: `names` collects them),
 * description and parameters schema, wherever the face puts them (`at`:
 * `tools[0].function` for chat, `tools[0]` for Responses).
 */
export function checkFunctionFields(fn: Record<string, unknown>, at: string, names: Set<string>): void {
  if (typeof fn.name !== "string" || !TOOL_NAME.test(fn.name)) {
    throw invalidParam(`${at}.name`, `\`${at}.name\` must be 1–64 characters of a-z, A-Z, 0-9, underscores, dots or dashes.`);
  }
  if (names.has(fn.name)) throw invalidParam(`${at}.name`, `Tool name \`${fn.name}\` is declared twice.`);
  names.add(fn.name);
  if (!isAbsent(fn.description) && typeof fn.description !== "string") {
    throw invalidParam(`${at}.description`, `\`${at}.description\` must be a string.`, "invalid_type");
  }
  if (!isAbsent(fn.parameters) && !isObject(fn.parameters)) {
    throw invalidParam(`${at}.parameters`, `\`${at}.parameters\` must be a JSON Schema object.`, "invalid_type");
  }
  if (isObject(fn.parameters)) {
    checkSchemaDepth(fn.parameters, `${at}.parameters`);
    if (!isAbsent(fn.parameters.type) && fn.parameters.type !== "object") {
      throw invalidParam(`${at}.parameters.type`, `\`${at}.parameters\` must describe an object ("type": "object").`);
    }
    checkSchemaGrammar(fn.parameters, `${at}.parameters`);
  }
}

// ── fields more than one face takes ───────────────────────────────────────

export const REASONING_EFFORTS: readonly ReasoningEffort[] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];
export const MAX_STOP_SEQUENCES = 16;
export const MAX_N = 8;
/** `logit_bias` entries: no app biases more tokens than this one by one (to allow only a few, use a grammar: `response_format`). */
export const MAX_LOGIT_BIAS_ENTRIES = 1024;
/** Media limits (413 above them). */
export const MAX_IMAGES = 8;
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export function validateStreamOptions(body: Body, stream: boolean): boolean {
  const v = body.stream_options;
  if (isAbsent(v)) return false;
  if (!isObject(v)) throw invalidParam("stream_options", "`stream_options` must be an object such as {\"include_usage\": true}.", "invalid_type");
  if (!stream) throw invalidParam("stream_options", "`stream_options` is only allowed when `stream` is true.");
  const include = v.include_usage;
  if (isAbsent(include)) return false;
  if (typeof include !== "boolean") throw invalidParam("stream_options.include_usage", "`stream_options.include_usage` must be a boolean.", "invalid_type");
  return include;
}

export function validateStop(v: unknown): string[] {
  if (isAbsent(v)) return [];
  const list = typeof v === "string" ? [v] : v;
  if (!Array.isArray(list) || list.some((s) => typeof s !== "string")) {
    throw invalidParam("stop", "`stop` must be a string or an array of strings.", "invalid_type");
  }
  if (list.length > MAX_STOP_SEQUENCES) throw invalidParam("stop", `\`stop\` takes at most ${MAX_STOP_SEQUENCES} sequences, got ${list.length}.`);
  if (list.some((s) => s === "")) throw invalidParam("stop", "`stop` sequences must not be empty strings.");
  return list as string[];
}

export function validateLogitBias(v: unknown): Record<string, number> | undefined {
  if (isAbsent(v)) return undefined;
  if (!isObject(v)) throw invalidParam("logit_bias", "`logit_bias` must be an object mapping token ids to numbers between -100 and 100.", "invalid_type");
  let entries = 0;
  for (const key in v) {
    if (++entries > MAX_LOGIT_BIAS_ENTRIES) throw invalidParam("logit_bias", `\`logit_bias\` takes at most ${MAX_LOGIT_BIAS_ENTRIES} token ids; to allow only a few tokens, constrain the output with \`response_format\` instead.`);
  }
  for (const [key, bias] of Object.entries(v)) {
    if (!/^\d+$/.test(key)) throw invalidParam("logit_bias", `\`logit_bias\` keys must be token ids (digits), got "${key}".`);
    if (typeof bias !== "number" || bias < -100 || bias > 100) throw invalidParam("logit_bias", `\`logit_bias["${key}"]\` must be a number between -100 and 100.`);
  }
  return v as Record<string, number>;
}

/** A reasoning effort named by `param` (`reasoning_effort`, `reasoning.effort`); undefined when absent. */
export function effortParam(v: unknown, param: string): ReasoningEffort | undefined {
  if (isAbsent(v)) return undefined;
  if (typeof v !== "string" || !REASONING_EFFORTS.includes(v as ReasoningEffort)) {
    throw invalidParam(param, `\`${param}\` must be one of ${REASONING_EFFORTS.join(", ")}.`);
  }
  return v as ReasoningEffort;
}

/** An image URL as this library takes it: a `data:image/…` URI (never fetched from the network) of at most MAX_IMAGE_BYTES. */
export function checkImageDataUrl(url: string, param: string): void {
  if (!url.startsWith("data:image/")) {
    throw invalidParam(param, `Images must be base64 data URIs (data:image/...;base64,...). Remote URLs are refused: this library never fetches images from the network.`, "invalid_image_url");
  }
  if (url.length * 0.75 > MAX_IMAGE_BYTES) {
    throw new ApiError({ status: 413, param, code: "image_too_large", message: `Each image may be at most ${MAX_IMAGE_BYTES / 1024 / 1024} MB.` });
  }
}

/** Any JSON object: what web-llm needs for plain JSON mode (it cannot compile a missing schema). */
export const ANY_OBJECT_SCHEMA = '{"type":"object"}';
