/**
 * Compaction (`POST /responses/compact`, Open Responses `CompactResource`):
 * a long conversation is folded into one `compaction` item that a small
 * model's context window can hold. Locally the model itself writes a summary of
 * the older turns; the item carries that summary plus the recent turns
 * verbatim. Its `encrypted_content` is opaque to clients (as the hosted API's
 * is) but not encrypted: it is a versioned, base64url-encoded JSON payload that
 * only this library reads back, when the item is sent again as input.
 *
 * This module is pure (no engine): request validation, the split into older
 * and recent turns, the summarization prompt, and encoding/decoding the item.
 */
import { checkValueDepth } from "../json-depth.js";
import { ApiError, invalidParam } from "../api-error.js";
import { randomId } from "../ids.js";
import { isAbsent, isObject } from "../params.js";
import type { ResponseUsage } from "./types.js";
import { bytesToBase64 } from "../base64.js";

/** Marks our payload format; a different prefix is not ours to decode. */
export const COMPACTION_PREFIX = "wgo-compaction.v1.";

/** How many of the latest user turns (each with what followed it) stay verbatim. */
export const RECENT_USER_TURNS = 1;

export const SUMMARY_PROMPT =
  "Summarize the conversation above for your own later use, as a context checkpoint: keep every fact, name, number, decision, " +
  "open question and tool result that may matter later, in plain sentences. Write only the summary.";

/** Heads the summary when the item is expanded back into the conversation. */
export const SUMMARY_HEADING = "Summary of the earlier conversation:";

/** The body of `POST /responses/compact` (Open Responses CompactResponseMethodPublicBody). */
export interface CompactResponseParams {
  model: string;
  input?: string | unknown[] | null;
  previous_response_id?: string | null;
  instructions?: string | null;
  prompt_cache_key?: string | null;
}

export interface CompactRequest {
  model: string;
  /** The input items as sent (raw: the Responses validator checks them when they are used). */
  input: unknown[];
  previousResponseId: string | null;
  instructions: string | null;
  /** Routes the summarizing turn to this key's cached prompts, as on a Responses request. */
  promptCacheKey: string | null;
}

export interface CompactionItem {
  type: "compaction";
  id: string;
  encrypted_content: string;
}

export interface CompactResource {
  id: string;
  object: "response.compaction";
  output: CompactionItem[];
  created_at: number;
  usage: ResponseUsage;
}

interface Payload {
  /** the summary the model wrote of the older turns, or null when nothing was old enough */
  summary: string | null;
  /** the recent turns, verbatim input items */
  items: unknown[];
}


/** CompactResponseMethodPublicBody: `model` required; `input`, `previous_response_id`, `instructions` optional. */
/** The request checked field by field, then as a whole for nesting (json-depth.ts): the kept turns are serialised recursively. */
export function validateCompactRequest(raw: unknown): CompactRequest {
  const request = validateCompactFields(raw);
  checkValueDepth(raw);
  return request;
}

function validateCompactFields(raw: unknown): CompactRequest {
  if (!isObject(raw)) throw new ApiError({ status: 400, code: "invalid_request_body", message: "The request body must be a JSON object." });
  const model = raw.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw invalidParam("model", "`model` is required: the model that writes the summary (a catalog id or alias).", isAbsent(model) ? "missing_required_parameter" : "invalid_type");
  }
  const optionalString = (key: string): string | null => {
    const v = raw[key];
    if (isAbsent(v)) return null;
    if (typeof v !== "string") throw invalidParam(key, `\`${key}\` must be a string.`, "invalid_type");
    return v;
  };
  const previousResponseId = optionalString("previous_response_id");
  const instructions = optionalString("instructions");
  const promptCacheKey = optionalString("prompt_cache_key");
  if (promptCacheKey !== null && promptCacheKey.length > 64) throw invalidParam("prompt_cache_key", `\`prompt_cache_key\` must be at most 64 characters, got ${promptCacheKey.length}.`);
  const input = raw.input;
  let items: unknown[];
  if (isAbsent(input)) items = [];
  else if (typeof input === "string") items = [{ type: "message", role: "user", content: input }];
  else if (Array.isArray(input)) items = input;
  else throw invalidParam("input", "`input` must be a string or an array of items.", "invalid_type");
  if (items.length === 0 && previousResponseId === null) {
    throw invalidParam("input", "Nothing to compact: send `input` items, a `previous_response_id`, or both.", "missing_required_parameter");
  }
  for (const key of Object.keys(raw)) {
    if (!["model", "input", "previous_response_id", "instructions", "prompt_cache_key"].includes(key)) {
      throw invalidParam(key, `Unknown parameter: \`${key}\`. /responses/compact takes model, input, previous_response_id, instructions and prompt_cache_key.`, "unknown_parameter");
    }
  }
  return { model, input: items, previousResponseId, instructions, promptCacheKey };
}

const isUserMessage = (item: unknown) => isObject(item) && (item.type === "message" || isAbsent(item.type)) && item.role === "user";

/**
 * Older turns (to summarize) and recent turns (kept verbatim): the recent part
 * starts at the RECENT_USER_TURNS-th user message from the end. Leading
 * compaction items from an earlier pass count as older, so compaction nests.
 */
export function splitForCompaction(items: unknown[], recentUserTurns = RECENT_USER_TURNS): { older: unknown[]; recent: unknown[] } {
  let seen = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    if (isUserMessage(items[i]) && ++seen === recentUserTurns) return { older: items.slice(0, i), recent: items.slice(i) };
  }
  return { older: [], recent: [...items] };
}

function toBase64Url(text: string): string {
  return bytesToBase64(new TextEncoder().encode(text)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

export function compactionItem(summary: string | null, recent: unknown[]): CompactionItem {
  const payload: Payload = { summary, items: recent };
  return { type: "compaction", id: `cmp_${randomId(24)}`, encrypted_content: COMPACTION_PREFIX + toBase64Url(JSON.stringify(payload)) };
}

export const isCompactionItem = (item: unknown): item is Record<string, unknown> => isObject(item) && item.type === "compaction";

/** The input items a compaction item stands for: the summary as a user-side note, then the recent turns. */
export function expandCompactionItem(item: Record<string, unknown>, param: string): unknown[] {
  const content = item.encrypted_content;
  const bad = (why: string) => invalidParam(`${param}.encrypted_content`, `This compaction item cannot be read back: ${why}. Send back the item /responses/compact returned, unchanged.`, "invalid_encrypted_content");
  if (typeof content !== "string") throw bad("`encrypted_content` is missing");
  if (!content.startsWith(COMPACTION_PREFIX)) throw bad("it was not made by this library (hosted compaction items are encrypted for the hosted models only)");
  let payload: Payload;
  try {
    payload = JSON.parse(fromBase64Url(content.slice(COMPACTION_PREFIX.length))) as Payload;
  } catch {
    throw bad("its content is damaged");
  }
  if (!isObject(payload) || !Array.isArray(payload.items) || !(payload.summary === null || typeof payload.summary === "string")) throw bad("its content is damaged");
  const note = payload.summary === null ? [] : [{ type: "message", role: "user", content: [{ type: "input_text", text: `${SUMMARY_HEADING}\n${payload.summary}` }] }];
  return [...note, ...payload.items];
}

/** Replaces every compaction item of an input array by the items it stands for (nested ones too). */
export function expandCompactionItems(items: unknown[], param = "input"): unknown[] {
  if (!items.some(isCompactionItem)) return items;
  return items.flatMap((item, i) => (isCompactionItem(item) ? expandCompactionItems(expandCompactionItem(item, `${param}[${i}]`), param) : [item]));
}

export const emptyUsage = (): ResponseUsage => ({ input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 });
