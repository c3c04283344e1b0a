/**
 * The EBNF text of an analysed grammar (grammar-analysis.ts): rule names,
 * each node's expression (remembered, so a shared node is written once), the
 * non-empty rewrite of what is repeated, bounded repetition written out, and
 * long or repeated expressions hoisted into rules of their own. Apart from
 * the analysis because this is how the language is spelled, and where the
 * output's size is bounded (MAX_GRAMMAR_CHARS), checked as each piece is built.
 */
import { ebnfClass, ebnfString, intersect, JSON_SPECIAL, jsonEscape } from "./ebnf-syntax.js";
import type { CompileBudget, GrammarAnalysis } from "./grammar-analysis.js";
import { complement, GrammarError, type Grammar, type Node, type Ranges } from "./ir.js";
import { MAX_EMPTY_RUN, MAX_GRAMMAR_CHARS, MAX_REPEAT } from "./limits.js";

/** How toEbnf (emit.ts) writes a grammar. */
export interface EmitOptions {
  /** Write the language as the content of a JSON string (between its quotes). */
  jsonString?: boolean;
  /** Default MAX_GRAMMAR_CHARS. */
  maxChars?: number;
  /** Text the root rule writes before and after the language (as is, not escaped): a custom tool's `{"input": "` and `"}`. */
  wrap?: { before: string; after: string };
  /** Default MAX_COMPILE_STEPS. */
  maxSteps?: number;
}

/** An expression at least this long, used again, is written once as a rule of its own. */
const HOIST_CHARS = 33;

/**
 * An expression at least this long is a rule of its own even on first use, so
 * a parent's text holds its name, not a copy: each node's text is then at most
 * this long per item it has, and the whole output linear in the grammar (a
 * regex of optionals nested 100 deep wrote 64 KB without it, quadratic in the depth).
 */
const LONG_EXPR_CHARS = 200;

/** Writes one grammar once: `emit()` returns its EBNF, or throws a GrammarError naming the bound it passed. */
export class EbnfWriter {
  private readonly lines: string[] = [];
  private size = 0;
  private readonly maxChars: number;
  private readonly names = new Map<string, string>();
  private readonly nonEmptyNames = new Map<string, string>();
  private readonly pending: Array<() => void> = [];
  private readonly classRules = new Map<string, string>();
  private readonly hoisted = new Map<string, string>();
  /** Repetitions written, by count and item text. */
  private readonly repetitions = new Map<string, string>();
  // Per-node answers, each computed once.
  private readonly nonEmptyMemo = new Map<Node, Node | null>();
  private readonly exprMemo = new Map<Node, string>();
  private next = 0;

  constructor(
    private readonly grammar: Grammar,
    private readonly options: EmitOptions,
    private readonly analysis: GrammarAnalysis,
    private readonly budget: CompileBudget,
  ) {
    this.maxChars = options.maxChars ?? MAX_GRAMMAR_CHARS;
  }

  emit(): string {
    const root = this.ruleName(this.grammar.root);
    const wrap = this.options.wrap;
    this.push(`root ::= ${wrap ? [wrap.before, root, wrap.after].map((part) => (part === root ? part : part === "" ? "" : ebnfString(part))).filter(Boolean).join(" ") : root}`);
    while (this.pending.length > 0) this.pending.shift()!();
    return this.lines.join("\n");
  }

  private push(line: string): void {
    this.size += line.length + 1;
    if (this.size > this.maxChars) throw this.tooLarge();
    this.lines.push(line);
  }

  private tooLarge(): GrammarError {
    return new GrammarError(`the compiled grammar exceeds the bound of ${this.maxChars} characters`, "too_large");
  }

  /** Refuses a piece longer than the whole output may be, before it is built into anything larger. */
  private checkLength(length: number): void {
    if (length > this.maxChars) throw this.tooLarge();
  }

  private ruleName(name: string, nonEmpty = false): string {
    const map = nonEmpty ? this.nonEmptyNames : this.names;
    let ebnf = map.get(name);
    if (ebnf !== undefined) return ebnf;
    const base = `r${this.next++}_${name.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 40)}`;
    ebnf = nonEmpty ? base + "_ne" : base;
    map.set(name, ebnf);
    const body = this.grammar.rules.get(name)!;
    this.pending.push(() => {
      this.budget.current = name;
      const node = nonEmpty ? this.nonEmpty(body) : body;
      this.push(`${ebnf} ::= ${node === null ? '""' : this.expr(node, true)}`);
    });
    return ebnf;
  }

  /** The node's language less the empty string; null when that is empty. */
  private nonEmpty(node: Node): Node | null {
    if (!this.analysis.isNullable(node)) return node;
    const known = this.nonEmptyMemo.get(node);
    if (known !== undefined) return known;
    this.budget.step();
    const part = this.nonEmptyPart(node);
    this.nonEmptyMemo.set(node, part);
    return part;
  }

  private nonEmptyPart(node: Node): Node | null {
    switch (node.k) {
      case "lit":
        return null;
      case "class":
        return node;
      case "seq": {
        // Every item can be empty: the text is non-empty from some item i on, items before it empty.
        // Suffixes are rules written right to left, so the size stays linear in the items.
        const items = node.items;
        if (items.length > MAX_EMPTY_RUN) throw new GrammarError(`a repeated sequence of ${items.length} items that can all be empty, over the bound of ${MAX_EMPTY_RUN}`, "too_large");
        const alts: string[] = [];
        let length = 0;
        let suffix = "";
        for (let i = items.length - 1; i >= 0; i--) {
          const head = this.nonEmpty(items[i]);
          if (head) {
            alts.push(suffix === "" ? this.expr(head) : `${this.expr(head)} ${suffix}`);
            length += alts[alts.length - 1].length + 3;
            this.checkLength(length);
          }
          if (i > 0) suffix = this.hoist(suffix === "" ? this.expr(items[i]) : `${this.expr(items[i])} ${suffix}`);
        }
        return alts.length === 0 ? null : { k: "raw", ebnf: alts.length === 1 ? alts[0] : `(${alts.reverse().join(" | ")})` };
      }
      case "alt": {
        const alts = node.items.map((i) => this.nonEmpty(i)).filter((n): n is Node => n !== null);
        return alts.length === 0 ? null : alts.length === 1 ? alts[0] : { k: "alt", items: alts };
      }
      case "rep": {
        const item = this.nonEmpty(node.item);
        if (item === null || node.max === 0) return null;
        return { k: "rep", item, min: 1, max: node.max };
      }
      case "ref":
        return this.analysis.ruleProducesText(node.name) ? { k: "ref", name: "\0ne:" + node.name } : null;
      case "raw":
        return node;
    }
  }

  /**
   * The node as an EBNF expression. A long one is a rule of its own, written
   * once; `ruleBody`: the whole body of a rule, which is one already.
   */
  private expr(node: Node, ruleBody = false): string {
    const known = this.exprMemo.get(node);
    if (known !== undefined) return known.length >= HOIST_CHARS ? this.hoist(known) : known;
    this.budget.step();
    let text = this.exprOf(node);
    this.checkLength(text.length);
    if (text.length >= LONG_EXPR_CHARS && !ruleBody) text = this.hoist(text);
    this.exprMemo.set(node, text);
    return text;
  }

  /** `parts` joined by `separator`, refused as soon as they add up past the bound. */
  private joined(nodes: Node[], separator: string): string[] {
    const parts: string[] = [];
    let length = 0;
    for (const node of nodes) {
      const part = this.expr(node);
      length += part.length + separator.length;
      this.checkLength(length);
      parts.push(part);
    }
    return parts;
  }

  private exprOf(node: Node): string {
    switch (node.k) {
      case "lit": {
        const text = this.options.jsonString ? jsonEscape(node.text) : node.text;
        if (text === "") return '""';
        // xgrammar reads "\x00" in a string as its end: NUL goes in a class.
        const parts = text.split("\0").map((piece) => (piece === "" ? "" : ebnfString(piece)));
        return parts.length === 1 ? parts[0] : "(" + parts.join(" [\\x00] ").trim() + ")";
      }
      case "class":
        return this.classExpr(node.ranges);
      case "seq": {
        const parts = this.joined(
          node.items.filter((i) => !(i.k === "lit" && i.text === "")),
          " ",
        );
        return parts.length === 0 ? '""' : parts.length === 1 ? parts[0] : `(${parts.join(" ")})`;
      }
      case "alt":
        return node.items.length === 1 ? this.expr(node.items[0]) : `(${this.joined(node.items, " | ").join(" | ")})`;
      case "rep":
        return this.repetition(node.item, node.min, node.max);
      case "ref":
        return node.name.startsWith("\0ne:") ? this.ruleName(node.name.slice(4), true) : this.ruleName(node.name);
      case "raw":
        return node.ebnf;
    }
  }

  private classExpr(ranges: Ranges): string {
    if (ranges.length === 0) throw new GrammarError("a character class that matches nothing");
    if (!this.options.jsonString) return ebnfClass(ranges);
    const special = intersect(ranges, JSON_SPECIAL);
    const plain = intersect(ranges, complement(JSON_SPECIAL));
    if (special.length === 0) return ebnfClass(plain);
    const key = JSON.stringify(ranges);
    const cached = this.classRules.get(key);
    if (cached) return cached;
    const alts: string[] = plain.length > 0 ? [ebnfClass(plain)] : [];
    for (const [a, b] of special) for (let cp = a; cp <= b; cp++) alts.push(ebnfString(jsonEscape(String.fromCodePoint(cp))));
    const name = `c${this.next++}`;
    this.classRules.set(key, name);
    this.push(`${name} ::= ${alts.join(" | ")}`);
    return name;
  }

  private repetition(item: Node, min: number, max: number | undefined): string {
    if (max !== undefined && max < min) throw new GrammarError(`a repetition whose maximum (${max}) is below its minimum (${min})`, "invalid");
    if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) throw new GrammarError(`a repetition count above the bound of ${MAX_REPEAT}`, "too_large");
    if (max === 0) return '""';
    let body: Node | null = item;
    let lo = min;
    if (this.analysis.isNullable(item)) {
      body = this.nonEmpty(item);
      lo = 0;
    }
    if (body === null) return '""';
    let x = this.expr(body);
    const copies = lo + (max === undefined ? 1 : max - lo);
    if (copies > 1 && x.length > 32) x = this.hoist(x);
    // The same repetition of the same text (`a{0,1000}` five thousand times) is built once.
    const key = `${lo},${max ?? ""},${x}`;
    const known = this.repetitions.get(key);
    if (known !== undefined) return known;
    // Each count is written out: measured before it is built.
    this.checkLength(copies * (x.length + 4));
    const parts: string[] = Array.from({ length: lo }, () => x);
    if (max === undefined) {
      parts.push(`${x}*`);
    } else if (max > lo) {
      // Nested optionals, `(x (x x?)?)?` for three: flat strings, not a rope of `max` pieces.
      const optional = max - lo;
      parts.push(`(${x} `.repeat(optional - 1) + `${x}?` + ")?".repeat(optional - 1));
    }
    const text = parts.length === 1 ? parts[0] : `(${parts.join(" ")})`;
    this.repetitions.set(key, text.length >= LONG_EXPR_CHARS ? this.hoist(text) : text);
    return this.repetitions.get(key)!;
  }

  /** An expression used several times, as a rule of its own (written once). */
  private hoist(expr: string): string {
    const cached = this.hoisted.get(expr);
    if (cached) return cached;
    const name = `h${this.next++}`;
    this.hoisted.set(expr, name);
    this.push(`${name} ::= ${expr}`);
    return name;
  }
}
