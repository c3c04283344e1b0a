/**
 * The grammars of issue 36 whose compile time blew up (exponential in nesting
 * depth, or hundreds of MB for a 50 KB repetition), shared by the emitter's
 * cost tests and the same grammars sent through the client.
 */
import { MAX_DEFINITION_CHARS } from "../../../src/grammar/limits.js";

/** `s = "a?"`, then n times `s = "(?:b?" + s + ")?"` (N = 20: 142 characters, 2.9 s before). */
export const nestedRegex = (n: number): string => {
  let s = "a?";
  for (let i = 0; i < n; i++) s = "(?:b?" + s + ")?";
  return s;
};

/** `start: ((("a")*)*…)*` `depth` deep, with `%ignore WS` (depth 10: 70 characters, 7.4 s before). */
export const nestedLark = (depth: number): string => {
  let s = '"a"';
  for (let i = 0; i < depth; i++) s = `(${s})*`;
  return `start: ${s}\n%import common.WS\n%ignore WS\n`;
};

/** 50 000 characters of `a{0,1000}a{0,999}a{0,998}…`: each count written out differs, about 7 000 characters each. */
export const distinctRepetitions50k = Array.from({ length: 6_400 }, (_, i) => `a{0,${1000 - (i % 1000)}}`)
  .join("")
  .slice(0, MAX_DEFINITION_CHARS)
  .replace(/a\{[^}]*$/, "");
