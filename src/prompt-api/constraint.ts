/**
 * `responseConstraint`: a JSON schema becomes the chat request's
 * `response_format: { type: "json_schema" }`; a RegExp becomes the library's
 * grammar extension `response_format: { type: "grammar", syntax: "regex",
 * definition }` (compiled to the engine's grammar by protocol/, never
 * loosened). Unless `omitResponseConstraintInput`, the constraint is also told
 * to the model in the prompt, as the explainer describes, and counts toward
 * the context.
 *
 * The grammar enforces the constraint token by token, so a reply the model
 * ended itself complies: it is not matched again here. A JS RegExp re-check
 * would backtrack on the page's thread (`/(\w+\s?)+\./` on a cut reply of 9
 * words took 4 s, 5× longer with each word more), and what it would catch is known without it: a reply the context
 * window (or max_tokens) cut is a SyntaxError that says it was cut. A JSON
 * reply is still parsed (linear time) so an engine that does not enforce
 * `json_schema` cannot hand the app a string that is not JSON.
 */
import { domError } from "./errors.js";
import type { LanguageModelPromptOptions } from "./types.js";
import type { ChatMessage } from "../protocol/types.js";

export interface ConstraintPlan {
  /** The chat request's `response_format`, or none. */
  responseFormat?: Record<string, unknown>;
  /** Text added to the prompt so the model knows the format. */
  instruction?: string;
  /** Throws a SyntaxError when `reply` does not comply; `cut`: generation stopped at the length limit, not where the model ended it. */
  check(reply: string, cut: boolean): void;
}

/** A constrained reply the length limit stopped is unfinished, whatever it looks like so far. */
function cutReply(kind: string): DOMException {
  return domError("SyntaxError", `The model's reply was cut by the context window before it completed the ${kind} responseConstraint; shorten the conversation or ask for a shorter answer.`);
}

/** RegExp flags that change what matches: a grammar cannot carry them, so they are refused rather than dropped. */
const MEANINGFUL_FLAGS = /[ims]/;

export function planConstraint(options: LanguageModelPromptOptions | undefined): ConstraintPlan {
  const constraint = options?.responseConstraint;
  if (constraint === undefined || constraint === null) {
    if (options?.omitResponseConstraintInput) throw new TypeError("`omitResponseConstraintInput` needs a `responseConstraint`.");
    return { check() {} };
  }
  const omit = options?.omitResponseConstraintInput === true;
  if (constraint instanceof RegExp) {
    const flag = constraint.flags.match(MEANINGFUL_FLAGS)?.[0];
    if (flag) throw domError("NotSupportedError", `The RegExp flag "${flag}" is not supported in a responseConstraint (the grammar matches the pattern exactly as written); write the pattern without it.`);
    return {
      responseFormat: { type: "grammar", syntax: "regex", definition: constraint.source },
      instruction: omit ? undefined : `Respond with text that matches this regular expression: /${constraint.source}/`,
      // Enforced by the grammar: only a cut reply can fall short of it.
      check(_reply, cut) {
        if (cut) throw cutReply("RegExp");
      },
    };
  }
  if (typeof constraint !== "object" || Array.isArray(constraint)) throw new TypeError("`responseConstraint` must be a JSON schema object or a RegExp.");
  let schemaText: string;
  try {
    schemaText = JSON.stringify(constraint);
  } catch {
    throw new TypeError("`responseConstraint` must be a JSON schema object (serializable as JSON) or a RegExp.");
  }
  return {
    responseFormat: { type: "json_schema", json_schema: { name: "response", schema: constraint, strict: true } },
    instruction: omit ? undefined : `Respond with JSON that matches this JSON schema: ${schemaText}`,
    check(reply, cut) {
      if (cut) throw cutReply("JSON schema");
      try {
        JSON.parse(reply);
      } catch {
        throw domError("SyntaxError", "The model's reply is not JSON that matches the responseConstraint schema.");
      }
    },
  };
}

/** The instruction added to the last user message of the input (or as a user message of its own when the input has none). */
export function withInstruction(messages: ChatMessage[], instruction: string | undefined): ChatMessage[] {
  if (!instruction) return messages;
  const at = messages.map((m) => m.role).lastIndexOf("user");
  if (at < 0) return [{ role: "user", content: instruction }, ...messages];
  const target = messages[at];
  const content = typeof target.content === "string" || target.content == null ? `${target.content ?? ""}\n\n${instruction}` : [...target.content, { type: "text" as const, text: `\n\n${instruction}` }];
  return messages.map((message, i) => (i === at ? { ...message, content } : message));
}
