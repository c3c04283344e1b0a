/**
 * The grammar form the app-grammar compilers (regex.ts, lark.ts) produce and
 * emit.ts writes as xgrammar EBNF: rules over literals, code-point classes,
 * sequences, alternatives and bounded or unbounded repetition. Nothing in it
 * is looser than the source: a construct a compiler cannot put here exactly
 * is a GrammarError naming it.
 */

/** A set of code points as sorted, disjoint, non-adjacent inclusive ranges. */
export type Ranges = Array<[number, number]>;

export type Node =
  | { k: "lit"; text: string }
  | { k: "class"; ranges: Ranges }
  | { k: "seq"; items: Node[] }
  | { k: "alt"; items: Node[] }
  /** `max` undefined: unbounded. */
  | { k: "rep"; item: Node; min: number; max: number | undefined }
  | { k: "ref"; name: string }
  /** Written by the emitter itself: EBNF text that never matches the empty string. */
  | { k: "raw"; ebnf: string };

export interface Grammar {
  /** Rule bodies by name; `root` names the rule the whole text must match. */
  rules: Map<string, Node>;
  root: string;
}

/**
 * A grammar this library will not compile: `construct` names what (a
 * lookahead, a backreference, a size bound), for the 400 the faces send.
 */
export class GrammarError extends Error {
  override name = "GrammarError";
  constructor(
    message: string,
    /** `unsupported`: a construct we cannot express exactly; `too_large`: over a size bound. */
    readonly reason: "unsupported" | "too_large" | "invalid" = "unsupported",
  ) {
    super(message);
  }
}

export const MAX_CODE_POINT = 0x10ffff;

export const lit = (text: string): Node => ({ k: "lit", text });
export const seq = (items: Node[]): Node => (items.length === 1 ? items[0] : { k: "seq", items });
export const alt = (items: Node[]): Node => (items.length === 1 ? items[0] : { k: "alt", items });
export const rep = (item: Node, min: number, max: number | undefined): Node => ({ k: "rep", item, min, max });
export const ref = (name: string): Node => ({ k: "ref", name });

/** Sorted, merged ranges. */
export function normalize(ranges: Ranges): Ranges {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The code points in 0..`max` that are not in `ranges`. */
export function complement(ranges: Ranges, max = MAX_CODE_POINT): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of normalize(ranges)) {
    if (a > next) out.push([next, Math.min(a - 1, max)]);
    next = Math.max(next, b + 1);
  }
  if (next <= max) out.push([next, max]);
  return out.filter(([a, b]) => a <= b);
}

/** Ranges less the surrogate code points, which UTF-8 output can never hold. */
export function withoutSurrogates(ranges: Ranges): Ranges {
  return normalize(ranges).flatMap(([a, b]): Ranges => {
    if (b < 0xd800 || a > 0xdfff) return [[a, b]];
    const parts: Ranges = [];
    if (a < 0xd800) parts.push([a, 0xd7ff]);
    if (b > 0xdfff) parts.push([0xe000, b]);
    return parts;
  });
}

export function cls(ranges: Ranges): Node {
  return { k: "class", ranges: withoutSurrogates(ranges) };
}
