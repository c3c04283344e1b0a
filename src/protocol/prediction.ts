/**
 * `prediction` (OpenAI's Predicted Outputs): `{ type: "content", content }`,
 * content a string or an array of text parts — the output the app expects
 * (the file being edited). Here it is the first source of speculative drafts:
 * it never changes the output, only how many forward passes it takes, so it
 * combines with everything else a request may ask (tools, logprobs,
 * penalties, streaming, n).
 *
 * Only as much of it as the reply can reach is kept: the reply is at most
 * `max_tokens` tokens (the context window at most), and no run of tokens
 * averages more than PREDICTION_CHARS_PER_TOKEN characters, so text past
 * `max_tokens × PREDICTION_CHARS_PER_TOKEN` characters can never be drafted
 * from. It is cut before the engine tokenizes it: a 10 MB prediction cost
 * ~170 MB of memory and 1.3 s here (50 MB: ~410 MB, 7.7 s) to tokenize text
 * no reply could use.
 */
import { invalidParam } from "./api-error.js";

export interface PredictionContent {
  type: "content";
  content: string | Array<{ type: "text"; text: string }>;
}

/** The prediction's text, or undefined when absent, null or empty. */
export function validatePrediction(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) throw invalidParam("prediction", '`prediction` must be an object `{ type: "content", content }`.');
  const { type, content } = v as { type?: unknown; content?: unknown };
  if (type !== "content") throw invalidParam("prediction.type", '`prediction.type` must be "content" (the only kind of prediction).');
  if (typeof content === "string") return content === "" ? undefined : content;
  if (!Array.isArray(content)) throw invalidParam("prediction.content", "`prediction.content` must be a string or an array of text parts.");
  let text = "";
  content.forEach((part: unknown, i) => {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (typeof p !== "object" || p === null || p.type !== "text" || typeof p.text !== "string") {
      throw invalidParam(`prediction.content[${i}]`, '`prediction.content` parts must be `{ type: "text", text: string }`.');
    }
    text += p.text;
  });
  return text === "" ? undefined : text;
}

/** Characters of prediction kept per token the reply may have: generous (English averages ~4, code ~3). */
export const PREDICTION_CHARS_PER_TOKEN = 16;

/** The part of `prediction` a reply of at most `maxTokens` tokens can reach (never splitting a surrogate pair). */
export function reachablePrediction(prediction: string, maxTokens: number): string {
  let end = maxTokens * PREDICTION_CHARS_PER_TOKEN;
  if (prediction.length <= end) return prediction;
  const last = prediction.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return prediction.slice(0, end);
}
