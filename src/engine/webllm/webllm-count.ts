/**
 * Prompt tokens of a request in a loaded web-llm model, without generating
 * (the Prompt API's `measureContextUsage` and `contextUsage`). The text is
 * counted with the model's own tokenizer; the chat template's markup around
 * each message is not rendered here (web-llm builds it only inside prefill),
 * so it is counted as a few tokens per message: an estimate within a few
 * tokens per message, never a character heuristic.
 */
import type { EngineRequest } from "../types.js";

/** Role header and end-of-turn markup of one message in the templates web-llm ships (ChatML, Llama 3, Gemma, Phi): 3 to 5 tokens. */
export const TEMPLATE_TOKENS_PER_MESSAGE = 4;
/** The generation header the prompt ends with (`<|im_start|>assistant\n` and the like). */
export const GENERATION_HEADER_TOKENS = 3;
/** What an image takes when the model's vision adapter is not asked (Phi-3.5-vision's 144-token crops, Gemma's 256 soft tokens). */
export const IMAGE_TOKENS = 256;

export interface CountingTokenizer {
  encode(text: string): ArrayLike<number>;
}

export function countWebLlmPromptTokens(tokenizer: CountingTokenizer | undefined, request: EngineRequest): number {
  const count = (text: string) => (tokenizer ? tokenizer.encode(text).length : Math.ceil(text.length / 4));
  let total = request.continueFinalMessage ? 0 : GENERATION_HEADER_TOKENS;
  for (const message of request.messages) {
    total += TEMPLATE_TOKENS_PER_MESSAGE;
    if (typeof message.content === "string") total += count(message.content);
    else for (const part of message.content) total += part.type === "text" ? count(part.text) : part.type === "image_url" ? IMAGE_TOKENS : Math.ceil(part.audio.samples / part.audio.sampleRate) * 25;
  }
  return total;
}
