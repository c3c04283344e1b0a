/**
 * An app's own grammar (`{type: "grammar", syntax: "regex" | "lark",
 * definition}`: a chat `response_format`, a Responses `text.format`, a custom
 * tool's `format`, the Prompt API's `RegExp` constraint) validated and
 * compiled to EBNF, or a 400 naming the param and what was refused.
 */
import { invalidParam } from "./api-error.js";
import { isObject } from "./params.js";
import { toEbnf, type EmitOptions } from "../grammar/emit.js";
import type { Grammar } from "../grammar/ir.js";
import { larkToGrammar } from "../grammar/lark.js";
import { MAX_DEFINITION_CHARS } from "../grammar/limits.js";
import { regexToGrammar } from "../grammar/regex.js";
import { withGrammarParam } from "./grammar-refusal.js";

export type GrammarSyntax = "regex" | "lark";

export interface AppGrammar {
  syntax: GrammarSyntax;
  definition: string;
  /** `regex` only, optional (a library extension): a RegExp's `flags`, so `i` or `m` is refused rather than dropped. */
  flags?: string;
}

/**
 * The `{syntax, definition}` of a grammar format at `param` (the object
 * holding them). Chat custom tools nest them one level down
 * (`format.grammar`); the caller passes that object.
 */
export function readAppGrammar(v: unknown, param: string): AppGrammar {
  if (!isObject(v)) throw invalidParam(param, `\`${param}\` must be an object with \`syntax\` ("regex" or "lark") and \`definition\`.`, "invalid_type");
  if (v.syntax !== "regex" && v.syntax !== "lark") throw invalidParam(`${param}.syntax`, `\`${param}.syntax\` must be "regex" or "lark".`);
  if (typeof v.definition !== "string" || v.definition === "") {
    throw invalidParam(`${param}.definition`, `\`${param}.definition\` must be a non-empty string: the ${v.syntax === "regex" ? "regular expression" : "Lark grammar"}.`, "invalid_type");
  }
  if (v.definition.length > MAX_DEFINITION_CHARS) {
    throw invalidParam(`${param}.definition`, `\`${param}.definition\` is too large: ${v.definition.length} characters, over the bound of ${MAX_DEFINITION_CHARS}.`, "grammar_too_large");
  }
  if (v.flags !== undefined && (v.syntax !== "regex" || typeof v.flags !== "string")) {
    throw invalidParam(`${param}.flags`, `\`${param}.flags\` is a regex's flags (a string such as "u"), for \`syntax: "regex"\` only.`, "invalid_type");
  }
  return { syntax: v.syntax, definition: v.definition, ...(typeof v.flags === "string" ? { flags: v.flags } : {}) };
}

/** The grammar form of an app grammar; a GrammarError names what it cannot take. */
export function appGrammar(grammar: AppGrammar): Grammar {
  return grammar.syntax === "regex" ? regexToGrammar(grammar.definition, { flags: grammar.flags }) : larkToGrammar(grammar.definition);
}

/** The app grammar as xgrammar EBNF (root rule `root`), or a 400 for `${param}.definition`. */
export function appGrammarEbnf(grammar: AppGrammar, param: string, options: EmitOptions = {}): string {
  return withGrammarParam(`${param}.definition`, () => toEbnf(appGrammar(grammar), options));
}

/** The app grammar as several EBNFs, one per set of options, parsed once (a custom tool's JSON and raw forms). */
export function appGrammarEbnfs<K extends string>(grammar: AppGrammar, param: string, variants: Record<K, EmitOptions>): Record<K, string> {
  return withGrammarParam(`${param}.definition`, () => {
    const parsed = appGrammar(grammar);
    const out = {} as Record<K, string>;
    for (const key of Object.keys(variants) as K[]) out[key] = toEbnf(parsed, variants[key]);
    return out;
  });
}
