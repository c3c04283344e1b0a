import { describe, expect, it } from "vitest";
import { DraftProposer, ENGINE_PROPOSER_OPTIONS, type DraftSources, type ProposerOptions } from "../../src/engine/speculative/proposer.js";
import { acceptGreedy, seededRandom } from "../../src/engine/speculative/acceptance.js";

/** Greedy decoding of `model` (the tokens the model chooses) with drafts from `proposer`: passes after the prefill, drafted, accepted. */
function simulate(model: readonly number[], sources: DraftSources, options?: ProposerOptions) {
  const proposer = new DraftProposer(sources, options);
  const output: number[] = [model[0]]; // from the prefill
  let passes = 0;
  let drafted = 0;
  let accepted = 0;
  while (output.length < model.length) {
    const draft = proposer.propose(output, model.length - output.length - 1);
    const verdict = acceptGreedy(draft, (i) => model[output.length + i]);
    proposer.record(draft.length, verdict.accepted);
    for (const t of verdict.tokens) output.push(t);
    passes++;
    drafted += draft.length;
    accepted += verdict.accepted;
  }
  return { output, passes, drafted, accepted };
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe("speculative proposer: sources", () => {
  it("drafts the prediction from its start while the output agrees with it", () => {
    const prediction = range(100, 20);
    const p = new DraftProposer({ prompt: [1, 2, 3], prediction }, { initialDraft: 4 });
    expect(p.propose([])).toEqual([100, 101, 102, 103]);
    expect(p.lastSource).toBe("prediction");
    p.record(4, 4);
    expect(p.propose([100, 101, 102, 103, 104]), "a longer draft after a fully accepted one").toEqual(range(105, 8));
  });

  it("resyncs with the prediction after an edit, at the match after where it last agreed", () => {
    // The same line (7 8 9) twice in the file; the edit is in the first copy.
    const prediction = [1, 7, 8, 9, 2, 3, 4, 7, 8, 9, 5, 6];
    const p = new DraftProposer({ prompt: [50, 51], prediction });
    p.propose([1, 7]);
    // The model wrote 40 instead of 8, then went on with the rest of the line.
    expect(p.propose([1, 7, 40, 9]), "no 2-gram (40 9) in the prediction: nothing").toEqual([]);
    const draft = p.propose([1, 7, 40, 9, 2, 3]);
    expect(draft.slice(0, 3), "resynced after (2 3)").toEqual([4, 7, 8]);
    p.record(draft.length, 0);
    const again = new DraftProposer({ prompt: [], prediction });
    again.propose([1, 7, 8, 9, 2, 3, 4, 7, 8]);
    expect(again.propose([1, 7, 8, 9, 2, 3, 4, 7, 8, 9, 99, 7, 8]), "(7 8) resolves to the second line, not the first").toEqual([9, 5, 6]);
  });

  it("copies what followed the longest matching n-gram in the prompt", () => {
    // (3 4) occurs twice; (2 3 4) only before 30.
    const prompt = [1, 2, 3, 4, 30, 31, 32, 9, 3, 4, 40, 41];
    const p = new DraftProposer({ prompt }, { initialDraft: 3 });
    expect(p.propose([2, 3, 4])).toEqual([30, 31, 32]);
    expect(p.lastSource).toBe("context");
    const q = new DraftProposer({ prompt }, { initialDraft: 3 });
    expect(q.propose([7, 3, 4]), "only the 2-gram matches: its first occurrence").toEqual([30, 31, 32]);
  });

  it("goes on from where the last accepted copy left off", () => {
    // (5 6) is followed by 7 in the first line and by 8 in the second.
    const prompt = [1, 5, 6, 7, 2, 3, 9, 9, 5, 6, 8, 4];
    const p = new DraftProposer({ prompt }, { initialDraft: 2 });
    expect(p.propose([9, 9])).toEqual([5, 6]);
    p.record(2, 2);
    expect(p.propose([9, 9, 5, 6]), "the second line, where the copy was").toEqual([8, 4, 9, 9]);
  });

  it("takes the structure the output repeats from its own earlier text, even after a single new token", () => {
    // Records `{ name : <value> ; }`: the values are new, the structure repeats.
    const [open, name, colon, semi, close] = [100, 101, 102, 103, 104];
    const output = [open, name, colon, 7, 8, semi, close, open, name, colon, 50];
    const p = new DraftProposer({ prompt: [1, 2, 3] });
    expect(p.propose(output.slice(0, 10)), "(name colon) occurred: the old value follows").toEqual([7, 8, semi, close]);
    p.record(4, 0);
    expect(p.propose(output), "the new value 50 occurred nowhere before: nothing").toEqual([]);
    expect(p.propose([...output, 51]), "51 neither").toEqual([]);
    const q = new DraftProposer({ prompt: [1, 2, 3] });
    expect(q.propose([...output, 8]), "(50 8) is new, but 8 alone was followed by `;` in the output: a short draft").toEqual([semi, close]);
  });

  it("finds repetition in its own output", () => {
    const p = new DraftProposer({ prompt: [0] }, { initialDraft: 4 });
    expect(p.propose([5, 6, 7, 8, 5, 6])).toEqual([7, 8, 5, 6]);
  });

  it("drafts a regenerate from the reply the prompt cache holds after the same prompt", () => {
    const previous = range(200, 30);
    const p = new DraftProposer({ prompt: [1, 2, 3], cachedReplies: [previous] });
    expect(p.propose([])).toEqual(range(200, 4));
    expect(p.lastSource).toBe("cache");
  });

  it("prefers the prediction to a cached reply", () => {
    const p = new DraftProposer({ prompt: [1], prediction: [7, 8, 9], cachedReplies: [[4, 5, 6]] });
    expect(p.propose([])).toEqual([7, 8, 9]);
    expect(p.propose([4]), "the output took the cached reply's way").toEqual([5, 6]);
    expect(p.lastSource).toBe("cache");
  });

  it("counts the prediction's tokens that appeared in the output, each once", () => {
    const prediction = [1, 2, 3, 4, 5, 6, 7, 8];
    const p = new DraftProposer({ prompt: [], prediction });
    // 4 replaced by 40; resynced on (5 6); 7 8 follow.
    for (const output of [[1, 2, 3], [1, 2, 3, 40], [1, 2, 3, 40, 5], [1, 2, 3, 40, 5, 6]]) p.propose(output);
    expect(p.predictionTokensMatched, "3 aligned, and the resync's 2-gram (5 6)").toBe(5);
    p.observe([1, 2, 3, 40, 5, 6, 7, 8]);
    expect(p.predictionTokensMatched).toBe(7);
    expect(p.propose([1, 2, 3, 40, 5, 6, 7, 8, 5, 6])).toEqual([7, 8]);
    expect(p.predictionTokensMatched, "a repeat matches positions already counted").toBe(7);
  });

  it("drafts what a grammar forces first, even over an agreeing prediction, at most maxDraft tokens", () => {
    const p = new DraftProposer({ prompt: [1, 2], prediction: range(100, 40) }, { maxDraft: 16 });
    expect(p.propose([], Infinity, range(500, 100))).toEqual(range(500, 16));
    expect(p.lastSource).toBe("grammar");
    expect(p.propose([], Infinity, []), "nothing forced: the prediction").toEqual(range(100, 4));
  });

  it("never drafts past the limit", () => {
    const p = new DraftProposer({ prompt: [], prediction: range(1, 50) }, { initialDraft: 8 });
    expect(p.propose([], 3)).toEqual([1, 2, 3]);
    expect(p.propose([], 0)).toEqual([]);
  });
});

describe("speculative proposer: adaptive length and pausing", () => {
  it("doubles the draft while it is accepted and shrinks it on a rejection", () => {
    const p = new DraftProposer({ prompt: [] }, { initialDraft: 4, maxDraft: 16 });
    p.record(4, 4);
    expect(p.draftLength).toBe(8);
    p.record(8, 8);
    p.record(16, 16);
    expect(p.draftLength, "capped").toBe(16);
    p.record(16, 3);
    expect(p.draftLength).toBe(8);
    p.record(8, 6);
    expect(p.draftLength, "never below what was just accepted, plus one").toBe(7);
  });

  it("pauses drafting after misses, longer each time, and resumes after an accepted token", () => {
    const prompt = [1, 2, 3, 1, 2, 4];
    const p = new DraftProposer({ prompt }, { missesBeforePause: 2 });
    const out = [1, 2];
    expect(p.propose(out).length).toBeGreaterThan(0);
    p.record(2, 0);
    expect(p.propose(out).length).toBeGreaterThan(0);
    p.record(2, 0);
    expect(p.propose(out), "paused for one step").toEqual([]);
    expect(p.propose(out).length).toBeGreaterThan(0);
    p.record(2, 0);
    p.propose(out);
    p.record(2, 0);
    expect([p.propose(out), p.propose(out)], "then for two").toEqual([[], []]);
    p.propose(out);
    p.record(2, 1);
    p.propose(out);
    p.record(2, 0);
    p.propose(out);
    p.record(2, 0);
    expect(p.propose(out)).toEqual([]);
    expect(p.propose(out).length, "an accepted token reset the pause to one step").toBeGreaterThan(0);
  });
});

describe("speculative proposer: a pause holds back the kinds of lookup that miss", () => {
  // 10 and 60 occur once in the prompt (rare: an anchor, like a number a quote starts with); 5 three times (common).
  const prompt = [10, 11, 12, 13, 14, 15, 16, 17, 18, 5, 40, 5, 41, 5, 42, 60, 61, 62, 63, 64, 65, 66, 67, 68];
  const quoted = [10, 11, 12, 13, 99];
  /** Two drafts after the common token 5, both rejected: the pause starts. */
  function missTwiceOnCommonToken(p: DraftProposer) {
    p.record(p.propose([...quoted, 5]).length, 0);
    p.record(p.propose([...quoted, 5, 98, 5]).length, 0);
  }

  it("a rare token's lookup, accepted earlier in this generation, drafts through a pause that common-token misses started", () => {
    const p = new DraftProposer({ prompt }, ENGINE_PROPOSER_OPTIONS);
    expect(p.propose([10]).slice(0, 3)).toEqual([11, 12, 13]);
    p.record(8, 3);
    missTwiceOnCommonToken(p);
    // As plain prompt lookup would: `"about 60` → `,000 vehicles per day on six lanes"`.
    expect(p.propose([...quoted, 5, 98, 5, 97, 60])).toEqual([61, 62, 63, 64, 65, 66, 67, 68]);
    expect(p.lastSource).toBe("context");
  });

  it("the same lookup stays paused when its kind has not had a draft accepted (open chat)", () => {
    const p = new DraftProposer({ prompt }, ENGINE_PROPOSER_OPTIONS);
    // The anchor's draft rejected, then a common token's: the pause starts.
    p.record(p.propose([10]).length, 0);
    p.record(p.propose([...quoted, 5]).length, 0);
    expect(p.propose([...quoted, 5, 98, 5, 97, 60])).toEqual([]);
  });
});

describe("speculative proposer: greedy simulations", () => {
  it("an exact prediction takes a handful of passes and the output is the model's", () => {
    const model = range(1000, 200);
    const r = simulate(model, { prompt: [1, 2], prediction: model });
    expect(r.output).toEqual(model);
    expect(r.passes).toBeLessThanOrEqual(Math.ceil(200 / 16) + 4);
  });

  it("an edit in the middle costs a few passes around the edit", () => {
    const original = range(1000, 300);
    const model = [...original.slice(0, 150), 5, 6, ...original.slice(152)];
    const r = simulate(model, { prompt: [1, 2, ...original], prediction: original });
    expect(r.output).toEqual(model);
    expect(r.passes / model.length).toBeLessThan(0.15);
  });

  it("text that copies nothing is not slowed: rejected drafts stay under a quarter of the output", () => {
    // A pseudo-random "open chat" over a small vocabulary: n-grams recur by chance.
    const random = seededRandom(7);
    const next = () => Math.floor(random() * 40);
    const prompt = Array.from({ length: 300 }, next);
    const model = Array.from({ length: 600 }, next);
    const r = simulate(model, { prompt });
    expect(r.output).toEqual(model);
    expect(r.passes).toBeLessThanOrEqual(model.length - 1);
    expect(r.drafted - r.accepted).toBeLessThanOrEqual(0.25 * model.length);
  });

  it("costs O(prompt + output): token reads grow linearly", () => {
    function reads(n: number) {
      let count = 0;
      const counted = (a: number[]) => new Proxy(a, { get: (t, k, r) => (typeof k === "string" && /^\d+$/.test(k) && count++, Reflect.get(t, k, r)) });
      let s = 3;
      const next = () => (s = (s * 1103515245 + 12345) % 2147483648) % 1000;
      const prompt = counted(Array.from({ length: n }, next));
      const model = Array.from({ length: n }, next);
      const proposer = new DraftProposer({ prompt, prediction: model.slice(0, n / 2) });
      const output = counted([]);
      for (const t of model) {
        const draft = proposer.propose(output);
        proposer.record(draft.length, draft[0] === t ? 1 : 0);
        output.push(t);
      }
      return count;
    }
    const small = reads(2000);
    const large = reads(8000);
    expect(large / small).toBeLessThan(4 * 1.3);
  });
});
