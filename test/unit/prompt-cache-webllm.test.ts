/**
 * The web-llm prompt-cache binding against a stand-in pipeline
 * (support/fake-webllm-pipeline.ts): web-llm's request flow over a simulated
 * paged KV cache with TVM's checks. The shared cases (the same the pure
 * policy passes) must give the same plans, and after every step each cached
 * sequence must hold exactly the tokens the policy believes, the forwarded
 * tokens must be the prompt minus what the pipeline reports cached, and the
 * reported counts come from the pipeline's filled length.
 */
import { describe, expect, it } from "vitest";
import { WebLlmPromptCache, type WebLlmPipeline } from "../../src/engine/webllm/prompt-cache/webllm-binding.js";
import { FakePipeline } from "./support/fake-webllm-pipeline.js";
import { fedTokens, playCase, promptCacheCases, t, type CacheDriver, type RequestStep } from "./support/prompt-cache-cases.js";

const asPipeline = (p: FakePipeline) => p as unknown as WebLlmPipeline;

/** The binding as a CacheDriver: one web-llm request per step, with every invariant checked. */
function bindingDriver(pipe: FakePipeline, cache: WebLlmPromptCache, multiround = false): CacheDriver {
  return {
    async run(step: RequestStep) {
      const prompt = step.reusableUpTo === undefined ? step.prompt : step.prompt.map((id, i) => (i === step.reusableUpTo ? -1 : id));
      cache.begin({ key: step.key, maxNewTokens: step.maxNewTokens });
      const end = step.end ?? "done";
      let outcome: "done" | "abort" | "error" = "done";
      const logFrom = pipe.log.length;
      const filledBefore = pipe.filledKVCacheLength;
      try {
        await pipe.request({
          prompt,
          reply: step.reply ?? [90_000],
          multiround: multiround && filledBefore > 0,
          fail: end === "abort-prefill" ? "prefill" : end === "error" ? "decode" : undefined,
          image: step.reusableUpTo === undefined ? undefined : [step.reusableUpTo, 1],
        });
      } catch (error) {
        if (end === "done") throw error;
        outcome = end === "abort-prefill" ? "abort" : "error";
      }
      const count = cache.end(outcome);
      const plan = cache.lastPlan;
      expect(plan, step.say).not.toBeNull();
      if (end === "done") {
        expect(count, `${step.say}: counted from the pipeline`).not.toBeNull();
        expect(count!.promptTokens, `${step.say}: prompt tokens`).toBe(prompt.length);
        expect(count!.cachedTokens, `${step.say}: cached < prompt`).toBeLessThan(prompt.length);
        // reused, or one less when the sequence had to give its last token back (forked from at its end)
        expect([plan!.reused, plan!.reused - 1], `${step.say}: cached = the plan's reuse`).toContain(count!.cachedTokens);
        const forwarded = pipe.log.slice(logFrom).filter((l) => l.startsWith("forward"));
        const prefilled = forwarded.slice(0, forwarded.length - ((step.reply ?? [0]).length - 1)).reduce((n, l) => n + Number(l.split(" ")[1]), 0);
        expect(prefilled, `${step.say}: prefilled = prompt − cached`).toBe(prompt.length - count!.cachedTokens);
        expect(pipe.held(plan!.seq), `${step.say}: the sequence holds the prompt and the reply but its last token`).toEqual(fedTokens({ ...step, prompt }));
      } else {
        expect(pipe.held(plan!.seq), `${step.say}: an uncertain sequence leaves the cache`).toBeUndefined();
      }
      for (const s of cache.policy!.sequences()) expect(pipe.held(s.id), `${step.say}: sequence ${s.id} holds what the policy believes`).toEqual(s.tokens);
      return plan!;
    },
    clear: () => cache.clear(),
  };
}

function setup(options: { budgetTokens: number; maxSequences?: number; pageSize?: number }, asyncInput = false) {
  const pipe = new FakePipeline(asyncInput);
  const cache = new WebLlmPromptCache(asPipeline(pipe), { budgetTokens: options.budgetTokens, maxSequences: options.maxSequences ?? 16, pageSize: options.pageSize ?? 1 });
  return { pipe, cache };
}

describe("web-llm prompt-cache binding: the shared cases", () => {
  for (const c of promptCacheCases) {
    it(c.name, async () => {
      const { pipe, cache } = setup(c.options);
      for (const { say, expected, actual } of await playCase(c, bindingDriver(pipe, cache))) expect(actual, say).toMatchObject(expected);
    });
  }

  it("the same plans when web-llm takes a request as its own next round (no resetChat) and returns its input asynchronously (0.2.86)", async () => {
    for (const c of promptCacheCases.filter((x) => /interleaved|regenerate|in place/.test(x.name))) {
      const { pipe, cache } = setup(c.options, true);
      for (const { say, expected, actual } of await playCase(c, bindingDriver(pipe, cache, true))) expect(actual, `${c.name}: ${say}`).toMatchObject(expected);
    }
  });
});

describe("web-llm prompt-cache binding: the runtime", () => {
  it("re-creates the paged cache with room for the budget and the sequences, web-llm's other arguments kept", () => {
    const pipe = new FakePipeline();
    const old = pipe.kvCache;
    new WebLlmPromptCache(asPipeline(pipe), { budgetTokens: 10_000, maxSequences: 4 });
    expect(pipe.log[0]).toBe("create_kv_cache seqs=5 total=10080 chunk=8 page=16 sliding=0");
    expect(old.disposed).toBe(true);
    expect(pipe.held(0), "sequence 0 exists, as web-llm's resetKVCache leaves it").toEqual([]);
  });

  it("another key's request reuses nothing of a key's sequence and leaves it whole; the key continues in place", async () => {
    const { pipe, cache } = setup({ budgetTokens: 10_000 });
    const A1 = t(1, 20);
    const run = async (prompt: number[], key?: string, reply = [7, 8]) => {
      cache.begin({ key });
      await pipe.request({ prompt, reply });
      return { count: cache.end("done")!, plan: cache.lastPlan! };
    };
    await run(A1, "x");
    const other = await run([...A1, 7, ...t(2, 3)], "y");
    expect(other.plan).toMatchObject({ from: "new", reused: 0 });
    expect(other.count.cachedTokens, "y learns nothing of x's prompt").toBe(0);
    const unkeyed = await run([...A1, 7, ...t(2, 3)]);
    expect(unkeyed.count.cachedTokens, "nor does a request without a key").toBe(0);
    const next = await run([...A1, 7, ...t(3, 3)], "x");
    expect(next.plan).toMatchObject({ from: "same", seq: 0, reused: 21 });
    expect(next.count.cachedTokens).toBe(21);
    expect(pipe.held(0)).toEqual([...A1, 7, ...t(3, 3), 7]);
  });

  it("a request never ended (its consumer stopped reading) is settled by the next: kept when its prefill finished, else dropped", async () => {
    const { pipe, cache } = setup({ budgetTokens: 10_000 });
    cache.begin();
    await pipe.request({ prompt: t(1, 10), reply: [1, 2, 3] });
    cache.begin();
    await pipe.request({ prompt: [...t(1, 10), 1, 2, 9], reply: [4] });
    expect(cache.end("done")).toEqual({ promptTokens: 13, cachedTokens: 12 });
    cache.begin();
    await pipe.request({ prompt: t(2, 10), reply: [1], fail: "prefill" }).catch(() => undefined);
    cache.begin();
    await pipe.request({ prompt: t(2, 10), reply: [1] });
    expect(cache.end("done"), "the half-prefilled sequence was dropped").toEqual({ promptTokens: 10, cachedTokens: 0 });
    for (const s of cache.policy!.sequences()) expect(pipe.held(s.id)).toEqual(s.tokens);
  });

  it("web-llm's own clear outside a request (resetChat, reload) empties the policy too", async () => {
    const { pipe, cache } = setup({ budgetTokens: 10_000 });
    cache.begin();
    await pipe.request({ prompt: t(1, 10), reply: [1, 2] });
    cache.end("done");
    pipe.resetChat();
    expect(cache.policy!.sequences()).toEqual([]);
    cache.begin();
    await pipe.request({ prompt: t(1, 10), reply: [1] });
    expect(cache.end("done")).toEqual({ promptTokens: 10, cachedTokens: 0 });
  });

  it("a context-window error clears every sequence", async () => {
    const { pipe, cache } = setup({ budgetTokens: 10_000 });
    cache.begin();
    await pipe.request({ prompt: t(1, 10), reply: [1, 2] });
    cache.end("done");
    pipe.contextWindowSize = 5;
    cache.begin();
    const error = await pipe.request({ prompt: t(1, 12), reply: [1] }).catch((e: Error) => e);
    expect((error as Error).name).toBe("ContextWindowSizeExceededError");
    expect(cache.end("error", error)).toBeNull();
    expect(cache.policy!.sequences()).toEqual([]);
    expect([...pipe.kvCache.seqs.entries()]).toEqual([[0, []]]);
  });

  it("prompt caching off: web-llm's own reuse, counted from the pipeline's filled length", async () => {
    const pipe = new FakePipeline();
    const cache = new WebLlmPromptCache(asPipeline(pipe), null);
    expect(cache.unmanaged).toBe("prompt caching off");
    expect(pipe.log).toEqual([]);
    cache.begin();
    await pipe.request({ prompt: t(1, 10), reply: [1, 2] });
    expect(cache.end("done")).toEqual({ promptTokens: 10, cachedTokens: 0 });
    cache.begin();
    // web-llm's multi-round: it keeps its 11 tokens and tokenizes the rest
    await pipe.request({ prompt: [...t(1, 10), 1, ...t(2, 4)], reply: [3], multiround: true });
    expect(cache.end("done")).toEqual({ promptTokens: 15, cachedTokens: 11 });
    cache.begin();
    await pipe.request({ prompt: [...t(1, 10), 9], reply: [3] });
    expect(cache.end("done"), "another conversation: web-llm resets").toEqual({ promptTokens: 11, cachedTokens: 0 });
  });

  it("sliding-window models and libraries without the sequence functions stay with web-llm's reuse", () => {
    const sliding = new FakePipeline();
    sliding.slidingWindowSize = 4096;
    expect(new WebLlmPromptCache(asPipeline(sliding), { budgetTokens: 100, maxSequences: 2 }).unmanaged).toBe("sliding-window model");
    const bare = new FakePipeline();
    (bare.tvm as { getGlobalFunc: (n: string) => unknown }).getGlobalFunc = (name: string) => {
      throw new Error(`Cannot find global function ${name}`);
    };
    expect(new WebLlmPromptCache(asPipeline(bare), { budgetTokens: 100, maxSequences: 2 }).unmanaged).toMatch(/without KV sequence functions/);
    expect(bare.log, "no cache re-created").toEqual([]);
  });
});
