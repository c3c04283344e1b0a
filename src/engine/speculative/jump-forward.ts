/**
 * Grammar jump-forward as a draft source. Where a grammar allows exactly one
 * continuation (a forced tool call's markup, a JSON schema's keys and
 * punctuation, a custom tool's fixed prefix), xgrammar's
 * `GrammarMatcher.findJumpForwardString()` gives it; its tokens are drafted
 * and verified in the same pass as any draft (acceptance.ts), so the output
 * stays what decoding one token at a time gives.
 *
 * The boundary: the forced string can end inside a token the model would
 * choose (`": "` then the value's first letters in one token), and a
 * tokenizer encoding the string alone ends it at the string's end. The last
 * token of the encoding is therefore not drafted — the model picks the token
 * that crosses the boundary itself. A draft that still differs
 * from the model's tokenization is rejected where it differs, like any
 * draft: passes can be lost there, never output.
 */

/** web-llm's grammar matcher (web-xgrammar `GrammarMatcher`, 0.2.79 – 0.2.86): the member used here. */
export interface JumpForwardMatcher {
  findJumpForwardString(): string;
}

/** The pipeline members that say whether this request is constrained and give its matcher. */
export interface GrammarHost {
  grammarMatcher?: unknown;
  /** web-llm 0.2.86's test of a generation config's `response_format` (0.2.79 has none: CONSTRAINED_FORMATS). */
  isGrammarConstrained?(responseFormat: unknown): boolean;
}

/** The `response_format` types web-llm runs its grammar matcher for. */
const CONSTRAINED_FORMATS = new Set(["json_object", "grammar", "structural_tag"]);

/**
 * The running request's matcher when its grammar constrains this generation,
 * else null. web-llm keeps a matcher across requests (it reuses it for the
 * same schema), so its presence alone does not say the request is constrained.
 */
export function activeMatcher(host: GrammarHost, genConfig: unknown): JumpForwardMatcher | null {
  const matcher = host.grammarMatcher as Partial<JumpForwardMatcher> | undefined;
  if (!matcher || typeof matcher.findJumpForwardString !== "function") return null;
  const format = (genConfig as { response_format?: { type?: unknown } } | undefined)?.response_format;
  const constrained = typeof host.isGrammarConstrained === "function" ? host.isGrammarConstrained(format) : CONSTRAINED_FORMATS.has(String(format?.type));
  return constrained ? (matcher as JumpForwardMatcher) : null;
}

/**
 * Characters of a forced string tokenized per pass: a draft is at most 16
 * tokens, far fewer characters than this, and a schema's long constant is
 * not tokenized whole on every step (the cut end is a boundary like any).
 */
export const MAX_FORCED_CHARS = 1024;

/** The draft for a forced string: its tokens but the last, which may merge with what follows. */
export function forcedDraft(forced: string, encode: (text: string) => ArrayLike<number>): number[] {
  if (forced.length === 0) return [];
  return Array.from(encode(forced.slice(0, MAX_FORCED_CHARS))).slice(0, -1);
}
