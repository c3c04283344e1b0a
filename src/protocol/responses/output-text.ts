import type { ResponseObject } from "./types.js";

/** A Response's `output_text`, as the OpenAI SDK derives it: the text of every output_text part, joined. */
export function outputText(response: ResponseObject): string {
  let text = "";
  for (const item of response.output) if (item.type === "message") for (const part of item.content) if (part.type === "output_text") text += part.text;
  return text;
}
