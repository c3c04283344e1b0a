/**
 * Speculative drafts inside the rows of continuous batching on web-llm's
 * pipeline (src/engine/webllm/batching/webllm-row-drafts.ts), against the
 * decoding stand-in (support/fake-webllm-batch.ts), whose logits depend on
 * what each sequence holds. A decoding row with speculation on feeds its
 * token plus a draft in the step's `batch_prefill`, beside the other rows'
 * tokens and prompt chunks, with logits at each draft position; web-llm's
 * sampler accepts or rejects each drafted token on the row's own logits and
 * random stream, and the rejected rest is popped from that row's sequence.
 * Each row must give exactly what it gives alone, without drafts, on a fresh
 * pipeline. A draft token left in a sequence, popped from another row's, a
 * logit position off by one, or acceptance against another row's logits
 * changes some row's tokens or sequence here.
 */
import { describe, expect, it } from "vitest";
import { WebLlmRows, type RowsPipeline, type WebLlmRowsOptions } from "../../src/engine/webllm/batching/webllm-rows.js";
import type { RowSpeculation } from "../../src/engine/webllm/batching/webllm-row-drafts.js";
import { WEIGHT_BOUND_COST, type StepCostModel } from "../../src/engine/batching/cost-model.js";
import { decodeIds, encodeText, type GenConfig } from "./support/fake-webllm-decoder.js";
import { FakeBatchingPipeline } from "./support/fake-webllm-batch.js";
import { WebLlmPromptCache, type WebLlmPipeline } from "../../src/engine/webllm/prompt-cache/webllm-binding.js";
import type { SpeculationUsage } from "../../src/engine/speculative/counters.js";

interface Outcome {
  tokens: number[];
  text: string;
  finish: string | null;
  logprobs: unknown[];
  /** What the row's KV sequence held when its generation ended. */
  held: number[];
}

/** `keep`: the row ends cleanly into the prompt cache, under `key` (default "k"). */
type Job = { prompt: string; config: GenConfig; speculative?: RowSpeculation; abortAfter?: number; keep?: boolean; key?: string };

/** The request alone on a fresh pipeline, without drafts, as web-llm runs it. */
async function alone(job: Job): Promise<Outcome> {
  const pipe = new FakeBatchingPipeline();
  await pipe.generateRequest(encodeText(job.prompt), job.config);
  return outcomeOf(pipe, pipe.held(0) as number[]);
}

function outcomeOf(pipe: FakeBatchingPipeline, held: number[]): Outcome {
  return { tokens: pipe.outputIds.slice(), text: pipe.outputMessage, finish: pipe.finishReason, logprobs: pipe.tokenLogprobArray.slice(), held: held.slice() };
}

/** A pipeline with rows (and, with `cache`, a managed prompt cache the rows hand their sequences to). */
function setup(options: Partial<WebLlmRowsOptions> = {}, withCache = false) {
  const pipe = new FakeBatchingPipeline();
  pipe.prefillChunkSize = 64;
  let cache: WebLlmPromptCache | null = null;
  const rows = new WebLlmRows(
    pipe as unknown as RowsPipeline,
    { maxRows: 6, cost: WEIGHT_BOUND_COST, prefillChunkTokens: 8, ...options },
    withCache ? (child, full, key) => (cache as WebLlmPromptCache).forkInto(child, full, key) : null,
    withCache ? (from, tokens, key) => (cache as WebLlmPromptCache).keep(from, tokens, key) : null,
    withCache ? (tokens, key) => (cache as WebLlmPromptCache).repliesAfter(tokens, key) : null,
  );
  if (withCache) cache = new WebLlmPromptCache(pipe as unknown as WebLlmPipeline, { budgetTokens: 4096, maxSequences: 6, pageSize: 1, reserve: { sequences: 6, tokens: 1024 } });
  else rows.ensureKvRoom({ maxRows: 6 });
  expect(rows.unsupported).toBeNull();
  return { pipe, rows, cache };
}

interface RowResult {
  outcome: Outcome;
  speculation: SpeculationUsage | null;
  seq: number;
  maxRows: number;
}

/** `jobs` at once as rows: each row's outcome (its sequence read as its generation ended), and its drafts' counts. */
async function together(pipe: FakeBatchingPipeline, rows: WebLlmRows, jobs: Job[]): Promise<RowResult[]> {
  return Promise.all(
    jobs.map(async (job, i) => {
      const controller = new AbortController();
      const key = job.key ?? (job.keep ? "k" : undefined);
      const row = await rows.open({ id: `r${i}`, owner: `o${i}`, ...(key !== undefined ? { key } : {}), ...(job.speculative ? { speculative: job.speculative } : {}) }, controller.signal);
      const view = row.view as unknown as FakeBatchingPipeline;
      if (job.abortAfter !== undefined) {
        // An abort after `abortAfter` decode steps of this row, as the host's signal would arrive.
        const decodeStep = view.decodeStep.bind(view);
        let steps = 0;
        view.decodeStep = async (config?: GenConfig) => {
          await decodeStep(config);
          if (++steps === job.abortAfter) controller.abort();
        };
      }
      await view.generateRequest(encodeText(job.prompt), job.config);
      const outcome = outcomeOf(view, pipe.held(row.sequence) as number[]);
      const report = row.leave({ keep: job.keep === true });
      return { outcome, speculation: row.speculation, seq: row.sequence, maxRows: report.max_rows };
    }),
  );
}

/** `text` with its characters from `at` on replaced: a prediction the reply leaves there. */
const divergeAt = (text: string, at: number) => text.slice(0, at) + "q".repeat(Math.max(0, text.length - at));

const PROMPTS = ["thecatsatonthematthecat", "abcabcabcxyzabc", "hellohellohello", "sphinxofblackquartz"];

describe("speculative drafts in rows: each row is what it is alone", () => {
  it("greedy rows with drafts beside rows without and a prompt being prefilled: token for token as alone, the drafts verified in the steps' mixed forwards", async () => {
    const config = { max_tokens: 20 };
    const expected = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config })));
    const jobs: Job[] = [
      // the prediction is the reply: drafted from it and accepted
      { prompt: PROMPTS[0], config, speculative: { enabled: true, prediction: expected[0].text } },
      // the prediction leaves the reply after 6 tokens: rejected there, then drafted from again where it realigns
      { prompt: PROMPTS[1], config, speculative: { enabled: true, prediction: divergeAt(expected[1].text, 6) } },
      // speculation on, no prediction: drafts from the prompt and the output
      { prompt: PROMPTS[2], config, speculative: { enabled: true } },
      // no speculation: one token per step
      { prompt: PROMPTS[3], config },
    ];
    const { pipe, rows } = setup();
    const results = await together(pipe, rows, jobs);
    for (const [i, result] of results.entries()) {
      expect(result.outcome, `row ${i}`).toEqual(expected[i]);
      expect(result.maxRows, `row ${i} shared passes`).toBeGreaterThanOrEqual(3);
    }
    const [predicted, diverging, lookup, plain] = results.map((r) => r.speculation);
    expect(plain).toBeNull();
    // every token of the reply was the prediction's; most came from accepted drafts
    expect(predicted).toMatchObject({ acceptedPredictionTokens: 20, rejectedPredictionTokens: 0 });
    expect(predicted!.acceptedDraftTokens).toBeGreaterThanOrEqual(15);
    expect(predicted!.decodePasses).toBeLessThanOrEqual(5);
    // the diverging prediction's drafts were rejected somewhere: drafted more than accepted
    expect(diverging!.draftTokens).toBeGreaterThan(diverging!.acceptedDraftTokens);
    expect(diverging!.rejectedPredictionTokens).toBeGreaterThan(0);
    expect(lookup!.acceptedDraftTokens).toBeGreaterThan(0);
    // a verify row (several tokens) rode in the same batch_prefill as a row feeding one token
    const verifyBeside = pipe.forwards.mixed.filter((rowsOf) => rowsOf.some(([, n]) => n > 1) && rowsOf.some(([, n]) => n === 1));
    expect(verifyBeside.length).toBeGreaterThan(0);
    // the scheduler counts tokens generated (the 4 × 20, the first of each from its prompt), fewer passes than that
    const counts = rows.counters();
    expect(counts.generated_tokens).toBe(80);
    expect(counts.forward_passes).toBeLessThan(20 + 6);
    expect(pipe.scopeStack).toEqual([]);
  });

  it("the rows' counters count their forwards by kind, and a verify beside other rows' tokens apart from one alone", async () => {
    const config = { max_tokens: 16 };
    const expected = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config })));
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config, ...(i < 2 ? { speculative: { enabled: true, prediction: expected[i].text } } : {}) }));
    const pipe = new FakeBatchingPipeline();
    pipe.prefillChunkSize = 64;
    // Each batch_prefill call as the library sees it: a verify gives one sequence several logit positions.
    const calls: Array<{ verify: boolean; rows: number }> = [];
    const getFunction = pipe.vm.getFunction;
    (pipe.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      const fn = getFunction(name) as unknown as (embedded: unknown, positions: { data: ArrayLike<number> }, kv: unknown) => unknown;
      if (name !== "batch_prefill") return fn;
      return (embedded: unknown, positions: { data: ArrayLike<number> }, kv: unknown) => {
        const out = fn(embedded, positions, kv);
        const sequences = (pipe.forwards.mixed.at(-1) as unknown[]).length;
        calls.push({ verify: positions.data.length > sequences, rows: sequences });
        return out;
      };
    };
    // (the rows fetch the library's functions as they are made)
    const watched = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 6, cost: WEIGHT_BOUND_COST, prefillChunkTokens: 8 });
    watched.ensureKvRoom({ maxRows: 6 });
    const results = await together(pipe, watched, jobs);
    for (const [i, result] of results.entries()) expect(result.outcome, `row ${i}`).toEqual(expected[i]);
    const kinds = watched.counters().forward_kinds!;
    expect(kinds.decode).toBe(pipe.forwards.single);
    expect(kinds.prefill).toBe(pipe.forwards.prefill.length);
    expect(kinds.batch_decode).toBe(pipe.forwards.batched.length);
    expect(kinds.batch_prefill).toBe(calls.length);
    expect(kinds.verify_beside_rows).toBe(calls.filter((c) => c.verify && c.rows > 1).length);
    expect(kinds.verify_alone).toBe(calls.filter((c) => c.verify && c.rows === 1).length);
    expect(kinds.verify_beside_rows).toBeGreaterThan(0);
    expect(kinds.decode + kinds.prefill + kinds.batch_decode + kinds.batch_prefill).toBe(watched.counters().forward_passes);
  });

  it("seeded sampling: a row with drafts draws from its own stream and gives the seeded reply alone gives", async () => {
    const jobs: Job[] = [
      { prompt: PROMPTS[0], config: { max_tokens: 16, temperature: 0.7, seed: 7 } },
      { prompt: PROMPTS[0], config: { max_tokens: 16, temperature: 0.7, seed: 8 } },
      { prompt: PROMPTS[2], config: { max_tokens: 16, temperature: 1, seed: 3 } },
      { prompt: PROMPTS[1], config: { max_tokens: 16, temperature: 0.5, seed: 5 } },
    ];
    const expected = await Promise.all(jobs.map(alone));
    // the two seeds differ, or equality says nothing about separate streams
    expect(expected[0].tokens).not.toEqual(expected[1].tokens);
    jobs[0].speculative = { enabled: true, prediction: expected[0].text };
    jobs[1].speculative = { enabled: true, prediction: expected[0].text }; // another row's reply: rejected where they differ
    jobs[2].speculative = { enabled: true };
    const { pipe, rows } = setup();
    const results = await together(pipe, rows, jobs);
    for (const [i, result] of results.entries()) expect(result.outcome, `row ${i}`).toEqual(expected[i]);
    expect(results[0].speculation!.acceptedDraftTokens).toBeGreaterThan(8);
    expect(results[1].speculation!.draftTokens).toBeGreaterThan(results[1].speculation!.acceptedDraftTokens);
  });

  it("stop strings, max_tokens and logprobs inside a draft hold per row", async () => {
    const reply = await alone({ prompt: PROMPTS[0], config: { max_tokens: 20 } });
    const jobs: Job[] = [
      { prompt: PROMPTS[0], config: { max_tokens: 20, stop: [reply.text.slice(9, 11)] } },
      { prompt: PROMPTS[0], config: { max_tokens: 7 } },
      { prompt: PROMPTS[0], config: { max_tokens: 20, logprobs: true, top_logprobs: 3 } },
      { prompt: PROMPTS[0], config: { max_tokens: 20, grammar: true } },
    ];
    const expected = await Promise.all(jobs.map(alone));
    for (const job of jobs) job.speculative = { enabled: true, prediction: reply.text };
    const { pipe, rows } = setup();
    const results = await together(pipe, rows, jobs);
    for (const [i, result] of results.entries()) expect(result.outcome, `row ${i}`).toEqual(expected[i]);
    expect(expected[0].finish).toBe("stop");
    expect(expected[1].finish).toBe("length");
    expect(results[0].speculation!.acceptedDraftTokens).toBeGreaterThan(0);
  });
});

describe("speculative drafts in rows: KV sequences and the prompt cache", () => {
  it("after rejections each row's sequence holds exactly what it holds alone, and the prompt cache keeps exactly that", async () => {
    const config = { max_tokens: 18 };
    const expected = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config })));
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config, keep: true, speculative: { enabled: true, prediction: divergeAt(expected[i].text, 3 + 2 * i) } }));
    const { pipe, rows, cache } = setup({}, true);
    const results = await together(pipe, rows, jobs);
    for (const [i, result] of results.entries()) {
      expect(result.outcome.held, `row ${i} sequence`).toEqual(expected[i].held);
      expect(result.speculation!.draftTokens, `row ${i} had drafts rejected`).toBeGreaterThan(result.speculation!.acceptedDraftTokens);
    }
    // what the cache kept is each row's prompt and reply as fed, and the runtime's copy holds exactly that
    const kept = cache!.policy!.sequences();
    expect(kept.length).toBeGreaterThan(0);
    for (const s of kept) {
      expect(pipe.held(s.id)).toEqual(s.tokens);
      expect(expected.some((e) => e.held.join() === s.tokens.join())).toBe(true);
    }
  });

  it("an abort while a row serves its verified draft ends it at its next step; its sequence is exact for the cache and the others are unchanged", async () => {
    const config = { max_tokens: 24 };
    const expected = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config })));
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config, keep: true, speculative: { enabled: true, prediction: expected[i].text } }));
    jobs[0].abortAfter = 3; // inside its first verified draft (the prediction: drafted whole)
    const { pipe, rows, cache } = setup({}, true);
    const results = await together(pipe, rows, jobs);
    expect(results[0].outcome.finish).toBe("abort");
    expect(results[0].outcome.tokens).toEqual(expected[0].tokens.slice(0, 4));
    for (const i of [1, 2, 3]) expect(results[i].outcome, `row ${i}`).toEqual(expected[i]);
    // the aborted row's draft left its sequence before the cache kept it: prompt and the tokens fed, nothing more
    const fed = [...encodeText(PROMPTS[0]), ...expected[0].tokens.slice(0, 3)];
    expect(results[0].outcome.held, "its sequence as its generation ended").toEqual(fed);
    expect(results[0].speculation!.draftTokens).toBeGreaterThan(4);
    const kept = cache!.policy!.sequences().find((s) => s.tokens.join() === fed.join());
    expect(kept, "the aborted row's turn is kept as fed").toBeDefined();
    expect(pipe.held(kept!.id)).toEqual(fed);
  });
});

describe("speculative drafts in rows: a regenerate drafts from the reply the prompt cache holds", () => {
  // A prompt whose reply the prompt and the output so far hardly predict: what the cached reply adds shows.
  const PROMPT = "sphinxofblackquartz";
  const config = { max_tokens: 24 };
  const on: RowSpeculation = { enabled: true };
  /** The first turn as a row of `key`, kept in the cache; then `regenerate` (the same prompt) beside another row. */
  async function regenerateBeside(firstKey: string | null, regenerate: Job) {
    const { pipe, rows, cache } = setup({}, true);
    if (firstKey !== null) await together(pipe, rows, [{ prompt: PROMPT, config, speculative: on, keep: true, key: firstKey }]);
    const [again, beside] = await together(pipe, rows, [regenerate, { prompt: PROMPTS[1], config, speculative: on }]);
    return { pipe, cache: cache as WebLlmPromptCache, again, beside };
  }

  it("greedy: the regenerate row drafts the cached reply and accepts it, token for token as alone, in fewer passes than without it; the cache's record stays exact", async () => {
    const expected = await alone({ prompt: PROMPT, config });
    const besideExpected = await alone({ prompt: PROMPTS[1], config });
    const regenerate: Job = { prompt: PROMPT, config, speculative: on, keep: true, key: "k" };
    const { pipe, cache, again, beside } = await regenerateBeside("k", regenerate);
    expect(again.outcome).toEqual(expected);
    expect(beside.outcome).toEqual(besideExpected);
    expect(again.maxRows, "it shared the steps with the other row").toBe(2);
    // without the source: the same regenerate where the cache holds no reply after its prompt
    const cold = await regenerateBeside(null, regenerate);
    expect(cold.again.outcome).toEqual(expected);
    const [used, without] = [again.speculation!, cold.again.speculation!];
    expect(used.acceptedDraftTokens, "the cached reply was drafted and accepted").toBeGreaterThanOrEqual(18);
    expect(used.decodePasses / expected.tokens.length).toBeLessThanOrEqual(0.3);
    expect(used.decodePasses).toBeLessThan(without.decodePasses);
    expect(without.acceptedDraftTokens).toBeLessThan(used.acceptedDraftTokens);
    // the cache kept the regenerate's turn (the same tokens: it took the earlier turn's place); each record is what its sequence holds
    const kept = cache.policy!.sequences();
    expect(kept.map((s) => [s.key, s.tokens])).toContainEqual(["k", expected.held]);
    for (const s of kept) expect(pipe.held(s.id), `sequence ${s.id}`).toEqual(s.tokens);
  });

  it("sampled with a seed, a reply that ends at its stop token: drafted whole from the cached reply, the seeded reply alone gives", async () => {
    const seeded = { max_tokens: 24, temperature: 0.7, seed: 11 };
    const expected = await alone({ prompt: PROMPT, config: seeded });
    expect(expected.finish).toBe("stop");
    expect(expected.tokens.length).toBeLessThan(24);
    const { pipe, rows, cache } = setup({}, true);
    await together(pipe, rows, [{ prompt: PROMPT, config: seeded, speculative: on, keep: true }]);
    const [again] = await together(pipe, rows, [
      { prompt: PROMPT, config: seeded, speculative: on, keep: true },
      { prompt: PROMPTS[1], config: seeded, speculative: on },
    ]);
    expect(again.outcome).toEqual(expected);
    // every token after the first (sampled at the prefill) came from the cached reply, in one verify pass
    expect(again.speculation).toMatchObject({ decodePasses: 1, acceptedDraftTokens: expected.tokens.length - 1 });
    for (const s of cache!.policy!.sequences()) expect(pipe.held(s.id)).toEqual(s.tokens);
  });

  it("the prompt_cache_key boundary holds: another key's regenerate, or one without a key, drafts nothing from it (the counts of a cold cache)", async () => {
    const expected = await alone({ prompt: PROMPT, config });
    for (const key of ["other", undefined]) {
      const regenerate: Job = { prompt: PROMPT, config, speculative: on, ...(key !== undefined ? { key } : {}) };
      const stranger = await regenerateBeside("k", regenerate);
      const cold = await regenerateBeside(null, regenerate);
      expect(stranger.again.outcome, `key ${key}`).toEqual(expected);
      expect(stranger.again.speculation, `key ${key}: the counts of a cache without k's reply`).toEqual(cold.again.speculation);
      for (const s of stranger.cache.policy!.sequences()) expect(stranger.pipe.held(s.id)).toEqual(s.tokens);
    }
    // and k's own regenerate does draft from it
    const own = await regenerateBeside("k", { prompt: PROMPT, config, speculative: on, key: "k" });
    const cold = await regenerateBeside(null, { prompt: PROMPT, config, speculative: on, key: "k" });
    expect(own.again.speculation!.decodePasses).toBeLessThan(cold.again.speculation!.decodePasses);
  });

  it("speculation off for the regenerate: one token per step, as alone", async () => {
    const { again } = await regenerateBeside("k", { prompt: PROMPT, config, key: "k" });
    expect(again.outcome).toEqual(await alone({ prompt: PROMPT, config }));
    expect(again.speculation).toBeNull();
  });
});

describe("speculative drafts in rows: sized by the step's measured cost", () => {
  it("where a verify costs many decode steps no row drafts (0 is a length), and the replies are the same", async () => {
    // compute-bound: a forward over t tokens costs t decode steps, batched or not
    const dear: StepCostModel = { single: (tokens) => tokens, batch: (_rows, tokens) => tokens };
    const config = { max_tokens: 16 };
    const expected = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config })));
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config, speculative: { enabled: true, prediction: expected[i].text } }));
    const { pipe, rows } = setup({ cost: dear });
    const results = await together(pipe, rows, jobs);
    for (const [i, result] of results.entries()) {
      expect(result.outcome, `row ${i}`).toEqual(expected[i]);
      expect(result.speculation!.draftTokens, `row ${i} drafted`).toBe(0);
    }
    // a weight-bound device (GPU-like) drafts the same predictions
    const cheap = setup();
    const drafted = await together(cheap.pipe, cheap.rows, jobs);
    for (const [i, result] of drafted.entries()) {
      expect(result.outcome, `row ${i}`).toEqual(expected[i]);
      expect(result.speculation!.draftTokens, `row ${i} drafted`).toBeGreaterThan(0);
    }
  });
});

describe("speculative drafts in rows: the stand-in's texts", () => {
  it("the replies above are not all one text (equality would then say little)", async () => {
    const texts = await Promise.all(PROMPTS.map((prompt) => alone({ prompt, config: { max_tokens: 20 } })));
    expect(new Set(texts.map((t) => t.text)).size).toBe(PROMPTS.length);
    expect(decodeIds(texts[0].tokens)).toBe(texts[0].text);
  });
});
