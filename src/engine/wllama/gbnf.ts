/**
 * Our EBNF (xgrammar's dialect: src/grammar/emit.ts, json-schema-ebnf.ts,
 * structural-tag-ebnf.ts) as llama.cpp's GBNF, for wllama's `grammar`
 * option. The two dialects share rules, strings, classes, groups and
 * `* + ?`; what our emitters write differs in two places only, both refused by
 * llama.cpp's parser (llama-grammar.cpp, as bundled in wllama 3.8.1):
 *
 * - rule names: GBNF's are `[A-Za-z0-9-]+` (no `_`), so `j_value` is renamed
 *   (`_` → `-`, a numbered suffix if that name is already taken);
 * - escapes in a class: GBNF takes `\x \u \U \t \r \n \\ \" \[ \]` only, so
 *   xgrammar's `\-` (a literal hyphen) is written `\x2d`.
 *
 * Strings and the other escapes pass as they are. A construct outside what
 * our emitters write (xgrammar's lookahead `(= …)`, `TagDispatch`) is refused,
 * naming it, rather than handed to llama.cpp, which would fail on it later.
 * The conversion reads the text once, left to right: linear in its length,
 * which MAX_GRAMMAR_CHARS already bounds.
 */
import { GrammarError } from "../../grammar/ir.js";

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_-]/;

/** Renames xgrammar rule names to GBNF ones, the same name always to the same one, two names never to one. */
class RuleNames {
  private readonly map = new Map<string, string>();
  private readonly taken = new Set<string>();

  constructor(private readonly defined: ReadonlySet<string>) {
    // A name that is already GBNF keeps itself (`root` above all), so renamed ones must avoid them.
    for (const name of defined) if (!name.includes("_")) this.claim(name, name);
  }

  private claim(name: string, gbnf: string): string {
    this.map.set(name, gbnf);
    this.taken.add(gbnf);
    return gbnf;
  }

  gbnf(name: string): string {
    const known = this.map.get(name);
    if (known !== undefined) return known;
    const base = name.replace(/_/g, "-");
    let candidate = base;
    for (let i = 2; this.taken.has(candidate) || (candidate !== name && this.defined.has(candidate)); i++) candidate = `${base}-${i}`;
    return this.claim(name, candidate);
  }
}

/** The names a grammar defines (`name ::=` at the start of a line). */
function definedNames(ebnf: string): Set<string> {
  const names = new Set<string>();
  for (const match of ebnf.matchAll(/^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*::=/gm)) names.add(match[1]);
  return names;
}

/** The end (exclusive) of the string or class opened at `start` (by `"` or `[`). */
function closing(ebnf: string, start: number, close: string): number {
  for (let i = start + 1; i < ebnf.length; i++) {
    if (ebnf[i] === "\\") i++;
    else if (ebnf[i] === close) return i + 1;
  }
  throw new GrammarError(`an unterminated ${close === '"' ? "string" : "character class"} in the grammar`, "invalid");
}

/** A class with xgrammar's escapes GBNF lacks rewritten as hex escapes. */
function gbnfClass(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "\\") {
      out += text[i];
      continue;
    }
    const next = text[i + 1];
    out += next === "-" ? "\\x2d" : next === "^" ? "\\x5e" : "\\" + next;
    i++;
  }
  return out;
}

/** Our EBNF as GBNF (root rule `root`); a GrammarError names what GBNF cannot say. */
export function ebnfToGbnf(ebnf: string): string {
  const names = new RuleNames(definedNames(ebnf));
  let out = "";
  let i = 0;
  while (i < ebnf.length) {
    const ch = ebnf[i];
    if (ch === '"') {
      const end = closing(ebnf, i, '"');
      out += ebnf.slice(i, end);
      i = end;
    } else if (ch === "[") {
      const end = closing(ebnf, i, "]");
      out += gbnfClass(ebnf.slice(i, end));
      i = end;
    } else if (ch === "#") {
      const end = ebnf.indexOf("\n", i);
      i = end < 0 ? ebnf.length : end;
    } else if (NAME_START.test(ch)) {
      let end = i + 1;
      while (end < ebnf.length && NAME_CHAR.test(ebnf[end])) end++;
      const name = ebnf.slice(i, end);
      if (name === "TagDispatch") throw new GrammarError("xgrammar's `TagDispatch(…)`, which llama.cpp's GBNF does not have", "unsupported");
      out += names.gbnf(name);
      i = end;
    } else if (ch === "(" && ebnf[i + 1] === "=") {
      throw new GrammarError("a lookahead `(= …)`, which llama.cpp's GBNF does not have", "unsupported");
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}
