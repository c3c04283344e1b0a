/**
 * Prompt API input (a string, or messages whose content is a string or typed
 * parts) → chat messages, with the explainer's rules: `system` only first in
 * the first sequence a session receives (TypeError), `prefix` only on a final
 * assistant message of prompt() (SyntaxError), no media in assistant messages
 * and none of a type the session was not created to expect (NotSupportedError).
 */
import type { ChatMessage, ContentPart } from "../protocol/types.js";
import { toContentPart } from "./content.js";
import { domError } from "./errors.js";
import type { LanguageModelExpected, LanguageModelMessage, LanguageModelPrompt } from "./types.js";

export interface InputRules {
  /** `create` (initialPrompts), `append`, `prompt` (prompt, promptStreaming, measureContextUsage). */
  where: "create" | "append" | "prompt";
  /** Nothing has been sent to the session yet: a system message may come first. */
  firstSequence: boolean;
  /** Types the session was created to expect (text is always expected). */
  expected: ReadonlySet<string>;
}

const ROLES = new Set(["system", "user", "assistant"]);

/** Checks the shape synchronously (so the returned promise rejects with the right error before anything queues). */
export function checkInput(input: LanguageModelPrompt, rules: InputRules): LanguageModelMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (!Array.isArray(input)) throw new TypeError("The input must be a string or an array of { role, content } messages.");
  input.forEach((message, index) => {
    if (typeof message !== "object" || message === null || !ROLES.has(message.role)) throw new TypeError(`Message ${index} needs a role of "system", "user" or "assistant".`);
    if (message.role === "system" && (index !== 0 || !rules.firstSequence)) {
      throw new TypeError("A system message may only be the first message of the first sequence sent to a session (initialPrompts, or the first append()/prompt()).");
    }
    if (message.prefix) {
      const last = index === input.length - 1 && message.role === "assistant";
      if (!last || rules.where !== "prompt") throw domError("SyntaxError", "`prefix: true` is only allowed on the final assistant message of prompt() or promptStreaming().");
    }
    const content = message.content;
    if (typeof content === "string") return;
    if (!Array.isArray(content)) throw new TypeError(`Message ${index}'s content must be a string or an array of { type, value }.`);
    for (const part of content) {
      if (typeof part !== "object" || part === null) throw new TypeError(`Message ${index} has a content entry that is not { type, value }.`);
      if (part.type === "text") continue;
      if (part.type !== "image" && part.type !== "audio") throw new TypeError(`Unknown content type ${JSON.stringify(part.type)}: use "text", "image" or "audio".`);
      if (message.role === "assistant") throw domError("NotSupportedError", "Assistant messages cannot carry images or audio.");
      if (!rules.expected.has(part.type)) {
        throw domError("NotSupportedError", `This session was not created to take ${part.type} input: create it with expectedInputs: [{ type: "${part.type}" }].`);
      }
    }
  });
  return input;
}

/**
 * The checked messages as chat messages (media encoded). Text-only content becomes one string, as the pipeline renders it.
 * A `prefix` message needs no mark: a final assistant message is what the chat request continues.
 */
export function convertInput(messages: LanguageModelMessage[]): Promise<ChatMessage[]> {
  return Promise.all(
    messages.map(async (message): Promise<ChatMessage> => {
      if (typeof message.content === "string") return { role: message.role, content: message.content };
      const parts: ContentPart[] = await Promise.all(message.content.map(toContentPart));
      const textOnly = parts.every((part) => part.type === "text");
      return { role: message.role, content: textOnly ? parts.map((part) => (part as { text: string }).text).join("") : parts };
    }),
  );
}

/** Types named in `expectedInputs`, plus text. */
export function expectedTypes(expected: LanguageModelExpected[] | undefined): Set<string> {
  return new Set(["text", ...(expected ?? []).map((entry) => entry.type)]);
}
