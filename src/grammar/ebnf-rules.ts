/**
 * The rule list a compiler to EBNF writes into (json-schema-ebnf.ts and
 * structural-tag-ebnf.ts share one, so their rule names never collide):
 * fresh names, the size bound, and the ordered-optional-items chain both
 * compilers build (a JSON object's members, Qwen3.5's XML parameters).
 */
import { GrammarError } from "./ir.js";
import { MAX_CHAIN, MAX_GRAMMAR_CHARS } from "./limits.js";

/** An EBNF string literal for ASCII-safe text, as JSON writes it (what xgrammar reads). */
export const lit = (text: string): string => JSON.stringify(text);

/**
 * Rules are written once and referred to by name: an array's item schema, an
 * object's members (each used by two rules) never appear inline twice, so the
 * grammar grows linearly with its source (22 nested arrays once made 126 M
 * characters). The total is bounded by MAX_GRAMMAR_CHARS: over it, a
 * GrammarError naming the bound (a 400 for the request).
 */
export class EbnfRules {
  readonly lines: string[] = [];
  private next = 0;
  private size = 0;

  /** Adds one rule line, within the size bound. */
  add(line: string): void {
    this.size += line.length + 1;
    if (this.size > MAX_GRAMMAR_CHARS) throw new GrammarError(`the compiled grammar exceeds the bound of ${MAX_GRAMMAR_CHARS} characters`, "too_large");
    this.lines.push(line);
  }

  /** An expression to be used more than once: itself when it is short, else a rule of its own. */
  named(prefix: string, expr: string): string {
    return expr.length <= 24 ? expr : this.rule(prefix, expr);
  }

  fresh(prefix: string): string {
    return `${prefix}${this.next++}`;
  }

  rule(prefix: string, body: string): string {
    const name = this.fresh(prefix);
    this.add(`${name} ::= ${body}`);
    return name;
  }

  /**
   * Items in key order, each optional unless required; `sep` between written
   * items, `after` after each. Two rules per key, each naming the next key's
   * rules instead of listing what may follow: O(n) in the number of keys.
   * `first_i`: items i.. with none written yet; `rest_i`: items i.. after one.
   */
  ordered(keys: string[], items: string[], required: Set<string>, sep: string, after: string): string {
    const n = keys.length;
    if (n > MAX_CHAIN) throw new GrammarError(`an object with ${n} properties, over the bound of ${MAX_CHAIN} properties per object`, "too_large");
    const first = keys.map(() => this.fresh("first"));
    const rest = keys.map(() => this.fresh("rest"));
    const tail = after === '""' ? "" : ` ${after}`;
    for (let i = n - 1; i >= 0; i--) {
      const nextFirst = i + 1 < n ? first[i + 1] : '""';
      const nextRest = i + 1 < n ? rest[i + 1] : '""';
      const take = `${items[i]}${tail}${i + 1 < n ? ` ${nextRest}` : ""}`;
      if (required.has(keys[i])) {
        this.add(`${first[i]} ::= ${take}`);
        this.add(`${rest[i]} ::= ${sep} ${take}`);
      } else {
        this.add(`${first[i]} ::= (${take}) | ${nextFirst}`);
        this.add(`${rest[i]} ::= (${sep} ${take}) | ${nextRest}`);
      }
    }
    return first[0];
  }
}
