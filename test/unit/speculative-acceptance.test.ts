import { describe, expect, it } from "vitest";
import { acceptGreedy, acceptSampled, argmax, sampleFrom, seededRandom, type Verdict } from "../../src/engine/speculative/acceptance.js";
import { GeneratedCounts, finalDistribution } from "../../src/engine/speculative/sampling.js";

describe("speculative acceptance: greedy", () => {
  const model = [5, 6, 7, 8, 9];
  it("keeps the agreeing prefix and adds the model's token after it", () => {
    expect(acceptGreedy([5, 6, 1, 8], (i) => model[i])).toEqual({ accepted: 2, tokens: [5, 6, 7] });
  });
  it("a fully accepted draft gets the bonus token", () => {
    expect(acceptGreedy([5, 6, 7], (i) => model[i])).toEqual({ accepted: 3, tokens: [5, 6, 7, 8] });
  });
  it("an empty draft is one plain decode step", () => {
    expect(acceptGreedy([], (i) => model[i])).toEqual({ accepted: 0, tokens: [5] });
  });
  it("asks for positions only up to the first disagreement", () => {
    const asked: number[] = [];
    acceptGreedy([1, 6, 7], (i) => (asked.push(i), model[i]));
    expect(asked).toEqual([0]);
  });
});

describe("speculative acceptance: sampling", () => {
  it("a point-mass distribution accepts exactly what greedy would", () => {
    const oneHot = (id: number) => Float64Array.from({ length: 10 }, (_, i) => (i === id ? 1 : 0));
    const random = seededRandom(1);
    expect(acceptSampled([5, 6, 2], (i) => oneHot([5, 6, 7, 8][i]), random)).toEqual({ accepted: 2, tokens: [5, 6, 7] });
  });

  it("never resamples the rejected token", () => {
    const p = [0.5, 0.5, 0];
    const random = seededRandom(2);
    for (let n = 0; n < 200; n++) {
      const v = acceptSampled([0], () => p, random);
      if (v.accepted === 0) expect(v.tokens).toEqual([1]);
    }
  });

  it("is reproducible with a seed", () => {
    const p = [0.2, 0.3, 0.5];
    const run = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 50 }, () => acceptSampled([2, 2, 1], () => p, random));
    };
    expect(run(42)).toEqual(run(42));
    expect(run(42)).not.toEqual(run(43));
  });

  it("sampleFrom draws in proportion and renormalizes without the excluded token", () => {
    const random = seededRandom(9);
    const counts = [0, 0, 0];
    for (let n = 0; n < 30000; n++) counts[sampleFrom([0.6, 0.1, 0.3], random, 0)]++;
    expect(counts[0]).toBe(0);
    expect(counts[1] / 30000).toBeCloseTo(0.25, 1);
  });
});

/**
 * A toy model over 6 tokens whose next-token distribution depends on the
 * previous token, decoded to 3 tokens one step at a time or speculatively
 * with a fixed (wrong-ish) draft. The joint distribution of the 3 tokens
 * must be the same: chi-square over the 216 cells, fixed seed.
 */
describe("speculative acceptance: the output distribution is unchanged", () => {
  const V = 6;
  const logitsAfter = (prev: number) => Float64Array.from({ length: V }, (_, i) => Math.sin(prev * 3.1 + i * 1.7) * 2);
  const params = { temperature: 0.8, top_p: 0.95, presence_penalty: 0.4, frequency_penalty: 0.3, logit_bias: { "2": 1.5 } };

  /** The distribution after `history` (penalties count the generated tokens). */
  function dist(history: number[]): Float64Array {
    const counts = new GeneratedCounts();
    for (const t of history) counts.add(t);
    return finalDistribution(logitsAfter(history.length ? history[history.length - 1] : 0), params, counts);
  }

  function speculative(random: () => number, accept: (draft: number[], d: (i: number) => ArrayLike<number>, r: () => number) => Verdict): number[] {
    const out: number[] = [];
    while (out.length < 3) {
      const draft = [2, 3, 2].slice(0, Math.max(0, 3 - out.length - 1));
      const v = accept(draft, (i) => dist([...out, ...draft.slice(0, i)]), random);
      out.push(...v.tokens);
    }
    return out.slice(0, 3);
  }

  function plain(random: () => number): number[] {
    const out: number[] = [];
    while (out.length < 3) out.push(sampleFrom(dist(out), random));
    return out;
  }

  function chiSquare(sample: (random: () => number) => number[], trials: number): number {
    const random = seededRandom(12345);
    const observed = new Float64Array(V * V * V);
    for (let n = 0; n < trials; n++) {
      const [a, b, c] = sample(random);
      observed[a * V * V + b * V + c]++;
    }
    let chi = 0;
    for (let a = 0; a < V; a++) {
      const pa = dist([])[a];
      for (let b = 0; b < V; b++) {
        const pb = dist([a])[b];
        for (let c = 0; c < V; c++) {
          const expected = trials * pa * pb * dist([a, b])[c];
          if (expected < 1e-9) {
            // A sequence of probability 0 that occurred: as far from the distribution as can be.
            if (observed[a * V * V + b * V + c] > 0) return Infinity;
            continue;
          }
          chi += (observed[a * V * V + b * V + c] - expected) ** 2 / expected;
        }
      }
    }
    return chi;
  }

  // 215 degrees of freedom at most: the 0.999 quantile is about 290.
  const LIMIT = 290;

  it("speculative sampling matches one-step sampling (chi-square)", () => {
    expect(chiSquare((r) => speculative(r, acceptSampled), 40000)).toBeLessThan(LIMIT);
  });

  it("the test can fail: accepting every draft token is detected", () => {
    const acceptAll = (draft: number[], d: (i: number) => ArrayLike<number>, r: () => number): Verdict => ({ accepted: draft.length, tokens: [...draft, sampleFrom(d(draft.length), r)] });
    expect(chiSquare((r) => speculative(r, acceptAll), 40000)).toBeGreaterThan(LIMIT);
  });

  it("the test can fail: resampling without removing the rejected token is detected", () => {
    const naive = (draft: number[], d: (i: number) => ArrayLike<number>, r: () => number): Verdict => {
      const tokens: number[] = [];
      for (let i = 0; i < draft.length; i++) {
        const p = d(i);
        if (r() < p[draft[i]]) tokens.push(draft[i]);
        else return { accepted: i, tokens: [...tokens, sampleFrom(p, r)] };
      }
      return { accepted: draft.length, tokens: [...tokens, sampleFrom(d(draft.length), r)] };
    };
    expect(chiSquare((r) => speculative(r, naive), 40000)).toBeGreaterThan(LIMIT);
  });

  it("and one-step sampling passes it", () => {
    expect(chiSquare(plain, 40000)).toBeLessThan(LIMIT);
  });
});

describe("final sampling distribution", () => {
  const none = new GeneratedCounts();
  it("greedy when the temperature is 0", () => {
    expect(Array.from(finalDistribution([1, 3, 2], { temperature: 0 }, none))).toEqual([0, 1, 0]);
  });
  it("softmax at the temperature", () => {
    const p = finalDistribution([0, Math.log(3)], { temperature: 1 }, none);
    expect(p[1]).toBeCloseTo(0.75, 10);
  });
  it("logit_bias, then presence and frequency penalties over generated tokens", () => {
    const counts = new GeneratedCounts();
    counts.add(1);
    counts.add(1);
    const p = finalDistribution([0, 0, 0], { temperature: 1, logit_bias: { "0": 1 }, presence_penalty: 0.5, frequency_penalty: 0.25 }, counts);
    // logits: [1, -1, 0]
    const z = [Math.exp(1), Math.exp(-1), 1];
    const sum = z.reduce((a, b) => a + b);
    expect(Array.from(p).map((x) => x.toFixed(6))).toEqual(z.map((x) => (x / sum).toFixed(6)));
  });
  it("repetition penalty divides positive logits and multiplies negative ones", () => {
    const counts = new GeneratedCounts();
    counts.add(0);
    counts.add(1);
    const p = finalDistribution([2, -1, 0], { temperature: 1, repetition_penalty: 2 }, counts);
    const z = [Math.exp(1), Math.exp(-2), 1];
    const sum = z.reduce((a, b) => a + b);
    expect(p[0]).toBeCloseTo(z[0] / sum, 10);
    expect(p[1]).toBeCloseTo(z[1] / sum, 10);
  });
  it("top_k, min_p and top_p remove tokens", () => {
    expect(Array.from(finalDistribution([3, 2, 1, 0], { temperature: 1, top_k: 2 }, none)).map((x) => x > 0)).toEqual([true, true, false, false]);
    expect(Array.from(finalDistribution([3, 2, 0, -5], { temperature: 1, min_p: 0.2 }, none)).map((x) => x > 0)).toEqual([true, true, false, false]);
    const p = finalDistribution([Math.log(6), Math.log(3), 0], { temperature: 1, top_p: 0.6 }, none);
    expect(Array.from(p)).toEqual([1, 0, 0]);
    expect(argmax(p)).toBe(0);
  });
});
