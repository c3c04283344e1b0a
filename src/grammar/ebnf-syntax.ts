/**
 * How characters are spelled in xgrammar's EBNF: string literals, character
 * classes (within what both web-xgrammar builds match exactly), and the
 * escapes JSON.stringify writes, for a language written inside a JSON string.
 * Apart from emit.ts's rule writing because it knows nothing of rules or
 * nodes: code points and ranges in, EBNF text out.
 */
import { complement, GrammarError, withoutSurrogates, type Ranges } from "./ir.js";

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

/**
 * A code point inside `[...]`, the one escaper for character classes (the
 * regex and Lark classes here, structural-tag-ebnf.ts's avoid-the-marker classes).
 */
export function classChar(cp: number): string {
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
export function ebnfClass(ranges: Ranges): string {
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
export const jsonEscape = (text: string): string => JSON.stringify(text).slice(1, -1);

/** Code points JSON escapes: controls, `"` and `\`. */
export const JSON_SPECIAL: Ranges = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

/** The code points in both `a` and `b` (never a surrogate). */
export function intersect(a: Ranges, b: Ranges): Ranges {
  return withoutSurrogates(complement([...complement(a), ...complement(b)]));
}
