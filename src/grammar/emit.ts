/**
 * Grammar (ir.ts) → xgrammar EBNF with root rule `root`, in the dialect both
 * web-xgrammar builds take (the one web-llm 0.2.79 bundles and the one in
 * 0.2.86):
 *
 * - no `{m,n}` (0.2.79 has none): bounded repetition is written out, nested
 *   optionals for the optional part;
 * - nothing that can match the empty string under `*`, `+` or `?`, and no
 *   left recursion: 0.2.79 aborts its whole wasm module on either, so the
 *   repeated item is rewritten to its non-empty part (the language is the
 *   same) and left recursion is refused;
 * - `jsonString`: the same language, written as the inside of a JSON string
 *   (`"` as `\"`, a newline as `\n`, … the escapes JSON.stringify writes), for
 *   a custom tool's `input` inside a JSON call.
 *
 * The output is bounded (MAX_GRAMMAR_CHARS), checked as each piece is built,
 * so an oversized grammar is refused before its text is; past it, a
 * GrammarError naming the bound.
 *
 * The work is linear in the grammar's nodes: a node may be shared (Lark's
 * `%ignore` puts a rule body's item in two places per level, and the non-empty
 * rewrite below reads each item twice), so every per-node answer (can it be
 * empty, can it produce text, its non-empty part, its EBNF) is computed once
 * and remembered, and a long expression used again is written once, as a rule
 * of its own. Without that, nesting depth d cost 2^d (a 156-character regex
 * took 10 s). MAX_COMPILE_STEPS bounds the work all the same, as a last resort.
 */
import { complement, GrammarError, withoutSurrogates, type Grammar, type Node, type Ranges } from "./ir.js";
import { MAX_CHAIN, MAX_COMPILE_STEPS, MAX_EMPTY_RUN, MAX_GRAMMAR_CHARS, MAX_REPEAT } from "./limits.js";

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

/** A code point inside an EBNF string or class. */
function escapeCodePoint(cp: number): string {
  if (cp === 0x0a) return "\\n";
  if (cp === 0x0d) return "\\r";
  if (cp === 0x09) return "\\t";
  if (cp < 0x20 || cp === 0x7f) return "\\x" + cp.toString(16).padStart(2, "0");
  if (cp < 0x7f) return String.fromCharCode(cp);
  if (cp <= 0xffff) return "\\u" + cp.toString(16).padStart(4, "0");
  return "\\U" + cp.toString(16).padStart(8, "0");
}

/** An EBNF string literal. */
export function ebnfString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    out += ch === '"' ? '\\"' : ch === "\\" ? "\\\\" : escapeCodePoint(cp);
  }
  return out + '"';
}

function classChar(cp: number): string {
  switch (cp) {
    case 0x5c:
      return "\\\\";
    case 0x5d:
      return "\\]";
    case 0x2d:
      return "\\-";
    // xgrammar rejects `\[` and `\^` in a class: hex escapes.
    case 0x5b:
      return "\\x5b";
    case 0x5e:
      return "\\x5e";
    default:
      return escapeCodePoint(cp);
  }
}

/**
 * Characters above U+00FF listed one by one at most. web-xgrammar 0.1.27
 * (web-llm 0.2.86) mis-matches a class with more than one element when any
 * element lies above U+00FF: single-byte characters are checked against the
 * elements' low bytes (`[\u2028\u2029]` accepts `(`, `[^\n\u2028]` refuses
 * it). What it matches exactly: classes of U+0000–U+00FF only (negated ones
 * take every character above), and one character alone. So a set is written
 * as its low part in a class, plus either every character above U+00FF (the
 * negated form), or its few characters above U+00FF one by one.
 */
const MAX_HIGH_CHARS = 256;

const LOW: Ranges = [[0, 0xff]];
const HIGH: Ranges = withoutSurrogates([[0x100, 0x10ffff]]);

function classBody(ranges: Ranges): string {
  return ranges.map(([a, b]) => (a === b ? classChar(a) : b === a + 1 ? classChar(a) + classChar(b) : `${classChar(a)}-${classChar(b)}`)).join("");
}

const count = (ranges: Ranges) => ranges.reduce((n, [a, b]) => n + b - a + 1, 0);
const hex = (cp: number) => "U+" + cp.toString(16).toUpperCase().padStart(4, "0");

/**
 * An EBNF expression for a non-empty set. Where the set holds all characters
 * above U+00FF but a few (`.` without the `s` flag leaves out U+2028 and
 * U+2029; `\S` the Unicode spaces), that part cannot be written exactly
 * for web-llm 0.2.86 and is left out: tighter, never looser.
 */
function ebnfClass(ranges: Ranges): string {
  const low = intersect(ranges, LOW);
  const high = intersect(ranges, HIGH);
  const missingHigh = intersect(complement(high), HIGH);
  if (missingHigh.length === 0) {
    const lowMissing = intersect(complement(low), LOW);
    return lowMissing.length === 0 ? "[^\\ud800]" : `[^${classBody(lowMissing)}]`;
  }
  const alts: string[] = low.length > 0 ? [`[${classBody(low)}]`] : [];
  if (count(high) <= MAX_HIGH_CHARS) {
    for (const [a, b] of high) for (let cp = a; cp <= b; cp++) alts.push(ebnfString(String.fromCodePoint(cp)));
  } else if (count(missingHigh) > MAX_HIGH_CHARS) {
    const wide = high.find(([a, b]) => b - a >= MAX_HIGH_CHARS) ?? high[0];
    throw new GrammarError(`a character class with more than ${MAX_HIGH_CHARS} characters above U+00FF (${hex(wide[0])}–${hex(wide[1])}), which web-llm's grammar engine does not match exactly`);
  }
  if (alts.length === 0) throw new GrammarError("a character class with no character web-llm's grammar engine can match exactly");
  return alts.length === 1 ? alts[0] : `(${alts.join(" | ")})`;
}

/** What JSON.stringify writes for one code point (between the quotes). */
const jsonEscape = (text: string): string => JSON.stringify(text).slice(1, -1);

/** Code points JSON escapes: controls, `"` and `\`. */
const JSON_SPECIAL: Ranges = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

function intersect(a: Ranges, b: Ranges): Ranges {
  return withoutSurrogates(complement([...complement(a), ...complement(b)]));
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

/** Rule names, each after the rules it uses (through cycles, in some order): one pass of a fixpoint settles an acyclic grammar. */
function dependenciesFirst(uses: Map<string, Set<string>>): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  for (const start of uses.keys()) {
    if (seen.has(start)) continue;
    seen.add(start);
    // Iterative DFS: a long chain of rules must not overflow the stack.
    const stack: Array<[string, Iterator<string>]> = [[start, uses.get(start)!.values()]];
    while (stack.length > 0) {
      const [name, it] = stack[stack.length - 1];
      const next = it.next();
      if (next.done) {
        order.push(name);
        stack.pop();
      } else if (!seen.has(next.value)) {
        seen.add(next.value);
        stack.push([next.value, uses.get(next.value)!.values()]);
      }
    }
  }
  return order;
}

class Emitter {
  private readonly lines: string[] = [];
  private size = 0;
  private readonly maxChars: number;
  private readonly maxSteps: number;
  private steps = 0;
  /** The rule being worked on, for a refusal's message. */
  private current: string;
  private readonly names = new Map<string, string>();
  private readonly nonEmptyNames = new Map<string, string>();
  private readonly pending: Array<() => void> = [];
  private readonly nullable = new Map<string, boolean>();
  private readonly producesText = new Map<string, boolean>();
  private readonly classRules = new Map<string, string>();
  private readonly hoisted = new Map<string, string>();
  /** Repetitions written, by count and item text. */
  private readonly repetitions = new Map<string, string>();
  /** Rule names in dependency order. */
  private readonly order: string[];
  // Per-node answers, each computed once. The first two read `nullable` and
  // `producesText`, so they are cleared while those are still being computed.
  private nullableMemo = new Map<Node, boolean>();
  private textMemo = new Map<Node, boolean>();
  private readonly nonEmptyMemo = new Map<Node, Node | null>();
  private readonly exprMemo = new Map<Node, string>();
  private next = 0;

  constructor(
    private readonly grammar: Grammar,
    private readonly options: EmitOptions,
  ) {
    this.maxChars = options.maxChars ?? MAX_GRAMMAR_CHARS;
    this.maxSteps = options.maxSteps ?? MAX_COMPILE_STEPS;
    this.current = grammar.root;
    const uses = new Map<string, Set<string>>();
    for (const [name, body] of grammar.rules) uses.set(name, this.rulesUsed(name, body));
    if (!grammar.rules.has(grammar.root)) throw new GrammarError(`the start rule \`${grammar.root}\` is not defined`, "invalid");
    this.order = dependenciesFirst(uses);
    this.fixpoint(this.nullable, (n) => this.isNullable(n));
    this.fixpoint(this.producesText, (n) => this.canProduceText(n));
    // A chain of 1 000 rules that can be empty aborted web-llm 0.2.79's xgrammar (300 did not).
    const empty = [...this.nullable.values()].filter(Boolean).length;
    if (empty > MAX_CHAIN) throw new GrammarError(`${empty} rules that can match the empty text, over the bound of ${MAX_CHAIN}`, "too_large");
    this.refuseLeftRecursion();
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

  /** One unit of work (a node visited without a remembered answer); past MAX_COMPILE_STEPS, a refusal naming the rule. */
  private step(): void {
    if (++this.steps <= this.maxSteps) return;
    const where = this.grammar.rules.size === 1 ? "the expression" : `rule \`${this.current.replace(/\0/g, "")}\``;
    throw new GrammarError(`${where} takes more than ${this.maxSteps} steps to compile, over the bound; nest fewer groups or quantifiers`, "too_large");
  }

  /** The rules `node` uses (each node once: nodes can be shared); an undefined one is refused. */
  private rulesUsed(rule: string, body: Node): Set<string> {
    const used = new Set<string>();
    const seen = new Set<Node>();
    const visit = (node: Node): void => {
      if (seen.has(node)) return;
      seen.add(node);
      this.step();
      switch (node.k) {
        case "ref":
          if (!this.grammar.rules.has(node.name)) throw new GrammarError(`rule \`${rule}\` uses \`${node.name}\`, which is not defined`, "invalid");
          used.add(node.name);
          return;
        case "seq":
        case "alt":
          for (const item of node.items) visit(item);
          return;
        case "rep":
          visit(node.item);
          return;
        default:
          return;
      }
    };
    this.current = rule;
    visit(body);
    return used;
  }

  private fixpoint(map: Map<string, boolean>, of: (node: Node) => boolean): void {
    for (const name of this.order) map.set(name, false);
    for (let changed = true; changed; ) {
      changed = false;
      // A remembered `false` may be stale once a rule turns true; the last pass, which changes nothing, sees only current ones.
      this.nullableMemo = new Map();
      this.textMemo = new Map();
      for (const name of this.order) {
        this.current = name;
        if (!map.get(name) && of(this.grammar.rules.get(name)!)) {
          map.set(name, true);
          changed = true;
        }
      }
    }
  }

  /** Whether the node can match the empty text. */
  private isNullable(node: Node): boolean {
    const known = this.nullableMemo.get(node);
    if (known !== undefined) return known;
    this.step();
    let empty: boolean;
    switch (node.k) {
      case "lit":
        empty = node.text === "";
        break;
      case "class":
      case "raw":
        empty = false;
        break;
      case "seq":
        empty = node.items.every((i) => this.isNullable(i));
        break;
      case "alt":
        empty = node.items.some((i) => this.isNullable(i));
        break;
      case "rep":
        empty = node.min === 0 || this.isNullable(node.item);
        break;
      case "ref":
        empty = this.nullable.get(node.name) ?? false;
        break;
    }
    this.nullableMemo.set(node, empty);
    return empty;
  }

  /** Whether the node matches some non-empty text (and matches anything at all). */
  private canProduceText(node: Node): boolean {
    const known = this.textMemo.get(node);
    if (known !== undefined) return known;
    this.step();
    let text: boolean;
    switch (node.k) {
      case "lit":
        text = node.text !== "";
        break;
      case "class":
        text = node.ranges.length > 0;
        break;
      case "seq":
        text = node.items.every((i) => this.matchesSomething(i)) && node.items.some((i) => this.canProduceText(i));
        break;
      case "alt":
        text = node.items.some((i) => this.canProduceText(i));
        break;
      case "rep":
        text = (node.max ?? 1) > 0 && this.canProduceText(node.item);
        break;
      case "ref":
        text = this.producesText.get(node.name) ?? false;
        break;
      case "raw":
        text = true;
        break;
    }
    this.textMemo.set(node, text);
    return text;
  }

  private matchesSomething(node: Node): boolean {
    return this.isNullable(node) || this.canProduceText(node);
  }

  /** Adds to `into` the rules that can come first in the node's text (after items that can be empty). */
  private firstRules(node: Node, into: Set<string>, seen: Set<Node>): void {
    if (seen.has(node)) return;
    seen.add(node);
    this.step();
    switch (node.k) {
      case "seq":
        for (const item of node.items) {
          this.firstRules(item, into, seen);
          if (!this.isNullable(item)) return;
        }
        return;
      case "alt":
        for (const item of node.items) this.firstRules(item, into, seen);
        return;
      case "rep":
        this.firstRules(node.item, into, seen);
        return;
      case "ref":
        into.add(node.name);
        return;
      default:
        return;
    }
  }

  private refuseLeftRecursion(): void {
    const edges = new Map<string, Set<string>>();
    for (const [name, body] of this.grammar.rules) {
      const first = new Set<string>();
      this.current = name;
      this.firstRules(body, first, new Set());
      edges.set(name, first);
    }
    const state = new Map<string, 1 | 2>();
    const visit = (start: string): void => {
      // Iterative DFS: a long chain of rules must not overflow the stack.
      const stack: Array<[string, Iterator<string>]> = [[start, edges.get(start)!.values()]];
      state.set(start, 1);
      while (stack.length > 0) {
        const [name, it] = stack[stack.length - 1];
        const next = it.next();
        if (next.done) {
          state.set(name, 2);
          stack.pop();
          continue;
        }
        const s = state.get(next.value);
        if (s === 1) throw new GrammarError(`left recursion (rule \`${next.value}\` can begin with itself); write the repetition with \`*\` or \`+\` instead`);
        if (s === undefined) {
          state.set(next.value, 1);
          stack.push([next.value, edges.get(next.value)!.values()]);
        }
      }
    };
    for (const name of edges.keys()) if (!state.has(name)) visit(name);
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
      this.current = name;
      const node = nonEmpty ? this.nonEmpty(body) : body;
      this.push(`${ebnf} ::= ${node === null ? '""' : this.expr(node, true)}`);
    });
    return ebnf;
  }

  /** The node's language less the empty string; null when that is empty. */
  private nonEmpty(node: Node): Node | null {
    if (!this.isNullable(node)) return node;
    const known = this.nonEmptyMemo.get(node);
    if (known !== undefined) return known;
    this.step();
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
        return this.producesText.get(node.name) ? { k: "ref", name: "\0ne:" + node.name } : null;
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
    this.step();
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
    if (this.isNullable(item)) {
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

/** The grammar as xgrammar EBNF (root rule `root`). */
export function toEbnf(grammar: Grammar, options: EmitOptions = {}): string {
  return new Emitter(grammar, options).emit();
}

