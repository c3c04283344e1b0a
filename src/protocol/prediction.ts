/**
 * `prediction` (OpenAI's Predicted Outputs): `{ type: "content", content }`,
 * content a string or an array of text parts — the output the app expects
 * (the file being edited). Here it is the first source of speculative drafts:
 * it never changes the output, only how many forward passes it takes, so it
 * combines with everything else a request may ask (tools, logprobs,
 * penalties, streaming, n).
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
