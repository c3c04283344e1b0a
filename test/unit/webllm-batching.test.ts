/**
 * Continuous batching on web-llm's pipeline (src/engine/webllm/batching/webllm-rows.ts)
 * against the decoding stand-in (support/fake-webllm-batch.ts): web-llm's
 * prefill and decode steps, sampler and stop rules over a simulated paged KV
 * cache whose logits depend on what each sequence holds. Several requests run
 * at once as rows and each must give exactly what it gives alone on a fresh
 * pipeline — tokens, text, finish, logprobs, the KV sequence's contents —
 * while their decode steps share batched forwards. A binding that swapped
 * rows, fed a token to the wrong sequence, applied one row's mask, penalties
 * or random stream to another, or left a stale token in a cache, changes some
 * row's output here.
 */
import { describe, expect, it } from "vitest";
import { WebLlmRows, type RowsPipeline, type WebLlmRowsOptions } from "../../src/engine/webllm/batching/webllm-rows.js";
import { WEIGHT_BOUND_COST } from "../../src/engine/batching/cost-model.js";
import { MeasuredStepCost } from "../../src/engine/batching/measured-cost.js";
import { encodeText, type FakeTensor, type GenConfig } from "./support/fake-webllm-decoder.js";
import { FakeBatchingPipeline } from "./support/fake-webllm-batch.js";
import { WebLlmPromptCache, type WebLlmPipeline } from "../../src/engine/webllm/prompt-cache/webllm-binding.js";
import { FAKE_KV_BYTES_PER_TOKEN } from "./support/fake-webllm-pipeline.js";

interface Outcome {
  tokens: number[];
  text: string;
  finish: string | null;
  logprobs: unknown[];
  /** What the request's KV sequence held when it ended. */
  held: number[];
}

type Job = { prompt: string; config: GenConfig; abortAfter?: number };

/** The request alone on a fresh pipeline, as web-llm runs it today. */
async function alone(job: Job): Promise<Outcome> {
  return aloneOn(encodeText(job.prompt), job.config);
}

/** Prompt token ids alone on a fresh pipeline. */
async function aloneOn(tokens: number[], config: GenConfig): Promise<Outcome> {
  const pipe = new FakeBatchingPipeline();
  await pipe.generateRequest(tokens, config);
  return outcomeOf(pipe, pipe.held(0) as number[]);
}

function outcomeOf(pipe: FakeBatchingPipeline, held: number[]): Outcome {
  return { tokens: pipe.outputIds.slice(), text: pipe.outputMessage, finish: pipe.finishReason, logprobs: pipe.tokenLogprobArray.slice(), held: held.slice() };
}

/** The stand-in's prompt gets an image of `size` positions from `at` (the prompt's ids there are ignored). */
function withImage(pipe: FakeBatchingPipeline, [at, size]: [number, number]): void {
  (pipe as unknown as { image: [number, number] }).image = [at, size];
}

/** Tokens all the step forwards fed: single decodes, single prefills, batch_decode rows, batch_prefill rows' lengths. */
function fedTokens(pipe: FakeBatchingPipeline): number {
  const { single, prefill, batched, mixed } = pipe.forwards;
  return single + prefill.reduce((a, b) => a + b, 0) + batched.reduce((a, b) => a + b, 0) + mixed.flat().reduce((n, [, tokens]) => n + tokens, 0);
}

/** Forward passes the step forwards ran, of every kind. */
function forwardCount(pipe: FakeBatchingPipeline): number {
  const { single, prefill, batched, mixed } = pipe.forwards;
  return single + prefill.length + batched.length + mixed.length;
}

/** The GPU-like cost (a batch of any size costs about one step): the stand-in's forwards take no time to measure. */
const GPU_LIKE = WEIGHT_BOUND_COST;

function setup(maxRows = 4, cost: WebLlmRowsOptions["cost"] = GPU_LIKE) {
  const pipe = new FakeBatchingPipeline();
  const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows, cost });
  expect(rows.unsupported).toBeNull();
  rows.ensureKvRoom({ maxRows });
  return { pipe, rows };
}

/** `prompts` at once as rows of `rows`, each up to `maxTokens`: each row's output ids. */
function outputsTogether(rows: WebLlmRows, prompts: string[], maxTokens: number): Promise<number[][]> {
  return Promise.all(
    prompts.map(async (prompt, i) => {
      const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, new AbortController().signal);
      const view = row.view as unknown as FakeBatchingPipeline;
      await view.generateRequest(encodeText(prompt), { max_tokens: maxTokens });
      row.leave();
      return view.outputIds.slice();
    }),
  );
}

/** `prompts[0]` as a row, and once it has `after` tokens the other prompts beside it: each row's output ids. */
/** Three prompts as rows at once, each to 12 tokens; each row's error message, or null. */
function errorsOfThreeRows(rows: WebLlmRows): Promise<(string | null)[]> {
  return Promise.all(
    ["thecatsat", "abcxyz", "hello"].map(async (prompt, i) => {
      const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, new AbortController().signal);
      const view = row.view as unknown as FakeBatchingPipeline;
      try {
        await view.generateRequest(encodeText(prompt), { max_tokens: 12 });
        return null;
      } catch (error) {
        return (error as Error).message;
      } finally {
        row.leave();
      }
    }),
  );
}

async function outputsStaggered(rows: WebLlmRows, prompts: string[], maxTokens: number, after: number): Promise<number[][]> {
  const run = async (prompt: string, i: number, onToken?: (n: number) => void) => {
    const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, new AbortController().signal);
    const view = row.view as unknown as FakeBatchingPipeline;
    const decodeStep = view.decodeStep.bind(view);
    view.decodeStep = async (config?: GenConfig) => {
      await decodeStep(config);
      onToken?.(view.outputIds.length);
    };
    await view.generateRequest(encodeText(prompt), { max_tokens: maxTokens });
    row.leave();
    return view.outputIds.slice();
  };
  let others: Promise<number[][]> | null = null;
  const first = await run(prompts[0], 0, (n) => {
    if (n === after) others = Promise.all(prompts.slice(1).map((prompt, i) => run(prompt, i + 1)));
  });
  return [first, ...(await (others as unknown as Promise<number[][]>))];
}

/** `jobs` at once as rows of one pipeline; each outcome, and the row reports. */
async function together(jobs: Job[], maxRows = 4) {
  const { pipe, rows } = setup(maxRows);
  const results = await Promise.all(
    jobs.map(async (job, i) => {
      const controller = new AbortController();
      const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, controller.signal);
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
      try {
        await view.generateRequest(encodeText(job.prompt), job.config);
        return { outcome: outcomeOf(view, pipe.held(row.sequence) as number[]), report: row.leave() };
      } catch (error) {
        row.leave();
        throw error;
      }
    }),
  );
  return { pipe, rows, results };
}

describe("continuous batching on web-llm's pipeline: each row is what it is alone", () => {
  it("four greedy requests at once: the same tokens as alone, in shared batch_decode passes", async () => {
    const jobs: Job[] = ["thecatsat", "abcxyz", "hello", "zzqq"].map((prompt) => ({ prompt, config: { max_tokens: 16 } }));
    const { pipe, rows, results } = await together(jobs);
    for (const [i, job] of jobs.entries()) {
      const expected = await alone(job);
      expect(results[i].outcome.tokens, `row ${i} tokens`).toEqual(expected.tokens);
      expect(results[i].outcome.text).toBe(expected.text);
      expect(results[i].outcome.finish).toBe(expected.finish);
      expect(results[i].report.max_rows, `row ${i} shared passes`).toBe(4);
    }
    // Every token fed went through the rows' step forwards, web-llm's own prefill fed none: the four
    // prompts (24 tokens) and 15 decode tokens each (the first token comes from the prompt's logits).
    expect(pipe.log.filter((line) => line.startsWith("forward "))).toEqual([]);
    expect(fedTokens(pipe)).toBe(24 + 4 * 15);
    const counters = rows.counters();
    expect(counters.generated_tokens).toBe(64);
    expect(counters.max_rows).toBe(4);
    // one pass per step, prompts included: far below 4 × 16
    expect(counters.forward_passes).toBe(forwardCount(pipe));
    expect(counters.forward_passes).toBeLessThanOrEqual(15 + 4);
    // every TVM scope the rows' prefills and decodes opened was closed
    expect(pipe.scopeStack).toEqual([]);
  });
});

describe("continuous batching on web-llm's pipeline: per-row rules", () => {
  it("seeded sampling: each row draws from its own stream, so a seed gives the same reply beside others", async () => {
    const jobs: Job[] = [
      { prompt: "thecatsat", config: { max_tokens: 14, temperature: 1, seed: 7 } },
      { prompt: "thecatsat", config: { max_tokens: 14, temperature: 1, seed: 8 } },
      { prompt: "abcxyz", config: { max_tokens: 14, temperature: 0.7, seed: 7 } },
    ];
    const { results } = await together(jobs);
    for (const [i, job] of jobs.entries()) expect(results[i].outcome.tokens, `row ${i}`).toEqual((await alone(job)).tokens);
    // the two seeds differ, or the test proves nothing about separate streams
    expect(results[0].outcome.tokens).not.toEqual(results[1].outcome.tokens);
  });

  it("grammar, penalties, logit_bias, logprobs, stop and max_tokens hold per row", async () => {
    const jobs: Job[] = [
      { prompt: "thecatsatonthemat", config: { max_tokens: 20, grammar: true } },
      { prompt: "thecatsatonthemat", config: { max_tokens: 20, presence_penalty: 1.5, frequency_penalty: 0.5 } },
      { prompt: "thecatsatonthemat", config: { max_tokens: 20, repetition_penalty: 1.3, logit_bias: { "4": 3 } } },
      { prompt: "thecatsatonthemat", config: { max_tokens: 20, logprobs: true, top_logprobs: 3 } },
      { prompt: "thecatsatonthemat", config: { max_tokens: 5 } },
    ];
    const withStop = await alone({ prompt: "thecatsatonthemat", config: { max_tokens: 20 } });
    jobs.push({ prompt: "thecatsatonthemat", config: { max_tokens: 20, stop: [withStop.text.slice(6, 8)] } });
    const { results } = await together(jobs, 6);
    const outcomes = await Promise.all(jobs.map(alone));
    for (const [i] of jobs.entries()) {
      expect(results[i].outcome, `row ${i}`).toEqual(outcomes[i]);
    }
    // the rules changed the replies, or their equality says nothing about per-row application
    const texts = new Set(outcomes.map((o) => o.text));
    expect(texts.size).toBeGreaterThanOrEqual(5);
    expect(outcomes[4].finish).toBe("length");
    expect(outcomes[5].finish).toBe("stop");
    expect(outcomes[3].logprobs).toHaveLength(20);
  });

  it("each row's KV sequence holds exactly its prompt and the tokens fed, and goes when the row leaves", async () => {
    const jobs: Job[] = ["thecatsat", "abcxyz", "hello"].map((prompt, i) => ({ prompt, config: { max_tokens: 6 + 3 * i } }));
    const { pipe, results } = await together(jobs);
    for (const [i, job] of jobs.entries()) expect(results[i].outcome.held, `row ${i}`).toEqual((await alone(job)).held);
    const seqs = [...(pipe.kvCache as unknown as { seqs: Map<number, number[]> }).seqs.keys()];
    expect(seqs, "only web-llm's own sequence 0 is left").toEqual([0]);
  });

  it("an abort ends that row within a step; the others are unchanged and keep sharing passes", async () => {
    const jobs: Job[] = [
      { prompt: "thecatsat", config: { max_tokens: 24 } },
      { prompt: "abcxyz", config: { max_tokens: 24 }, abortAfter: 3 },
      { prompt: "hello", config: { max_tokens: 24 } },
      { prompt: "zzqq", config: { max_tokens: 24 } },
    ];
    const { pipe, results } = await together(jobs);
    expect(results[1].outcome.finish).toBe("abort");
    expect(results[1].outcome.tokens.length).toBeLessThanOrEqual(1 + 3 + 1);
    for (const i of [0, 2, 3]) expect(results[i].outcome.tokens, `row ${i}`).toEqual((await alone(jobs[i])).tokens);
    // after the abort, three rows per forward
    // the aborted row took part in a few steps only; the three others went on sharing steps
    expect(pipe.forwards.batched.filter((rows) => rows === 4).length).toBeLessThanOrEqual(3 + 1);
    expect(pipe.forwards.batched.filter((rows) => rows === 3).length).toBeGreaterThanOrEqual(15);
  });

  it("a row that joins while others decode gets its first token before they end", async () => {
    const { rows } = setup();
    const order: string[] = [];
    const run = async (id: string, job: Job) => {
      const row = await rows.open({ id, owner: id }, new AbortController().signal);
      const view = row.view as unknown as FakeBatchingPipeline;
      const decodeStep = view.decodeStep.bind(view);
      view.decodeStep = async (config?: GenConfig) => {
        await decodeStep(config);
        order.push(`${id}:${view.outputIds.length}`);
        // the consumer reads the chunk on a later task, as a stream's reader does
        await new Promise((r) => setTimeout(r, 0));
      };
      await view.generateRequest(encodeText(job.prompt), job.config);
      order.push(`${id}:end`);
      row.leave();
    };
    const first = run("early", { prompt: "thecatsat", config: { max_tokens: 30 } });
    // let the early row stream a few tokens
    while (!order.includes("early:5")) await new Promise((r) => setTimeout(r, 0));
    const late = run("late", { prompt: "abcxyz", config: { max_tokens: 4 } });
    await Promise.all([first, late]);
    expect(order.indexOf("late:end")).toBeLessThan(order.indexOf("early:end"));
    expect(order.indexOf("late:2")).toBeLessThan(order.indexOf("early:20"));
  });

  it("a request that needs the pipeline alone waits for the rows in flight, and rows opened meanwhile wait for it", async () => {
    const { rows } = setup();
    const events: string[] = [];
    const signal = new AbortController().signal;
    const rowA = await rows.open({ id: "a", owner: "a" }, signal);
    const runA = (rowA.view as unknown as FakeBatchingPipeline).generateRequest(encodeText("thecatsat"), { max_tokens: 8 }).then(() => {
      events.push("a done");
      rowA.leave();
    });
    const soloRun = rows.alone(async () => {
      events.push("alone runs");
      await new Promise((r) => setTimeout(r, 5));
      events.push("alone done");
    });
    const rowB = rows.open({ id: "b", owner: "b" }, signal).then((row) => {
      events.push("b opened");
      row.leave();
    });
    await Promise.all([runA, soloRun, rowB]);
    expect(events).toEqual(["a done", "alone runs", "alone done", "b opened"]);
  });

  it("a request waiting to run alone that is aborted stops waiting at once, and rows open again without waiting for the rows in flight", async () => {
    const { rows } = setup();
    const rowA = await rows.open({ id: "a", owner: "a" }, new AbortController().signal);
    const controller = new AbortController();
    let ran = false;
    const solo = rows.alone(async () => void (ran = true), controller.signal).then(
      () => "resolved",
      (error: Error) => error.name,
    );
    const later = (ms: number) => new Promise((resolve) => setTimeout(() => resolve("still waiting"), ms));
    controller.abort();
    // row a is still in flight: the aborted request does not wait for it to end
    expect(await Promise.race([solo, later(1000)])).toBe("AbortError");
    const rowB = rows.open({ id: "b", owner: "b" }, new AbortController().signal);
    expect(await Promise.race([rowB.then(() => "opened"), later(1000)])).toBe("opened");
    expect(ran).toBe(false);
    (await rowB).leave();
    rowA.leave();
  });
});

describe("continuous batching on web-llm's pipeline: the forward each step runs", () => {
  it("a step with one row keeps the single-sequence decode (batch_decode costs more for one row)", async () => {
    const { pipe } = await together([{ prompt: "thecatsat", config: { max_tokens: 8 } }]);
    expect(pipe.forwards.batched).toEqual([]);
    expect(pipe.forwards.mixed).toEqual([]);
    // its prompt in the library's chunks (8, then the last token, a decode of it), then 7 decode steps
    expect(pipe.forwards.prefill).toEqual([8]);
    expect(pipe.forwards.single).toBe(1 + 7);
  });

  it("measured costs decide: where a batch of 2 costs more than two decodes, 2 rows decode one by one", async () => {
    // SwiftShader's probe: decode 13.5 s, batch_decode of 2 rows 28.8 s, of 4 rows 43.7 s
    const measured = new MeasuredStepCost();
    // the first forward of each kind compiles its kernels: not recorded
    measured.record("single", 1, 60000);
    measured.record("batch", 2, 200000);
    measured.record("single", 1, 13500);
    measured.record("batch", 2, 28800);
    measured.record("batch", 4, 43700);
    // the stand-in's forwards take no time: this run's timings must not replace the recorded ones
    const { pipe, rows } = setup(4, { single: (t) => measured.single(t), batch: (r, t) => measured.batch(r, t) });
    const results = await outputsTogether(rows, ["thecatsat", "abcxyz"], 6);
    expect(pipe.forwards.batched).toEqual([]);
    expect(pipe.forwards.single).toBe(10);
    expect(results[0]).toEqual((await alone({ prompt: "thecatsat", config: { max_tokens: 6 } })).tokens);
  });
});

describe("continuous batching on web-llm's pipeline: forward \"batched\" and the measured times", () => {
  it("forward: \"batched\" shares batch_decode between two rows whatever was measured, and the counters carry the device's times", async () => {
    const pipe = new FakeBatchingPipeline();
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 4, forward: "batched" });
    rows.ensureKvRoom({ maxRows: 4 });
    const results = await outputsTogether(rows, ["thecatsat", "abcxyz"], 6);
    expect(Math.max(...pipe.forwards.batched)).toBe(2);
    expect(results[1]).toEqual((await alone({ prompt: "abcxyz", config: { max_tokens: 6 } })).tokens);
    // The rows' KV room, measured from the device memory the runtime counted when the cache was re-created.
    expect(rows.counters().kv_bytes_per_row).toBe((WebLlmRows.kvReservation(pipe, { maxRows: 4 }).tokens / 4) * FAKE_KV_BYTES_PER_TOKEN);
    const times = rows.counters().step_ms;
    // The first forward of each kind is a warm-up (not recorded); the batched ones after it are, by row count.
    expect(times?.batch_decode).toHaveProperty("2");
    expect(times?.batch_decode["2"]).toBeGreaterThanOrEqual(0);
  });
});

describe("continuous batching on web-llm's pipeline: the measured cost is the device's work", () => {
  it("a forward is timed until the device has done it, so where a 4-row batch_decode costs less than four decodes, four rows batch", async () => {
    // As on WebGPU, a forward only enqueues its work: a decode costs 10, a batch of n rows 6 + 2n, paid when waited for.
    const pipe = new FakeBatchingPipeline({ decode: 10, batch: (n) => 6 + 2 * n });
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 4, clock: () => pipe.clock });
    rows.ensureKvRoom({ maxRows: 4 });
    const prompts = ["thecatsat", "abcxyz", "hello", "qrstuv"];
    // The first request decodes alone for a few steps (so single decodes are measured), then the others arrive.
    const outputs = await outputsStaggered(rows, prompts, 16, 2);
    const times = rows.counters().step_ms;
    expect(times?.decode).toBe(10);
    expect(times?.batch_decode["4"]).toBe(14);
    // After one probe of each kind, the steps where all four decode run as one batch_decode.
    expect(pipe.forwards.batched.filter((n) => n === 4).length).toBeGreaterThanOrEqual(10);
    for (const [i, prompt] of prompts.entries()) expect(outputs[i], prompt).toEqual((await alone({ prompt, config: { max_tokens: 16 } })).tokens);
  });
});

describe("continuous batching on web-llm's pipeline: web-llm's decode clock (usage.decode_tokens_per_s)", () => {
  it("a row's decode steps are timed with the step's forward, not only web-llm's sampling after it", async () => {
    // A decode costs 10 ms on the device, a batch_decode of two rows 10 ms: each row's tokens come one per 10 ms.
    const pipe = new FakeBatchingPipeline({ decode: 10, batch: (n) => 6 + 2 * n });
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 2, clock: () => pipe.clock });
    rows.ensureKvRoom({ maxRows: 2 });
    const clocks = await Promise.all(
      ["thecatsat", "abcxyz"].map(async (prompt, i) => {
        const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, new AbortController().signal);
        const view = row.view as unknown as FakeBatchingPipeline;
        await view.generateRequest(encodeText(prompt), { max_tokens: 9 });
        row.leave();
        return { tokens: view.curRoundDecodingTotalTokens, seconds: view.curRoundDecodingTotalTime };
      }),
    );
    for (const [i, clock] of clocks.entries()) {
      // 8 decode steps after the prefill's token; before, web-llm's clock saw only sampling: 0 s, an infinite rate.
      expect(clock.tokens, `row ${i}`).toBe(8);
      expect(clock.seconds, `row ${i}`).toBeGreaterThanOrEqual((8 * 10) / 1e3);
      expect(clock.tokens / clock.seconds, `row ${i}`).toBeGreaterThan(8 / 0.2);
    }
  });
});

describe("continuous batching on web-llm's pipeline: more generations than rows", () => {
  it("a row beyond maxRows waits for a free sequence, then gives what it gives alone", async () => {
    const jobs: Job[] = ["thecatsat", "abcxyz", "hello"].map((prompt, i) => ({ prompt, config: { max_tokens: 5 + 4 * i } }));
    const { pipe, results } = await together(jobs, 2);
    for (const [i, job] of jobs.entries()) expect(results[i].outcome.tokens, `row ${i}`).toEqual((await alone(job)).tokens);
    expect(Math.max(...pipe.forwards.batched)).toBe(2);
    expect(results[2].report.passes).toBeGreaterThan(0);
  });
});

describe("continuous batching on web-llm's pipeline: rows start from the prompt cache", () => {
  /** A pipeline with rows and a managed prompt cache (hooked after the rows took their snapshot, as the engine does). */
  function setupWithCache() {
    const pipe = new FakeBatchingPipeline();
    const rows = new WebLlmRows(
      pipe as unknown as RowsPipeline,
      { maxRows: 4, cost: GPU_LIKE },
      (child, full, key) => cache.forkInto(child, full, key),
      (from, tokens, key) => cache.keep(from, tokens, key),
    );
    const cache = new WebLlmPromptCache(pipe as unknown as WebLlmPipeline, { budgetTokens: 4096, maxSequences: 4, pageSize: 1, reserve: { sequences: 4, tokens: 1024 } });
    return { pipe, rows, cache };
  }

  it("a row forks the longest cached prefix of its key, prefills only the rest, and gives what it gives alone", async () => {
    const { pipe, rows, cache } = setupWithCache();
    // an earlier request (alone) leaves "systemprompt" + its question in the cache
    cache.begin({});
    await pipe.generateRequest(encodeText("systempromptabc"), { max_tokens: 4 });
    cache.end("done");
    const jobs: Job[] = ["systempromptxyz", "systempromptqq", "other"].map((prompt) => ({ prompt, config: { max_tokens: 10 } }));
    const outcomes = await Promise.all(
      jobs.map(async (job, i) => {
        const row = await rows.open({ id: `r${i}`, owner: `o${i}` }, new AbortController().signal);
        const view = row.view as unknown as FakeBatchingPipeline;
        await view.generateRequest(encodeText(job.prompt), job.config);
        const outcome = { ...outcomeOf(view, pipe.held(row.sequence) as number[]), cached: row.cachedTokens };
        row.leave();
        return outcome;
      }),
    );
    for (const [i, job] of jobs.entries()) {
      const expected = await alone(job);
      expect(outcomes[i].tokens, `row ${i}`).toEqual(expected.tokens);
      expect(outcomes[i].held, `row ${i}'s sequence holds what it holds alone`).toEqual(expected.held);
    }
    expect(outcomes.map((o) => o.cached)).toEqual([12, 12, 0]);
    // the cache's own sequence is untouched: it still holds the earlier request
    for (const s of cache.policy!.sequences()) expect(pipe.held(s.id)).toEqual(s.tokens);
  });

  it("a row that ends cleanly leaves its prompt and reply in the cache: the next turn, as a row or alone, starts from them", async () => {
    const { pipe, rows, cache } = setupWithCache();
    const first = await rows.open({ id: "t1", owner: "chat", key: "chat" }, new AbortController().signal);
    const view = first.view as unknown as FakeBatchingPipeline;
    await view.generateRequest(encodeText("systemprompthello"), { max_tokens: 6 });
    const fed = [...encodeText("systemprompthello"), ...view.outputIds.slice(0, -1)];
    first.leave({ keep: true });
    const kept = cache.policy!.sequences();
    expect(kept.map((s) => [s.key, s.tokens])).toEqual([["chat", fed]]);
    // the runtime's copy holds exactly what the record says
    expect(pipe.held(kept[0].id)).toEqual(fed);
    // the next turn (prompt + reply + more) as a row forks all of it
    const nextPrompt = [...fed, ...encodeText("more")];
    const second = await rows.open({ id: "t2", owner: "chat", key: "chat" }, new AbortController().signal);
    await (second.view as unknown as FakeBatchingPipeline).generateRequest(nextPrompt, { max_tokens: 4 });
    // (a reader forks up to one token short of the cached sequence's end, which it leaves able to grow)
    expect(second.cachedTokens).toBe(fed.length - 1);
    expect((second.view as unknown as FakeBatchingPipeline).outputIds).toEqual((await aloneOn(nextPrompt, { max_tokens: 4 })).tokens);
    // an abort-free leave without keep (an error) leaves the cache as it was
    second.leave();
    expect(cache.policy!.sequences().map((s) => s.tokens.length)).toEqual([fed.length]);
    // another key never sees it
    const stranger = await rows.open({ id: "x", owner: "x", key: "other" }, new AbortController().signal);
    await (stranger.view as unknown as FakeBatchingPipeline).generateRequest(nextPrompt, { max_tokens: 2 });
    expect(stranger.cachedTokens).toBe(0);
    stranger.leave({ keep: true });
    for (const s of cache.policy!.sequences()) expect(pipe.held(s.id)).toEqual(s.tokens);
  });

  it("a reply that ended at its stop token is kept too (every output token was fed): the next turn forks all of it", async () => {
    const { pipe, rows, cache } = setupWithCache();
    const config = { max_tokens: 24, temperature: 0.7, seed: 11 };
    const first = await rows.open({ id: "t1", owner: "chat", key: "chat" }, new AbortController().signal);
    const view = first.view as unknown as FakeBatchingPipeline;
    await view.generateRequest(encodeText("sphinxofblackquartz"), config);
    // web-llm leaves the stop token out of outputIds; the last output token was fed to sample it
    expect(view.finishReason).toBe("stop");
    expect(view.outputIds.length).toBeLessThan(24);
    const fed = [...encodeText("sphinxofblackquartz"), ...view.outputIds];
    expect(pipe.held(first.sequence)).toEqual(fed);
    first.leave({ keep: true });
    const kept = cache.policy!.sequences();
    expect(kept.map((s) => [s.key, s.tokens])).toEqual([["chat", fed]]);
    expect(pipe.held(kept[0].id)).toEqual(fed);
    const nextPrompt = [...fed, ...encodeText("more")];
    const second = await rows.open({ id: "t2", owner: "chat", key: "chat" }, new AbortController().signal);
    await (second.view as unknown as FakeBatchingPipeline).generateRequest(nextPrompt, { max_tokens: 4 });
    expect(second.cachedTokens).toBe(fed.length - 1);
    expect((second.view as unknown as FakeBatchingPipeline).outputIds).toEqual((await aloneOn(nextPrompt, { max_tokens: 4 })).tokens);
    second.leave({ keep: true });
    for (const s of cache.policy!.sequences()) expect(pipe.held(s.id)).toEqual(s.tokens);
  });

  it("the prompt_cache_key boundary holds: a row never starts from another key's sequence", async () => {
    const { pipe, rows, cache } = setupWithCache();
    cache.begin({ key: "tenant-a" });
    await pipe.generateRequest(encodeText("systempromptabc"), { max_tokens: 4 });
    cache.end("done");
    const other = await rows.open({ id: "b", owner: "b", key: "tenant-b" }, new AbortController().signal);
    await (other.view as unknown as FakeBatchingPipeline).generateRequest(encodeText("systempromptxyz"), { max_tokens: 3 });
    expect(other.cachedTokens).toBe(0);
    other.leave();
    const same = await rows.open({ id: "a", owner: "a", key: "tenant-a" }, new AbortController().signal);
    await (same.view as unknown as FakeBatchingPipeline).generateRequest(encodeText("systempromptxyz"), { max_tokens: 3 });
    expect(same.cachedTokens).toBe(12);
    same.leave();
  });
});

describe("continuous batching on web-llm's pipeline: rows start from each other", () => {
  it("the same prompt three times at once (n choices): one prefill, the others fork it and feed one token", async () => {
    const { pipe, rows } = setup();
    const job: Job = { prompt: "systempromptquestion", config: { max_tokens: 8, temperature: 1, seed: 3 } };
    const seeds = [3, 4, 5];
    const outcomes = await Promise.all(
      seeds.map(async (seed, i) => {
        const row = await rows.open({ id: `c${i}`, owner: "one request" }, new AbortController().signal);
        const view = row.view as unknown as FakeBatchingPipeline;
        await view.generateRequest(encodeText(job.prompt), { ...job.config, seed });
        const outcome = { ...outcomeOf(view, pipe.held(row.sequence) as number[]), cached: row.cachedTokens };
        row.leave();
        return outcome;
      }),
    );
    for (const [i, seed] of seeds.entries()) {
      const expected = await alone({ ...job, config: { ...job.config, seed } });
      expect(outcomes[i].tokens, `choice ${i}`).toEqual(expected.tokens);
      expect(outcomes[i].held, `choice ${i}'s sequence`).toEqual(expected.held);
    }
    expect(outcomes.map((o) => o.cached)).toEqual([0, 19, 19]);
    // prompt tokens fed: 20 for the first, 1 each for the others
    expect(rows.counters().prefill_tokens).toBe(20 + 1 + 1);
  });

  it("a row never forks another key's row", async () => {
    const { rows } = setup();
    const run = async (id: string, key: string) => {
      const row = await rows.open({ id, owner: id, key }, new AbortController().signal);
      await (row.view as unknown as FakeBatchingPipeline).generateRequest(encodeText("systempromptquestion"), { max_tokens: 4 });
      const cached = row.cachedTokens;
      row.leave();
      return cached;
    };
    expect(await Promise.all([run("a", "k1"), run("b", "k2"), run("c", "k1")])).toEqual([0, 0, 19]);
  });
});

describe("continuous batching on web-llm's pipeline: a long prompt is prefilled in chunks, in the decode steps' forwards", () => {
  it("a newcomer's prompt rides in the forwards of the rows already decoding, a chunk per step, and they get a token every step; every row is what it is alone", async () => {
    const pipe = new FakeBatchingPipeline();
    pipe.prefillChunkSize = 64; // the library's chunk: what one step's forward may hold
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 4, cost: GPU_LIKE, prefillChunkTokens: 8 });
    rows.ensureKvRoom({ maxRows: 4 });
    const long = "thequickbrownfoxjumpsoverthelazydogagainandagain"; // 48 tokens: 6 chunks of 8
    const started: Promise<unknown>[] = [];
    const seqs: Record<string, number> = {};
    const run = async (id: string, job: Job, onToken?: (n: number) => void) => {
      const row = await rows.open({ id, owner: id }, new AbortController().signal);
      seqs[id] = row.sequence;
      const view = row.view as unknown as FakeBatchingPipeline;
      const decodeStep = view.decodeStep.bind(view);
      view.decodeStep = async (config?: GenConfig) => {
        await decodeStep(config);
        onToken?.(view.outputIds.length);
        await new Promise((r) => setTimeout(r, 0));
      };
      await view.generateRequest(encodeText(job.prompt), job.config);
      const tokens = view.outputIds.slice();
      const counted = view.curRoundPrefillTotalTokens + row.cachedTokens;
      row.leave();
      return { tokens, counted };
    };
    const jobs: Record<string, Job> = { a: { prompt: "abc", config: { max_tokens: 40 } }, b: { prompt: "hello", config: { max_tokens: 40 } }, long: { prompt: long, config: { max_tokens: 4 } } };
    const a = run("a", jobs.a, (n) => {
      if (n === 5 && started.length === 0) started.push(run("long", jobs.long));
    });
    const b = run("b", jobs.b);
    const [ra, rb] = await Promise.all([a, b]);
    const rl = (await started[0]) as { tokens: number[]; counted: number };
    expect(ra.tokens).toEqual((await alone(jobs.a)).tokens);
    expect(rb.tokens).toEqual((await alone(jobs.b)).tokens);
    expect(rl.tokens).toEqual((await alone(jobs.long)).tokens);
    // web-llm's own prefill fed nothing: its usage still counts the whole prompt, as alone
    expect(pipe.log.filter((line) => line.startsWith("forward "))).toEqual([]);
    expect(rl.counted).toBe(48);
    // the newcomer's 6 chunks each went in ONE batch_prefill with a's and b's decode tokens, in consecutive steps
    const withLong = pipe.forwards.mixed.filter((rowsOf) => rowsOf.some(([seq]) => seq === seqs.long));
    expect(withLong).toEqual(Array.from({ length: 6 }, () => [[seqs.a, 1], [seqs.b, 1], [seqs.long, 8]]));
    const forwards = pipe.log.filter((line) => /^(mixed|decode|prefill) /.test(line));
    const steps = forwards.map((line, i) => (line.startsWith("mixed") && line.includes(`${seqs.long}:`) ? i : -1)).filter((i) => i >= 0);
    expect(steps.map((i) => i - steps[0])).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe("continuous batching on web-llm's pipeline: prompts prefilled side by side", () => {
  /** `jobs` at once on `pipe`'s rows; each outcome, its prompt count, and how many forwards had run when its first token came. */
  async function sideBySide(pipe: FakeBatchingPipeline, rows: WebLlmRows, jobs: Array<Job & { key?: string; image?: [number, number] }>) {
    return Promise.all(
      jobs.map(async (job, i) => {
        const controller = new AbortController();
        const row = await rows.open({ id: `r${i}`, owner: `o${i}`, ...(job.key ? { key: job.key } : {}) }, controller.signal);
        const view = row.view as unknown as FakeBatchingPipeline;
        if (job.image) withImage(view, job.image);
        const prefillStep = view.prefillStep.bind(view);
        let firstAfter = -1;
        if (job.abortAfter !== undefined) {
          // aborted as the pipeline's `abortAfter`th forward ends (inside a step)
          const endForward = pipe.fKVCacheEndForward;
          let forwards = 0;
          pipe.fKVCacheEndForward = (kv: unknown) => {
            if (++forwards === job.abortAfter) controller.abort();
            return endForward(kv);
          };
        }
        view.prefillStep = async (prompt: number[], config?: GenConfig) => {
          await prefillStep(prompt, config);
          firstAfter = forwardCount(pipe);
        };
        try {
          await view.generateRequest(encodeText(job.prompt), job.config);
          const outcome = { ...outcomeOf(view, pipe.held(row.sequence) as number[]), seq: row.sequence, firstAfter, counted: view.curRoundPrefillTotalTokens + row.cachedTokens, cached: row.cachedTokens, error: null as unknown };
          row.leave({ keep: true });
          return outcome;
        } catch (error) {
          row.leave();
          return { ...outcomeOf(view, []), seq: row.sequence, firstAfter, counted: 0, cached: 0, error };
        }
      }),
    );
  }

  function bigChunkSetup(options: Partial<WebLlmRowsOptions> = {}, libraryChunk = 64) {
    const pipe = new FakeBatchingPipeline();
    pipe.prefillChunkSize = libraryChunk; // the library's chunk: what one step's forward may hold
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 4, cost: GPU_LIKE, prefillChunkTokens: 8, ...options });
    rows.ensureKvRoom({ maxRows: 4 });
    return { pipe, rows };
  }

  const PROMPTS = ["thequickbrownfox", "jumpsoverthelazydog", "abcdefghijklmnopqrstu", "sphinxofblackquartz"]; // 16, 19, 21, 19 tokens

  it("four prompts arriving together are prefilled in the same forwards, a chunk of each per batch_prefill, and the fourth gets its first token after 4 forwards", async () => {
    const { pipe, rows } = bigChunkSetup();
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config: i % 2 === 0 ? { max_tokens: 10 } : { max_tokens: 10, temperature: 1, seed: 11 + i } }));
    const results = await sideBySide(pipe, rows, jobs);
    for (const [i, job] of jobs.entries()) {
      const expected = await alone(job);
      expect(results[i].tokens, `row ${i} tokens`).toEqual(expected.tokens);
      expect(results[i].held, `row ${i} sequence`).toEqual(expected.held);
      // usage counts the whole prompt, as alone
      expect(results[i].counted, `row ${i} prompt tokens`).toBe(encodeText(job.prompt).length);
    }
    // No prompt went through web-llm's own prefill. The first step started as soon as A was waiting for it
    // (A's first chunk alone); B, C and D arrived during it, and from then on every forward held a chunk of
    // every prompt still prefilling, and A's decode token once A had its first token.
    expect(pipe.log.filter((line) => line.startsWith("forward "))).toEqual([]);
    const [A, B, C, D] = results.map((r) => r.seq);
    expect(pipe.log.filter((line) => /^(mixed|decode|prefill) /.test(line)).slice(0, 4)).toEqual([
      `prefill ${A} 8`,
      `mixed ${A}:8,${B}:8,${C}:8,${D}:8`,
      `mixed ${A}:1,${B}:8,${C}:8,${D}:8`,
      `mixed ${A}:1,${B}:3,${C}:5,${D}:3`,
    ]);
    // The fourth prompt's first token after 4 forwards; one prompt after another it came after 2 + 3 + 3 + 3.
    expect(results.map((r) => r.firstAfter)).toEqual([2, 4, 4, 4]);
    expect(pipe.scopeStack).toEqual([]);
    expect(rows.counters().mean_rows).toBeGreaterThanOrEqual(3.5);
  });

  it("the step's forward holds at most the library's prefill chunk: prompts beyond it wait for the next step, decoding rows first", async () => {
    const { pipe, rows } = bigChunkSetup({}, 20);
    const jobs: Job[] = PROMPTS.map((prompt) => ({ prompt, config: { max_tokens: 6 } }));
    const results = await sideBySide(pipe, rows, jobs);
    for (const [i, job] of jobs.entries()) expect(results[i].tokens, `row ${i}`).toEqual((await alone(job)).tokens);
    for (const forward of pipe.forwards.mixed) expect(forward.reduce((n, [, tokens]) => n + tokens, 0)).toBeLessThanOrEqual(20);
    expect(Math.max(...pipe.forwards.mixed.map((forward) => forward.length))).toBe(4);
  });

  it("where the measured cost makes batch_prefill dear, a step's rows run their own forwards (prefill, decode) instead, with the same output", async () => {
    const dearMixed = { single: (tokens: number) => 1 + tokens / 1024, batch: (rows: number, tokens: number) => (tokens > rows ? 1000 : 1.1) };
    const { pipe, rows } = bigChunkSetup({ cost: dearMixed });
    const jobs: Job[] = PROMPTS.map((prompt) => ({ prompt, config: { max_tokens: 8 } }));
    const results = await sideBySide(pipe, rows, jobs);
    for (const [i, job] of jobs.entries()) expect(results[i].tokens, `row ${i}`).toEqual((await alone(job)).tokens);
    expect(pipe.forwards.mixed).toEqual([]);
    expect(pipe.forwards.prefill.length).toBeGreaterThanOrEqual(8);
    // once every row decodes, batch_decode is still cheaper
    expect(pipe.forwards.batched.filter((n) => n === 4).length).toBeGreaterThanOrEqual(5);
  });

  it("rows of two keys prefilled side by side: each forks only its own key's prompt, and the prompt cache's record is what its sequences hold", async () => {
    const pipe = new FakeBatchingPipeline();
    pipe.prefillChunkSize = 64;
    const rows = new WebLlmRows(
      pipe as unknown as RowsPipeline,
      { maxRows: 4, cost: GPU_LIKE, prefillChunkTokens: 8 },
      (child, full, key) => cache.forkInto(child, full, key),
      (from, tokens, key) => cache.keep(from, tokens, key),
    );
    const cache = new WebLlmPromptCache(pipe as unknown as WebLlmPipeline, { budgetTokens: 4096, maxSequences: 4, pageSize: 1, reserve: { sequences: 4, tokens: 1024 } });
    const prompt = "thesystempromptsaysquestion"; // 27 tokens
    const jobs: Array<Job & { key: string }> = [
      { prompt, key: "a", config: { max_tokens: 6, temperature: 1, seed: 1 } },
      { prompt, key: "b", config: { max_tokens: 6, temperature: 1, seed: 2 } },
      { prompt, key: "a", config: { max_tokens: 6, temperature: 1, seed: 3 } },
      { prompt: "thesystempromptsaysother", key: "b", config: { max_tokens: 6 } },
    ];
    const results = await sideBySide(pipe, rows, jobs);
    for (const [i, job] of jobs.entries()) {
      const expected = await alone(job);
      expect(results[i].tokens, `row ${i}`).toEqual(expected.tokens);
      expect(results[i].held, `row ${i} sequence`).toEqual(expected.held);
      expect(results[i].counted, `row ${i} prompt tokens`).toBe(encodeText(job.prompt).length);
    }
    // a's second choice waited for a's first and forked its prompt but the last token; b's first fed its own
    // (never a's), and b's second shares 19 of its 24 tokens with it: it waited and forked them.
    expect(results.map((r) => r.cached)).toEqual([0, 0, 26, 19]);
    expect(rows.counters().prefill_tokens).toBe(27 + 27 + 1 + 5);
    // every kept sequence holds exactly what the cache's record says, under its own key
    const kept = cache.policy!.sequences();
    expect(kept.length).toBeGreaterThan(0);
    for (const s of kept) expect(pipe.held(s.id)).toEqual(s.tokens);
    expect(new Set(kept.map((s) => s.key))).toEqual(new Set(["a", "b"]));
  });

  it("an abort while a prompt is fed by the steps ends that row at a step boundary; the others are unchanged", async () => {
    const { pipe, rows } = bigChunkSetup({ prefillChunkTokens: 4 });
    const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config: { max_tokens: 8 }, ...(i === 2 ? { abortAfter: 2 } : {}) }));
    const results = await sideBySide(pipe, rows, jobs);
    expect((results[2].error as Error)?.name).toBe("AbortError");
    for (const i of [0, 1, 3]) expect(results[i].tokens, `row ${i}`).toEqual((await alone(jobs[i])).tokens);
    // its sequence went with it
    expect([...(pipe.kvCache as unknown as { seqs: Map<number, number[]> }).seqs.keys()]).toEqual([0]);
  });

  it("a prefill that ends with an error leaves no TVM scope open, whether web-llm closes its own (0.2.86) or leaves it open (0.2.79)", async () => {
    for (const closesOwn of [false, true]) {
      const { pipe, rows } = bigChunkSetup({ prefillChunkTokens: 4 });
      pipe.prefillClosesScopeOnError = closesOwn;
      // the third prompt (21 tokens, 4 per step) is aborted while the steps still feed it
      const jobs: Job[] = PROMPTS.map((prompt, i) => ({ prompt, config: { max_tokens: 8 }, ...(i === 2 ? { abortAfter: 2 } : {}) }));
      const results = await sideBySide(pipe, rows, jobs);
      expect((results[2].error as Error)?.name, `web-llm closes its scope: ${closesOwn}`).toBe("AbortError");
      for (const i of [0, 1, 3]) expect(results[i].error, `row ${i}`).toBeNull();
      // tvmjs's one stack: every scope opened was closed once (a second close would have popped another row's)
      expect(pipe.scopeStack, `web-llm closes its scope: ${closesOwn}`).toEqual([]);
    }
  });

  it("the n choices of a prompt wait for the first choice's prefill to fork it; when that one is aborted first, they feed the prompt themselves, side by side", async () => {
    const { pipe, rows } = bigChunkSetup();
    const prompt = "thesystempromptsaysquestion"; // 27 tokens: 4 steps of 8
    const seeded = (seed: number): GenConfig => ({ max_tokens: 6, temperature: 1, seed });
    const jobs: Job[] = [{ prompt, config: seeded(1), abortAfter: 2 }, { prompt, config: seeded(2) }, { prompt, config: seeded(3) }];
    const results = await sideBySide(pipe, rows, jobs);
    expect((results[0].error as Error)?.name).toBe("AbortError");
    for (const i of [1, 2]) {
      const expected = await alone(jobs[i]);
      expect(results[i].tokens, `choice ${i}`).toEqual(expected.tokens);
      expect(results[i].held, `choice ${i} sequence`).toEqual(expected.held);
      expect(results[i].counted, `choice ${i} prompt tokens`).toBe(27);
    }
    expect(results.map((r) => r.cached)).toEqual([0, 0, 0]);
    // the first choice's 2 chunks, then the whole prompt twice, in shared forwards
    expect(rows.counters().prefill_tokens).toBe(16 + 27 + 27);
    expect(pipe.forwards.mixed.some((forward) => forward.length === 2 && forward.every(([, tokens]) => tokens === 8))).toBe(true);
  });

  it("a prompt with an image is web-llm's own prefill, in a forward of its own, while text prompts are prefilled side by side; each row is what it is alone", async () => {
    const { pipe, rows } = bigChunkSetup();
    const jobs: Array<Job & { image?: [number, number] }> = [
      { prompt: PROMPTS[0], config: { max_tokens: 8 } },
      { prompt: "lookatthispicturenow", config: { max_tokens: 8 }, image: [4, 4] },
      { prompt: PROMPTS[1], config: { max_tokens: 8 } },
    ];
    const results = await sideBySide(pipe, rows, jobs);
    for (const [i, job] of jobs.entries()) {
      const solo = new FakeBatchingPipeline();
      if (job.image) withImage(solo, job.image);
      await solo.generateRequest(encodeText(job.prompt), job.config);
      expect(results[i].tokens, `row ${i}`).toEqual(solo.outputIds);
      expect(results[i].held, `row ${i} sequence`).toEqual(solo.held(0));
    }
    const [text1, image, text2] = results.map((r) => r.seq);
    // the image prompt (20 positions) in web-llm's own forwards; the text prompts only in the rows' forwards
    expect(pipe.log.filter((line) => line.startsWith("forward "))).toEqual([`forward 20 on ${image}`]);
    const prefilledInSteps = pipe.forwards.mixed.flat().filter(([, tokens]) => tokens > 1).map(([seq]) => seq);
    expect(new Set(prefilledInSteps)).toEqual(new Set([text1, text2]));
  });
});

describe("continuous batching on web-llm's pipeline: a forward that fails on the device", () => {
  /**
   * Three rows decoding in steps of single forwards (cheaper here), on a library whose `decode` outputs are
   * recorded and whose device fails once: `forward`, at the first decode that comes after another row's
   * decode in the same step (that row's logits are made and not yet handed over); `wait`, at the wait for
   * the device right after a decode. Each row's error, how many decode outputs were live when it failed,
   * and the outputs.
   */
  async function failingStep(failAt: "forward" | "wait") {
    const pipe = new FakeBatchingPipeline();
    const outputs: FakeTensor[] = [];
    const liveNow = () => outputs.filter((tensor) => !tensor.disposed).length;
    let liveAtFailure = -1;
    let afterDecode = false;
    const fail = () => {
      liveAtFailure = liveNow();
      throw new Error("GPU device lost");
    };
    const getFunction = pipe.vm.getFunction;
    (pipe.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      const fn = getFunction(name) as unknown as (embedded: unknown, kv: unknown) => { get(i: number): FakeTensor };
      if (name !== "decode") return fn;
      return (embedded: unknown, kv: unknown) => {
        if (failAt === "forward" && liveAtFailure < 0 && liveNow() > 0) fail();
        const out = fn(embedded, kv);
        afterDecode = true;
        return {
          get: (i: number) => {
            const tensor = out.get(i);
            outputs.push(tensor);
            return tensor;
          },
        };
      };
    };
    const device = pipe.device as { sync(): Promise<void> };
    const sync = device.sync;
    device.sync = async () => {
      const waitsForDecode = afterDecode;
      afterDecode = false;
      if (failAt === "wait" && liveAtFailure < 0 && waitsForDecode) fail();
      return sync();
    };
    const singlesCheaper = { single: () => 1, batch: () => 100 };
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 3, cost: singlesCheaper });
    rows.ensureKvRoom({ maxRows: 3 });
    const errors = await errorsOfThreeRows(rows);
    return { pipe, errors, liveAtFailure, outputs };
  }

  it("a step of single forwards that fails at a later row's forward frees the logits its earlier forwards made; the step's rows fail with the error", async () => {
    const { pipe, errors, liveAtFailure, outputs } = await failingStep("forward");
    expect(errors).toContain("GPU device lost");
    expect(pipe.forwards.batched).toEqual([]);
    // the failing step had made another row's logits before it failed
    expect(liveAtFailure).toBeGreaterThan(0);
    // and once the rows are gone, no logits the library made are left on the device
    expect(outputs.filter((tensor) => !tensor.disposed).length).toBe(0);
  });

  it("a single forward whose wait for the device fails frees the logits it made", async () => {
    const { errors, liveAtFailure, outputs } = await failingStep("wait");
    expect(errors).toContain("GPU device lost");
    expect(liveAtFailure).toBeGreaterThan(0);
    expect(outputs.filter((tensor) => !tensor.disposed).length).toBe(0);
  });
});

describe("continuous batching on web-llm's pipeline: an allocation that fails while a batched forward's logits are copied to the rows", () => {
  it("frees the rows' arrays already copied; the step's rows fail with the error", async () => {
    const pipe = new FakeBatchingPipeline();
    // The copy loop's arrays: device tensors of the decode shape made after the batched logits' host copy.
    const copies: FakeTensor[] = [];
    let sinceHostCopy = -1;
    let failed = false;
    let liveAtFailure = -1;
    const tvm = pipe.tvm as unknown as { empty(shape: number[], dtype: string, device: unknown): FakeTensor };
    const empty = tvm.empty.bind(tvm);
    tvm.empty = (shape, dtype, device) => {
      if (device === "cpu" && shape.length === 3 && shape[0] * shape[1] > 1) sinceHostCopy = 0;
      else if (sinceHostCopy >= 0 && device !== "cpu" && shape.length === 3 && shape[0] === 1 && shape[1] === 1) {
        // The second row's array of the first batched step: the device is out of memory.
        if (++sinceHostCopy === 2 && !failed) {
          failed = true;
          liveAtFailure = copies.filter((tensor) => !tensor.disposed).length;
          throw new Error("out of device memory");
        }
        const tensor = empty(shape, dtype, device);
        copies.push(tensor);
        return tensor;
      }
      return empty(shape, dtype, device);
    };
    const batchCheaper = { single: () => 100, batch: () => 1 };
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 3, cost: batchCheaper });
    rows.ensureKvRoom({ maxRows: 3 });
    const errors = await errorsOfThreeRows(rows);
    expect(errors).toContain("out of device memory");
    // the failing step had copied the first row's logits before the allocation failed
    expect(liveAtFailure).toBe(1);
    expect(pipe.forwards.batched.length + pipe.forwards.mixed.length).toBeGreaterThan(0);
    // and once the rows are gone, none of the copy loop's arrays is left on the device
    expect(copies.filter((tensor) => !tensor.disposed).length).toBe(0);
  });
});

describe("continuous batching on web-llm's pipeline: a library without batch_prefill", () => {
  it("prompts are web-llm's own prefill, in forwards of their own between the steps, several chunks each; every row is what it is alone", async () => {
    const pipe = new FakeBatchingPipeline();
    const getFunction = pipe.vm.getFunction;
    (pipe.vm as { getFunction: (name: string) => unknown }).getFunction = (name: string) => {
      if (name === "batch_prefill") throw new Error("Cannot find function batch_prefill");
      return getFunction(name);
    };
    const rows = new WebLlmRows(pipe as unknown as RowsPipeline, { maxRows: 4, cost: GPU_LIKE, prefillChunkTokens: 4 });
    expect(rows.unsupported).toBeNull();
    rows.ensureKvRoom({ maxRows: 4 });
    const prompts = ["thequickbrownfox", "jumpsoverthelazydog", "hello"];
    const outputs = await outputsTogether(rows, prompts, 8);
    for (const [i, prompt] of prompts.entries()) expect(outputs[i], prompt).toEqual((await alone({ prompt, config: { max_tokens: 8 } })).tokens);
    expect(pipe.forwards.mixed).toEqual([]);
    // each prompt in web-llm's forwards of at most 4 tokens (the steps' chunk)
    const own = pipe.log.filter((line) => line.startsWith("forward "));
    expect(own.reduce((n, line) => n + Number(line.split(" ")[1]), 0)).toBe(16 + 19 + 5);
    expect(Math.max(...own.map((line) => Number(line.split(" ")[1])))).toBe(4);
  });
});
