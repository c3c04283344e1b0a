import { describe, expect, it } from "vitest";
import { NgramIndex, ngramHash } from "../../src/engine/speculative/ngram-index.js";

/** Indexes every bigram of `tokens`: position p follows tokens[p-2..p-1]. */
function bigrams(tokens: number[], tableHint = tokens.length) {
  const index = new NgramIndex(2, tableHint);
  for (let end = 2; end < tokens.length; end++) index.add(end, ngramHash(tokens, end - 2, 2));
  const find = (a: number, b: number, split = 0, cursorAbove = 0, cursorBelow = 0) =>
    index.pick(ngramHash([a, b], 0, 2), (end) => tokens[end - 2] === a && tokens[end - 1] === b, split, cursorAbove, cursorBelow);
  return find;
}

describe("n-gram index", () => {
  //                 0  1  2  3  4  5  6  7  8  9 10 11
  const tokens = [1, 2, 9, 1, 2, 8, 5, 1, 2, 7, 3, 4];
  it("finds the first occurrence at or after the cursor, else the latest before it", () => {
    const find = bigrams(tokens);
    expect(find(1, 2, 0, 0)).toBe(2);
    expect(find(1, 2, 0, 3)).toBe(5);
    expect(find(1, 2, 0, 6)).toBe(9);
    expect(find(1, 2, 0, 10), "none after: the latest").toBe(9);
    expect(find(6, 6)).toBeNull();
  });

  it("prefers positions at or above the split, then below it with its own cursor", () => {
    const find = bigrams(tokens);
    expect(find(1, 2, 6, 0, 0), "above 6: position 9").toBe(9);
    expect(find(1, 2, 10, 0, 0), "nothing above 10: below, from its cursor").toBe(2);
    expect(find(1, 2, 10, 0, 4)).toBe(5);
  });

  it("verifies candidates: n-grams sharing a bucket do not match each other", () => {
    // A table of 1024 buckets and 5000 distinct bigrams: many collide.
    const many = Array.from({ length: 5002 }, (_, i) => i);
    const find = bigrams(many, 10);
    for (let i = 0; i < 5000; i += 97) expect(find(i, i + 1)).toBe(i + 2);
  });

  it("grows past the expected size", () => {
    const index = new NgramIndex(1, 4);
    const tokens = Array.from({ length: 100 }, (_, i) => i % 10);
    for (let end = 1; end < tokens.length; end++) index.add(end, ngramHash(tokens, end - 1, 1));
    expect(index.pick(ngramHash([3], 0, 1), (end) => tokens[end - 1] === 3, 0, 50, 0)).toBe(54);
  });
});
