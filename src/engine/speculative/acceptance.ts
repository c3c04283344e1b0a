/**
 * Which drafted tokens the model keeps. The engine runs the last accepted
 * token plus the draft through one forward pass, with logits at every
 * position: row i is the distribution of the token after draft[0..i-1].
 * Pure: tested in Node on token ids and probability vectors.
 *
 * - Greedy: the longest prefix of the draft that agrees with the argmax at
 *   each position, then the argmax after it (the correction, or the bonus
 *   token when the whole draft was accepted). Token for token the output of
 *   decoding one step at a time.
 * - Sampling: exact speculative sampling for a deterministic draft (the draft
 *   distribution is a point mass). Draft token x at position i is accepted
 *   with probability p_i(x), p_i being the final sampling distribution there
 *   (after logit_bias, penalties, temperature, top_k, top_p, min_p); on
 *   rejection the token is drawn from p_i with x removed and renormalized;
 *   when the whole draft is accepted the bonus token is drawn from the next
 *   row. Each output token is then distributed exactly as p_i (P(x) = p(x);
 *   P(y ≠ x) = (1 − p(x)) · p(y) / (1 − p(x))), so the output distribution is
 *   that of decoding one step at a time. With a seeded rng the result is
 *   reproducible.
 */

export interface Verdict {
  /** Draft tokens kept (a prefix of the draft). */
  accepted: number;
  /** The tokens this pass produced: the accepted draft prefix, then one more (correction or bonus). */
  tokens: number[];
}

/** Index of the largest value (the first one on ties, as an argmax sampler does). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/**
 * Greedy acceptance. `choice(i)` is the greedy token at position i (the argmax
 * of row i after the request's logit processing); it is asked for positions in
 * order, each only once the draft before it was accepted.
 */
export function acceptGreedy(draft: readonly number[], choice: (position: number) => number): Verdict {
  const tokens: number[] = [];
  for (let i = 0; i < draft.length; i++) {
    const chosen = choice(i);
    tokens.push(chosen);
    if (chosen !== draft[i]) return { accepted: i, tokens };
  }
  tokens.push(choice(draft.length));
  return { accepted: draft.length, tokens };
}

/**
 * Exact speculative sampling of a deterministic draft. `distribution(i)` is
 * the final sampling distribution at position i (probabilities summing to 1),
 * asked for in order, each only once draft[0..i-1] was accepted — so a caller
 * applying penalties counts the accepted draft tokens before building it.
 */
export function acceptSampled(draft: readonly number[], distribution: (position: number) => ArrayLike<number>, random: () => number): Verdict {
  const tokens: number[] = [];
  for (let i = 0; i < draft.length; i++) {
    const p = distribution(i);
    const x = draft[i];
    const px = x >= 0 && x < p.length ? p[x] : 0;
    if (px > 0 && random() < px) {
      tokens.push(x);
      continue;
    }
    tokens.push(sampleFrom(p, random, x));
    return { accepted: i, tokens };
  }
  tokens.push(sampleFrom(distribution(draft.length), random));
  return { accepted: draft.length, tokens };
}

/**
 * Draws an index from probabilities `p`; with `without`, from p with that
 * index removed and the rest renormalized (the residual distribution of a
 * rejected point-mass draft).
 */
export function sampleFrom(p: ArrayLike<number>, random: () => number, without = -1): number {
  let total = 0;
  for (let i = 0; i < p.length; i++) if (i !== without) total += p[i];
  if (!(total > 0)) {
    // Everything else has probability 0 (p is a point mass on `without`, which the draw rejected only by rounding).
    return without >= 0 ? without : argmax(p);
  }
  let u = random() * total;
  let last = -1;
  for (let i = 0; i < p.length; i++) {
    if (i === without || p[i] <= 0) continue;
    last = i;
    u -= p[i];
    if (u < 0) return i;
  }
  return last;
}

/** A small seedable generator (mulberry32): uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
