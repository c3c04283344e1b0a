/**
 * A regular expression (JavaScript RegExp source syntax; Lark's Python-style
 * regex literals through `dialect: "python"`) → grammar (ir.ts), matching the
 * whole text. Exact or refused:
 *
 * - literals, escapes (`\n`, `\x41`, `\u0041`, `\u{1F600}` with `u`, `\cJ`,
 *   `\0`, identity escapes), classes and negated classes, `\d \w \s` and their
 *   negations (the ASCII sets JavaScript gives them; `\s` its Unicode spaces),
 *   `.`, groups (capturing, named, `(?:…)`), alternation, `? * +`, `{m}`,
 *   `{m,}`, `{m,n}` (lazy forms too: laziness does not change what matches);
 * - `^` only at the very start and `$` only at the very end (the whole text
 *   must match either way);
 * - refused, naming the construct: lookahead/lookbehind, backreferences, word
 *   boundaries, Unicode property escapes, inline flags, flags `i`, `m`, `v`
 *   (`g`, `y`, `d` change nothing for a whole-text match and are ignored).
 *
 * Characters are Unicode code points, as with the `u` flag: without it
 * JavaScript's `.` matches half of an astral character (an emoji is `..`),
 * here one whole character. An astral character inside a class without `u`
 * (JavaScript reads two halves) is refused.
 */
import { alt, cls, complement, GrammarError, lit, normalize, rep, seq, type Grammar, type Node, type Ranges } from "./ir.js";
import { MAX_NESTING, MAX_REPEAT } from "./limits.js";

export interface RegexOptions {
  /** RegExp flags. */
  flags?: string;
  /** `python`: Lark's regex literals (`.` excludes only `\n`, code points, `(?P<name>…)`, `{,n}`). */
  dialect?: "js" | "python";
}

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
/** JavaScript's `\s`: WhiteSpace and LineTerminator. */
const SPACE: Ranges = normalize([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

const FLAG_REFUSED: Record<string, string> = {
  i: "the `i` flag (case-insensitive matching)",
  m: "the `m` flag (multiline anchors)",
  v: "the `v` flag (set notation)",
};

class RegexParser {
  private readonly chars: string[];
  private pos = 0;
  private readonly unicode: boolean;
  private readonly dotAll: boolean;
  private readonly python: boolean;
  /** The largest code point: outputs are UTF-8 text, read as code points. */
  private readonly maxCp: number;

  constructor(source: string, options: RegexOptions) {
    this.chars = [...source];
    const flags = options.flags ?? "";
    for (const flag of flags) {
      if (FLAG_REFUSED[flag]) throw new GrammarError(FLAG_REFUSED[flag]);
      if (!"usgyd".includes(flag)) throw new GrammarError(`the regex flag \`${flag}\``, "invalid");
    }
    this.python = options.dialect === "python";
    this.unicode = this.python || flags.includes("u");
    this.dotAll = flags.includes("s");
    this.maxCp = 0x10ffff;
  }

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.chars.length) throw this.invalid(`an unmatched \`${this.chars[this.pos]}\``);
    return node;
  }

  private invalid(what: string): GrammarError {
    return new GrammarError(`invalid regex: ${what} at position ${this.pos}`, "invalid");
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  private alternation(): Node {
    const items = [this.sequence()];
    while (this.peek() === "|") {
      this.pos++;
      items.push(this.sequence());
    }
    return alt(items);
  }

  private sequence(): Node {
    const items: Node[] = [];
    let text = "";
    while (this.pos < this.chars.length && this.peek() !== "|" && this.peek() !== ")") {
      const atom = this.quantified();
      // Runs of literal characters become one literal.
      if (atom.k === "lit") text += atom.text;
      else {
        if (text !== "") items.push(lit(text));
        text = "";
        items.push(atom);
      }
    }
    if (text !== "" || items.length === 0) items.push(lit(text));
    return seq(items);
  }

  private quantified(): Node {
    const atom = this.atom();
    const q = this.quantifier();
    if (q === undefined) return atom;
    if (atom.k === "lit" && atom.text === "" && this.anchorJustRead) throw new GrammarError("a quantified anchor");
    if (this.peek() === "?") this.pos++; // lazy: the same language
    if (this.quantifierAhead()) throw this.invalid("nothing to repeat");
    return rep(atom, q[0], q[1]);
  }

  private anchorJustRead = false;

  private quantifierAhead(): boolean {
    const c = this.peek();
    if (c === "*" || c === "+" || c === "?") return true;
    return c === "{" && this.braceQuantifier(false) !== undefined;
  }

  private quantifier(): [number, number | undefined] | undefined {
    const c = this.peek();
    if (c === "*" || c === "+" || c === "?") {
      this.pos++;
      return c === "*" ? [0, undefined] : c === "+" ? [1, undefined] : [0, 1];
    }
    if (c === "{") return this.braceQuantifier(true);
    return undefined;
  }

  /** `{m}`, `{m,}`, `{m,n}` (Python also `{,n}`); undefined when the brace is not a quantifier. */
  private braceQuantifier(consume: boolean): [number, number | undefined] | undefined {
    const rest = this.chars.slice(this.pos, this.pos + 24).join("");
    const m = (this.python ? /^\{(\d*)(,(\d*))?\}/ : /^\{(\d+)(,(\d*))?\}/).exec(rest);
    if (!m || (m[1] === "" && m[2] === undefined)) return undefined;
    const min = m[1] === "" ? 0 : Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? undefined : Number(m[3]);
    if (consume) {
      if (max !== undefined && max < min) throw this.invalid("numbers out of order in a `{}` quantifier");
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) throw new GrammarError(`a repetition count above the bound of ${MAX_REPEAT}`, "too_large");
      this.pos += [...m[0]].length;
    }
    return [min, max];
  }

  private atom(): Node {
    this.anchorJustRead = false;
    const c = this.chars[this.pos++];
    switch (c) {
      case "^":
        if (this.pos !== 1) throw new GrammarError("a `^` anchor that is not at the start of the pattern");
        this.anchorJustRead = true;
        return lit("");
      case "$":
        if (this.pos !== this.chars.length) throw new GrammarError("a `$` anchor that is not at the end of the pattern");
        this.anchorJustRead = true;
        return lit("");
      case "(":
        return this.group();
      case ".":
        return cls(this.dotAll ? [[0, this.maxCp]] : this.python ? complement([[0x0a, 0x0a]], this.maxCp) : complement(LINE_TERMINATORS, this.maxCp));
      case "[":
        return this.characterClass();
      case "\\":
        return this.atomEscape();
      case "*":
      case "+":
      case "?":
        throw this.invalid("nothing to repeat");
      case "{":
        this.pos--;
        if (this.braceQuantifier(false) !== undefined) throw this.invalid("nothing to repeat");
        this.pos++;
        return lit("{");
      default:
        return lit(c);
    }
  }

  private depth = 0;

  private group(): Node {
    if (++this.depth > MAX_NESTING) throw new GrammarError(`groups nested deeper than the bound of ${MAX_NESTING}`, "too_large");
    const node = this.groupBody();
    this.depth--;
    return node;
  }

  private groupBody(): Node {
    if (this.peek() === "?") {
      const rest = this.chars.slice(this.pos, this.pos + 4).join("");
      if (rest.startsWith("?:")) this.pos += 2;
      else if (rest.startsWith("?=") || rest.startsWith("?!")) throw new GrammarError(`a lookahead \`(${rest.slice(0, 2)}…)\``);
      else if (rest.startsWith("?<=") || rest.startsWith("?<!")) throw new GrammarError(`a lookbehind \`(${rest.slice(0, 3)}…)\``);
      else if (/^\?P?<[A-Za-z_$]/.test(rest)) {
        while (this.pos < this.chars.length && this.peek() !== ">") this.pos++;
        this.pos++;
      } else if (this.python && rest.startsWith("?P=")) throw new GrammarError("a backreference `(?P=…)`");
      else throw new GrammarError(`the group modifier \`(${rest.slice(0, 2)}…)\` (inline flags, conditionals, comments)`);
    }
    const inner = this.alternation();
    if (this.chars[this.pos++] !== ")") throw this.invalid("an unterminated group");
    return inner;
  }

  private atomEscape(): Node {
    const escape = this.escape(false);
    return typeof escape === "number" ? lit(String.fromCodePoint(escape)) : cls(escape);
  }

  /** One escape after `\`: a code point, or a set for `\d` and the like. */
  private escape(inClass: boolean): number | Ranges {
    const c = this.chars[this.pos++];
    if (c === undefined) throw this.invalid("a `\\` at the end of the pattern");
    switch (c) {
      case "d":
        return DIGIT;
      case "D":
        return complement(DIGIT, this.maxCp);
      case "w":
        return WORD;
      case "W":
        return complement(WORD, this.maxCp);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE, this.maxCp);
      case "b":
        if (inClass) return 0x08;
        throw new GrammarError("a word-boundary assertion `\\b`");
      case "B":
        throw new GrammarError("a word-boundary assertion `\\B`");
      case "A":
      case "Z":
      case "z":
      case "G":
        if (this.python) throw new GrammarError(`the anchor \`\\${c}\``);
        return c.codePointAt(0)!;
      case "n":
        return 0x0a;
      case "r":
        return 0x0d;
      case "t":
        return 0x09;
      case "v":
        return 0x0b;
      case "f":
        return 0x0c;
      case "0":
        if (/[0-9]/.test(this.peek() ?? "")) throw new GrammarError("an octal escape");
        return 0;
      case "c": {
        const letter = this.peek();
        if (letter && /[A-Za-z]/.test(letter)) {
          this.pos++;
          return letter.charCodeAt(0) % 32;
        }
        return 0x5c; // Annex B: `\c` not followed by a letter is a backslash
      }
      case "x": {
        const hex = this.chars.slice(this.pos, this.pos + 2).join("");
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw this.invalid("a `\\x` escape without two hex digits");
        this.pos += 2;
        return parseInt(hex, 16);
      }
      case "u":
        return this.unicodeEscape();
      case "p":
      case "P":
        throw new GrammarError(`a Unicode property escape \`\\${c}{…}\``);
      case "k":
        throw new GrammarError("a backreference `\\k<…>`");
      default:
        if (/[1-9]/.test(c)) throw new GrammarError(`a backreference \`\\${c}\``);
        return c.codePointAt(0)!;
    }
  }

  private unicodeEscape(): number {
    if (this.peek() === "{" && this.unicode) {
      const end = this.chars.indexOf("}", this.pos);
      const hex = end < 0 ? "" : this.chars.slice(this.pos + 1, end).join("");
      if (!/^[0-9a-fA-F]{1,6}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) throw this.invalid("a bad `\\u{…}` escape");
      this.pos = end + 1;
      return parseInt(hex, 16);
    }
    const hex = this.chars.slice(this.pos, this.pos + 4).join("");
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.invalid("a `\\u` escape without four hex digits");
    this.pos += 4;
    const cp = parseInt(hex, 16);
    if (cp >= 0xd800 && cp <= 0xdbff && this.peek() === "\\" && this.peek(1) === "u") {
      const low = this.chars.slice(this.pos + 2, this.pos + 6).join("");
      const lowCp = /^[0-9a-fA-F]{4}$/.test(low) ? parseInt(low, 16) : 0;
      if (lowCp >= 0xdc00 && lowCp <= 0xdfff) {
        this.pos += 6;
        return 0x10000 + ((cp - 0xd800) << 10) + (lowCp - 0xdc00);
      }
    }
    if (cp >= 0xd800 && cp <= 0xdfff) throw new GrammarError("a lone surrogate `\\u" + hex + "`");
    return cp;
  }

  private characterClass(): Node {
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.pos++;
    }
    const ranges: Ranges = [];
    for (;;) {
      if (this.pos >= this.chars.length) throw this.invalid("an unterminated character class");
      if (this.peek() === "]") {
        this.pos++;
        break;
      }
      if (this.peek() === "[" && this.peek(1) === ":") throw new GrammarError("a POSIX class `[:…:]`");
      const left = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.pos++;
        const right = this.classAtom();
        if (typeof left === "number" && typeof right === "number") {
          if (right < left) throw this.invalid("a class range out of order");
          ranges.push([left, right]);
          continue;
        }
        // Annex B: a range with a set on either side is the set, `-` and the other side.
        for (const range of asRanges(left)) ranges.push(range);
        ranges.push([0x2d, 0x2d]);
        for (const range of asRanges(right)) ranges.push(range);
        continue;
      }
      for (const range of asRanges(left)) ranges.push(range);
    }
    const set = normalize(ranges);
    return cls(negated ? complement(set, this.maxCp) : set);
  }

  private classAtom(): number | Ranges {
    const c = this.chars[this.pos++];
    if (c === "\\") {
      if (this.peek() === "-") {
        this.pos++;
        return 0x2d;
      }
      return this.escape(true);
    }
    const cp = c.codePointAt(0)!;
    if (cp > 0xffff && !this.unicode) throw new GrammarError("an astral character inside a class without the `u` flag");
    return cp;
  }
}

const asRanges = (atom: number | Ranges): Ranges => (typeof atom === "number" ? [[atom, atom]] : atom);

/** A regex as a grammar node (the whole text must match it). */
export function regexToNode(source: string, options: RegexOptions = {}): Node {
  return new RegexParser(source, options).parse();
}

/** A regex as a one-rule grammar. */
export function regexToGrammar(source: string, options: RegexOptions = {}): Grammar {
  return { rules: new Map([["regex", regexToNode(source, options)]]), root: "regex" };
}
