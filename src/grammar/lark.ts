/**
 * A Lark grammar (the subset below) → grammar (ir.ts); the text must match
 * the rule `start`. Exact or refused, naming the construct:
 *
 * - rules (`name: …`, with `?`/`!` prefixes and `_inline` names) and
 *   terminals (`NAME: …`; a priority `.n` only orders Lark's lexer and is
 *   ignored), continuation lines starting with `|`;
 * - string literals (`"…"`, escapes as in Python), character ranges
 *   (`"a".."z"`), regex literals (`/…/`, the regex subset of regex.ts in
 *   Python's reading: `.` excludes only `\n`; flag `s`), alternation,
 *   grouping, `[…]` and `?` (optional), `*`, `+`, `~ n` and `~ n..m`,
 *   aliases (`-> name`, which do not change what matches);
 * - `%import common.X` (and `%import common (X, Y)`, `-> ALIAS`) for the
 *   terminals of Lark's common.lark listed in COMMON; `%ignore X` (X may
 *   appear between any two items of a rule, and around the whole text);
 * - refused: templates, `%declare`, `%override`, `%extend`, imports from
 *   other modules, case-insensitive literals (`"…"i`, `/…/i`), left recursion.
 *
 * The language is the grammar's own (context-free): terminals match their
 * text wherever the rules put them, without Lark's lexer choosing one
 * tokenization first.
 */
import { alt, cls, GrammarError, lit, ref, rep, seq, type Grammar, type Node } from "./ir.js";
import { MAX_NESTING, MAX_REPEAT } from "./limits.js";
import { regexToNode } from "./regex.js";

/** Lark's common.lark terminals this compiler imports (ESCAPED_STRING written without its lookbehind, same language). */
const COMMON: Record<string, string> = {
  DIGIT: '"0".."9"',
  HEXDIGIT: '"a".."f" | "A".."F" | DIGIT',
  INT: "DIGIT+",
  SIGNED_INT: '["+"|"-"] INT',
  DECIMAL: 'INT "." INT? | "." INT',
  _EXP: '("e"|"E") SIGNED_INT',
  FLOAT: "INT _EXP | DECIMAL _EXP?",
  SIGNED_FLOAT: '["+"|"-"] FLOAT',
  NUMBER: "FLOAT | INT",
  SIGNED_NUMBER: '["+"|"-"] NUMBER',
  ESCAPED_STRING: '"\\"" /([^"\\\\\\n]|\\\\[^\\n])*/ "\\""',
  LCASE_LETTER: '"a".."z"',
  UCASE_LETTER: '"A".."Z"',
  LETTER: "UCASE_LETTER | LCASE_LETTER",
  WORD: "LETTER+",
  CNAME: '("_"|LETTER) ("_"|LETTER|DIGIT)*',
  WS_INLINE: '(" "|/\\t/)+',
  WS: "/[ \\t\\f\\r\\n]/+",
  CR: "/\\r/",
  LF: "/\\n/",
  NEWLINE: "(CR? LF)+",
};

/** The common terminals an app may import. */
export const LARK_COMMON_TERMINALS = Object.keys(COMMON).filter((name) => !name.startsWith("_"));

type Token =
  | { t: "str"; value: string }
  | { t: "regex"; source: string; flags: string }
  | { t: "name"; value: string }
  | { t: "num"; value: number }
  | { t: "op"; value: string };

const unsupported = (what: string) => new GrammarError(what);
const invalid = (what: string) => new GrammarError(what, "invalid");

/** Tokens of one definition's expansion. */
function tokenize(text: string, where: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let value = "";
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "\\") {
          const [cp, next] = stringEscape(text, j + 1, where);
          value += String.fromCodePoint(cp);
          j = next;
        } else value += text[j++];
      }
      if (j >= text.length) throw invalid(`an unterminated string in ${where}`);
      i = j + 1;
      if (text[i] === "i") throw unsupported(`a case-insensitive literal \`"${value}"i\` in ${where}`);
      tokens.push({ t: "str", value });
      continue;
    }
    if (c === "/" && text[i + 1] !== "/") {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && (text[j] !== "/" || inClass)) {
        if (text[j] === "\\") j++;
        else if (text[j] === "[") inClass = true;
        else if (text[j] === "]") inClass = false;
        j++;
      }
      if (j >= text.length) throw invalid(`an unterminated regex in ${where}`);
      const source = text.slice(i + 1, j);
      const flags = /^[a-z]*/.exec(text.slice(j + 1))![0];
      i = j + 1 + flags.length;
      tokens.push({ t: "regex", source, flags });
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (name) {
      tokens.push({ t: "name", value: name[0] });
      i += name[0].length;
      continue;
    }
    const num = /^\d+/.exec(text.slice(i));
    if (num) {
      tokens.push({ t: "num", value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const op = /^(\.\.|->|[|()[\]?*+~{},])/.exec(text.slice(i));
    if (!op) throw invalid(`an unexpected \`${c}\` in ${where}`);
    tokens.push({ t: "op", value: op[0] });
    i += op[0].length;
  }
  return tokens;
}

/** A Python string escape after `\` at `i`: the code point and where the string goes on. */
function stringEscape(text: string, i: number, where: string): [number, number] {
  const c = text[i];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, b: 8, a: 7, "0": 0, "\\": 92, '"': 34, "'": 39 };
  if (c in simple) return [simple[c], i + 1];
  const width = c === "x" ? 2 : c === "u" ? 4 : c === "U" ? 8 : 0;
  if (width > 0) {
    const hex = text.slice(i + 1, i + 1 + width);
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) throw invalid(`a bad \`\\${c}\` escape in ${where}`);
    return [parseInt(hex, 16), i + 1 + width];
  }
  // Python keeps an unknown escape as the backslash and the character.
  return [92, i];
}

class ExpansionParser {
  private pos = 0;
  private depth = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly where: string,
    private readonly names: Set<string>,
  ) {}

  parse(): Node {
    const node = this.alternatives();
    if (this.pos < this.tokens.length) throw invalid(`an unexpected ${describeToken(this.tokens[this.pos])} in ${this.where}`);
    return node;
  }

  private peekOp(value: string): boolean {
    const t = this.tokens[this.pos];
    return t !== undefined && t.t === "op" && t.value === value;
  }

  private alternatives(): Node {
    const items = [this.aliased()];
    while (this.peekOp("|")) {
      this.pos++;
      items.push(this.aliased());
    }
    return alt(items);
  }

  private aliased(): Node {
    const node = this.sequence();
    if (this.peekOp("->")) {
      this.pos++;
      if (this.tokens[this.pos]?.t !== "name") throw invalid(`an alias without a name in ${this.where}`);
      this.pos++;
    }
    return node;
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (;;) {
      const t = this.tokens[this.pos];
      if (t === undefined || (t.t === "op" && ["|", ")", "]", "->"].includes(t.value))) break;
      items.push(this.quantified());
    }
    return items.length === 0 ? lit("") : seq(items);
  }

  private quantified(): Node {
    const atom = this.atom();
    const t = this.tokens[this.pos];
    if (t?.t !== "op") return atom;
    if (t.value === "?" || t.value === "*" || t.value === "+") {
      this.pos++;
      return t.value === "?" ? rep(atom, 0, 1) : rep(atom, t.value === "*" ? 0 : 1, undefined);
    }
    if (t.value === "~") {
      this.pos++;
      const min = this.number();
      let max = min;
      if (this.peekOp("..")) {
        this.pos++;
        max = this.number();
      }
      if (max < min) throw invalid(`a repetition \`~ ${min}..${max}\` out of order in ${this.where}`);
      if (max > MAX_REPEAT) throw new GrammarError(`a repetition count above the bound of ${MAX_REPEAT}`, "too_large");
      return rep(atom, min, max);
    }
    return atom;
  }

  private number(): number {
    const t = this.tokens[this.pos++];
    if (t?.t !== "num") throw invalid(`\`~\` without a count in ${this.where}`);
    return t.value;
  }

  private atom(): Node {
    const t = this.tokens[this.pos++];
    if (t === undefined) throw invalid(`an expansion that ends early in ${this.where}`);
    switch (t.t) {
      case "str": {
        if (this.peekOp("..")) {
          this.pos++;
          const to = this.tokens[this.pos++];
          const a = [...t.value];
          const b = to?.t === "str" ? [...to.value] : [];
          if (a.length !== 1 || b.length !== 1) throw invalid(`a range \`"…".."…"\` that is not between single characters in ${this.where}`);
          const lo = a[0].codePointAt(0)!;
          const hi = b[0].codePointAt(0)!;
          if (hi < lo) throw invalid(`a range out of order in ${this.where}`);
          return cls([[lo, hi]]);
        }
        return lit(t.value);
      }
      case "regex": {
        for (const flag of t.flags) {
          if (flag === "i") throw unsupported(`a case-insensitive regex \`/${t.source}/i\` in ${this.where}`);
          if (flag !== "s" && flag !== "u") throw unsupported(`the regex flag \`${flag}\` in ${this.where}`);
        }
        return regexToNode(t.source, { dialect: "python", flags: t.flags.includes("s") ? "s" : "" });
      }
      case "name":
        if (this.peekOp("{")) throw unsupported(`a template \`${t.value}{…}\` in ${this.where}`);
        this.names.add(t.value);
        return ref(t.value);
      case "op":
        if (t.value === "(" || t.value === "[") {
          if (++this.depth > MAX_NESTING) throw new GrammarError(`groups nested deeper than the bound of ${MAX_NESTING}`, "too_large");
          const inner = this.alternatives();
          this.depth--;
          const close = t.value === "(" ? ")" : "]";
          if (!this.peekOp(close)) throw invalid(`a \`${t.value}\` without its \`${close}\` in ${this.where}`);
          this.pos++;
          return t.value === "(" ? inner : rep(inner, 0, 1);
        }
        throw invalid(`an unexpected \`${t.value}\` in ${this.where}`);
      default:
        throw invalid(`an unexpected number in ${this.where}`);
    }
  }
}

function describeToken(t: Token): string {
  return t.t === "op" ? `\`${t.value}\`` : t.t === "name" ? `name \`${t.value}\`` : t.t;
}

/** Text without `//` comments (outside strings and regexes). */
function stripComment(line: string): string {
  let inString = false;
  let inRegex = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (!inRegex && c === '"') inString = !inString;
    else if (!inString && c === "/" && line[i + 1] === "/" && !inRegex) return line.slice(0, i);
    else if (!inString && c === "/") inRegex = !inRegex;
  }
  return line;
}

/** A Lark grammar as a grammar whose root is `start`. */
export function larkToGrammar(definition: string): Grammar {
  const rules = new Map<string, Node>();
  const ruleNames = new Set<string>();
  const ignored: string[] = [];
  const imports = new Map<string, string>();
  const used = new Set<string>();

  // Statements: a line that starts in column 0; indented lines, and lines starting with `|`, continue it.
  const statements: string[] = [];
  for (const raw of definition.split(/\r?\n/)) {
    const line = stripComment(raw);
    if (line.trim() === "") continue;
    if ((/^\s/.test(line) || line.startsWith("|")) && statements.length > 0) statements[statements.length - 1] += " " + line.trim();
    else statements.push(line.trim());
  }

  for (const statement of statements) {
    if (statement.startsWith("%")) {
      directive(statement, imports, ignored, used);
      continue;
    }
    const head = /^([?!]?)([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?(\.-?\d+)?\s*:(.*)$/s.exec(statement);
    if (!head) throw invalid(`a line that is neither a rule, a terminal nor a directive: \`${statement.slice(0, 60)}\``);
    const [, , name, params, , body] = head;
    if (params) throw unsupported(`a template rule \`${name}${params}\``);
    if (rules.has(name)) throw invalid(`\`${name}\` defined twice`);
    const where = `\`${name}\``;
    rules.set(name, new ExpansionParser(tokenize(body, where), where, used).parse());
    if (!/^_?[A-Z]/.test(name)) ruleNames.add(name);
  }

  // Imported common terminals (and the ones they use), parsed from COMMON.
  const pending = [...imports.entries()];
  while (pending.length > 0) {
    const [local, common] = pending.pop()!;
    if (rules.has(local)) continue;
    const deps = new Set<string>();
    const where = `common.${common}`;
    let node = new ExpansionParser(tokenize(COMMON[common], where), where, deps).parse();
    if (local !== common) node = ref(common);
    rules.set(local, node);
    if (local !== common) pending.push([common, common]);
    for (const dep of deps) if (!rules.has(dep)) pending.push([dep, dep]);
  }

  for (const name of used) if (!rules.has(name)) throw invalid(`\`${name}\` is used but not defined (nor imported from common)`);
  if (!rules.has("start")) throw invalid("no `start` rule");

  if (ignored.length > 0) {
    const skip = rep(alt(ignored.map(ref)), 0, undefined);
    for (const name of ruleNames) rules.set(name, interleave(rules.get(name)!, skip));
    rules.set("\0start", seq([skip, ref("start"), skip]));
    return { rules, root: "\0start" };
  }
  return { rules, root: "start" };
}

/** `%import common.X`, `%import common (X, Y)`, `%ignore X`; anything else refused. */
function directive(statement: string, imports: Map<string, string>, ignored: string[], used: Set<string>): void {
  const single = /^%import\s+common\.([A-Z_]+)(?:\s*->\s*([A-Za-z_][A-Za-z0-9_]*))?$/.exec(statement);
  const list = /^%import\s+common\s*\(([^)]*)\)$/.exec(statement);
  const names = single ? [[single[1], single[2] ?? single[1]]] : list ? list[1].split(",").map((n) => [n.trim(), n.trim()]) : undefined;
  if (names) {
    for (const [common, local] of names) {
      if (!(common in COMMON) || common.startsWith("_")) throw unsupported(`\`%import common.${common}\` (the common terminals here: ${LARK_COMMON_TERMINALS.join(", ")})`);
      imports.set(local, common);
    }
    return;
  }
  const ignore = /^%ignore\s+(.+)$/.exec(statement);
  if (ignore) {
    const target = ignore[1].trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(target)) throw unsupported(`\`%ignore\` of anything but a terminal name (\`${target}\`)`);
    ignored.push(target);
    used.add(target);
    return;
  }
  const keyword = /^%\w+/.exec(statement)?.[0] ?? statement;
  if (keyword === "%import") throw unsupported(`\`${statement}\` (only \`%import common.X\` is supported)`);
  throw unsupported(`the directive \`${keyword}\``);
}

/** A rule body with `skip` (ignored terminals) allowed between any two of its items. */
function interleave(node: Node, skip: Node): Node {
  switch (node.k) {
    case "seq":
      return seq(node.items.flatMap((item, i) => (i === 0 ? [interleave(item, skip)] : [skip, interleave(item, skip)])));
    case "alt":
      return alt(node.items.map((item) => interleave(item, skip)));
    case "rep": {
      // Between repetitions too: item (skip item)*, written as the first and the rest.
      const item = interleave(node.item, skip);
      if (node.max === 1) return rep(item, node.min, 1);
      const more = rep(seq([skip, item]), Math.max(node.min - 1, 0), node.max === undefined ? undefined : node.max - 1);
      const some = seq([item, more]);
      return node.min === 0 ? rep(some, 0, 1) : some;
    }
    default:
      return node;
  }
}
