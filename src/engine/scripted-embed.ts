/**
 * The scripted engine's embeddings: deterministic vectors with no model, so
 * an app's retrieval code (chunking, ranking, thresholds, UI) can be tested
 * without a GPU. The default is a hashed bag of words: each word (lowercased
 * letters and digits) adds ±1 at a position picked by its hash, then the
 * vector is scaled to unit length. Same text → same vector; texts that share
 * words have a higher cosine similarity than texts that share none.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ModelRecord } from "../models/record.js";
import { embeddingDimensionsOf, embeddingWindowOf } from "../models/embedding.js";
import { inputTooLong } from "../protocol/validate-embeddings.js";
import type { EmbedRequest, EmbedResult } from "./types.js";

/** The vector size when the record names none (snowflake-arctic-embed-s's). */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 384;

const WORD = /[\p{L}\p{N}]+/gu;

/** FNV-1a, 32 bits: stable across runs and platforms. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** A unit vector of `dimensions` from the words of `text`. */
export function hashedBagOfWords(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(WORD) ?? [];
  // Text without a word (punctuation only) still gets a vector of its own.
  for (const word of words.length > 0 ? words : [text]) {
    const hash = fnv1a(word);
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector.map((_, i) => (i === 0 ? 1 : 0)) : vector.map((v) => v / norm);
}

/**
 * Every input counted with the scripted tokenizer against the record's window
 * (400 naming `input[i]`); the token counts, in order.
 */
export function checkScriptedInputs(record: ModelRecord, request: EmbedRequest, countTokens: (text: string) => number): number[] {
  const window = embeddingWindowOf(record);
  return request.input.map((item, i) => {
    const param = `input[${request.firstIndex + i}]`;
    if (typeof item !== "string") throw new ApiError({ status: 400, code: "unsupported_input", param, message: "The scripted engine embeds text only, not token ids." });
    const tokens = countTokens(item);
    if (tokens > window) throw inputTooLong(param, `${tokens} tokens`, record.model_id, window);
    return tokens;
  });
}

/** One batch: checked as above, then each text embedded with `embed` or the default. */
export function scriptedEmbed(
  record: ModelRecord,
  request: EmbedRequest,
  countTokens: (text: string) => number,
  embed: ((text: string) => number[]) | undefined,
): EmbedResult {
  const dimensions = embeddingDimensionsOf(record) ?? SCRIPTED_EMBEDDING_DIMENSIONS;
  const promptTokens = checkScriptedInputs(record, request, countTokens).reduce((sum, n) => sum + n, 0);
  const embeddings = (request.input as string[]).map((text) => (embed ? embed(text) : hashedBagOfWords(text, dimensions)));
  return { embeddings, promptTokens };
}
