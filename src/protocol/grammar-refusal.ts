/**
 * Grammar failures as the 400s the faces send: the param that carried the
 * schema or grammar, and what was refused (the construct, or the bound).
 */
import { ApiError } from "./api-error.js";
import { GrammarError } from "../grammar/ir.js";
import { checkSchemaGrammarSize } from "../grammar/json-schema-ebnf.js";

const CODES = { unsupported: "unsupported_grammar", too_large: "grammar_too_large", invalid: "invalid_grammar" } as const;

export function grammarRefusal(error: GrammarError, param: string): ApiError {
  const message =
    error.reason === "too_large"
      ? `\`${param}\` is too large: ${error.message}.`
      : error.reason === "invalid"
        ? `\`${param}\` is not a valid grammar: ${error.message}.`
        : `\`${param}\` uses ${error.message}, which this library cannot enforce exactly (it never runs a looser grammar instead).`;
  return new ApiError({ status: 400, param, code: CODES[error.reason], message });
}

/** Runs `compile`, turning a GrammarError into the 400 for `param`. */
export function withGrammarParam<T>(param: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (error instanceof GrammarError) throw grammarRefusal(error, param);
    throw error;
  }
}

/** 400 for `param` when a JSON schema's grammar would be over the size bound: refused before the request queues. */
export function checkSchemaGrammar(schema: Record<string, unknown>, param: string): void {
  withGrammarParam(param, () => checkSchemaGrammarSize(schema));
}
