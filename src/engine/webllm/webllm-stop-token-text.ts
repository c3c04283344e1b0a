/**
 * Stop tokens get a text in the token table web-llm gives xgrammar.
 *
 * web-llm builds xgrammar's token table from `tokenizer.idToToken(id)`, which
 * gives "" for special tokens (`<|endoftext|>`, `<|im_end|>`, …). The
 * xgrammar that web-llm 0.2.79 bundles puts every empty-text token in every
 * mask, stop tokens included, while its matcher accepts a stop token only
 * where the grammar can end. So a constrained reply (a forced tool call, a
 * JSON schema, an app grammar) whose likeliest allowed token is a stop token
 * fails with "Grammar matcher rejected the newly sampled token": seen on the
 * real engine at a forced call's first decode step, where `<|endoftext|>`
 * had the highest logit. A stop token that has a text is masked by its id in
 * both bundled xgrammar builds (0.2.79 and 0.2.86): allowed exactly where
 * the grammar can end. The text itself is never matched against a grammar
 * and never shown (web-llm reads `idToToken` for this table only).
 */

interface TokenTableSource {
  tokenizer?: { idToToken?(id: number): string };
  stopTokens?: number[];
}

/** Tokenizers already wrapped (a pipeline re-attached after a reload keeps its tokenizer). */
const wrapped = new WeakSet<object>();

/** The text a stop token stands for in xgrammar's table. */
export function stopTokenText(id: number): string {
  return `<|stop ${id}|>`;
}

/**
 * Wraps the loaded pipeline's `tokenizer.idToToken` so that a stop token's
 * empty text becomes `stopTokenText(id)`; every other id is untouched. Call
 * before the first constrained request (web-llm reads the table once).
 */
export function giveStopTokensText(pipeline: unknown): void {
  const { tokenizer, stopTokens } = (pipeline ?? {}) as TokenTableSource;
  if (!tokenizer || typeof tokenizer.idToToken !== "function" || !stopTokens?.length || wrapped.has(tokenizer)) return;
  wrapped.add(tokenizer);
  const stops = new Set(stopTokens);
  const idToToken = tokenizer.idToToken.bind(tokenizer);
  tokenizer.idToToken = (id: number) => {
    const text = idToToken(id);
    return text === "" && stops.has(id) ? stopTokenText(id) : text;
  };
}
