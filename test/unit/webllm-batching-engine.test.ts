/**
 * Continuous batching at the web-llm engine seam (createWebLlmEngine with
 * `batching`): a stand-in MLCEngine that runs web-llm 0.2.79's chat flow on
 * the decoding stand-in pipeline (support/fake-webllm-batch.ts): its
 * `chatCompletion` picks the model's pipeline and lock from its maps before
 * its first await, takes the per-model lock, and its generator seeds, resets
 * the conversation, prefills, decodes until stopped (checking the
 * engine-wide interrupt flag between steps), then sends the finish and usage
 * chunks and releases the lock. So the rows enter through the same doors as
 * in web-llm: their view in the pipeline map for the call, an open lock.
 */
import { describe, expect, it } from "vitest";
import { createWebLlmEngine, type WebLlmChunk, type WebLlmModule } from "../../src/engine/webllm/webllm-engine.js";
import type { EngineEvent, EngineRequest } from "../../src/engine/types.js";
import type { ModelRecord } from "../../src/models/record.js";
import { decodeIds, encodeText } from "./support/fake-webllm-decoder.js";
import { FakeBatchingPipeline } from "./support/fake-webllm-batch.js";
import { WEIGHT_BOUND_COST } from "../../src/engine/batching/cost-model.js";
import { EngineHost, type EngineHostOptions } from "../../src/host/engine-host.js";
import { provideModules } from "../../src/lazy-imports.js";
import { FakeGpuMemory } from "./support/fake-gpu-memory.js";

const record: ModelRecord = { model: "http://127.0.0.1/m/", model_id: "Qwen3-0.6B-q4f32_1-MLC", model_lib: "http://127.0.0.1/m.wasm", family: "qwen3" };

/** web-llm's CustomLock. */
class Lock {
  private held = false;
  private readonly queue: Array<() => void> = [];
  async acquire() {
    if (!this.held) this.held = true;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
  }
  async release() {
    if (!this.held) throw Error("InternalError: expect lock is acquired upon release()");
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }
}

/** `tick`: each decode step ends on a later task, as a real one does (its logits are read back from the device). */
function standIn(pipeline = new FakeBatchingPipeline(), tick = false) {
  let interrupt = false;
  /** chatCompletion calls in flight (before web-llm's per-model lock), and the most at once. */
  const calls = { inFlight: 0, most: 0 };
  class MLCEngine {
    loadedModelIdToPipeline = new Map<string, unknown>();
    loadedModelIdToLock = new Map<string, unknown>();
    loadedModelIdToChatConfig = new Map<string, unknown>();
    chat = { completions: { create: (body: Record<string, unknown>) => this.chatCompletion(body) } };
    completions = { create: async () => Promise.reject(new Error("not in this stand-in")) };
    constructor(readonly config: Record<string, unknown>) {}
    setAppConfig() {}
    setInitProgressCallback() {}
    setLogitProcessorRegistry() {}
    async reload(id: string) {
      this.loadedModelIdToPipeline.set(id, pipeline);
      this.loadedModelIdToLock.set(id, new Lock());
    }
    async unload() {}
    interruptGenerate() {
      interrupt = true;
    }
    async resetChat() {}
    // web-llm 0.2.79: the pipeline and the lock are read before the first await
    async chatCompletion(body: Record<string, unknown>) {
      const model = [...this.loadedModelIdToPipeline.keys()][0];
      const pipe = this.loadedModelIdToPipeline.get(model) as FakeBatchingPipeline;
      const lock = this.loadedModelIdToLock.get(model) as Lock;
      calls.most = Math.max(calls.most, ++calls.inFlight);
      await lock.acquire();
      return this.asyncGenerate(body, pipe, model);
    }
    async *asyncGenerate(body: Record<string, unknown>, pipe: FakeBatchingPipeline, model: string): AsyncGenerator<WebLlmChunk> {
      const lock = this.loadedModelIdToLock.get(model) as Lock;
      interrupt = false;
      const messages = body.messages as Array<{ content: string }>;
      const prompt = encodeText(messages.map((m) => m.content.replace(/[^a-z]/g, "")).join(""));
      const config = { max_tokens: body.max_tokens as number, temperature: (body.temperature as number | undefined) ?? 0, ...(body.seed !== undefined ? { seed: body.seed as number } : {}) };
      try {
        if (config.seed !== undefined) pipe.setSeed(config.seed);
        pipe.resetChat();
        await pipe.prefillStep(prompt, config);
        let sent = 0;
        const chunk = () => {
          const text = decodeIds(pipe.outputIds).slice(sent);
          sent += text.length;
          return { choices: [{ delta: { content: text }, finish_reason: null }] } as unknown as WebLlmChunk;
        };
        yield chunk();
        while (!pipe.stopped()) {
          if (interrupt) {
            pipe.triggerStop();
            break;
          }
          await pipe.decodeStep(config);
          if (tick) await new Promise((resolve) => setTimeout(resolve, 0));
          yield chunk();
        }
        yield { choices: [{ delta: {}, finish_reason: pipe.finishReason }] } as unknown as WebLlmChunk;
        // web-llm's usage counts the prompt tokens its prefill step counted (getCurRoundPrefillTotalTokens)
        yield { choices: [], usage: { prompt_tokens: pipe.curRoundPrefillTotalTokens, completion_tokens: pipe.outputIds.length } } as unknown as WebLlmChunk;
      } finally {
        calls.inFlight--;
        await lock.release();
      }
    }
  }
  const module = { MLCEngine, prebuiltAppConfig: { cacheBackend: "cache", model_list: [] }, modelVersion: "v0_2_79" } as unknown as WebLlmModule;
  return { module, pipeline, calls };
}

const request = (q: string, over: Partial<EngineRequest> = {}): EngineRequest => ({
  model: record.model_id,
  messages: [{ role: "user", content: q }],
  sampling: { stop: [], max_tokens: 12, temperature: 0 },
  thinking: { enabled: false },
  continueFinalMessage: false,
  speculative: false,
  ...over,
});

async function run(engine: ReturnType<typeof createWebLlmEngine>, req: EngineRequest, signal = new AbortController().signal, onText?: (n: number) => void) {
  let text = "";
  let done: Extract<EngineEvent, { type: "done" }> | null = null;
  let n = 0;
  for await (const e of engine.generate(req, signal)) {
    if (e.type === "text") {
      text += e.text;
      onText?.(++n);
      await new Promise((r) => setTimeout(r, 0)); // a consumer reads on later tasks
    } else done = e;
  }
  return { text, done };
}

/** A GPU-like cost, fixed: the stand-in's forwards take no time to measure. */
async function engineWith(batching?: { maxRows: number }) {
  const { module, pipeline } = standIn();
  const engine = createWebLlmEngine({ webllm: module, ...(batching ? { batching: { ...batching, cost: WEIGHT_BOUND_COST } } : {}), promptCache: false });
  await engine.load(record, {});
  return { engine, pipeline };
}

describe("continuous batching at the web-llm engine seam", () => {
  it("four requests at once enter web-llm as rows: each reply as alone, batched forwards, x_webgpu.batch, the pipeline's own state untouched", async () => {
    const questions = ["thecat", "abcxyz", "hello", "zzqq"];
    const alone = await engineWith();
    const expected = [];
    for (const q of questions) expected.push(await run(alone.engine, request(q)));
    expect(alone.pipeline.forwards.batched).toEqual([]);
    const { engine, pipeline } = await engineWith({ maxRows: 4 });
    expect(engine.batchRows).toBe(4);
    expect(engine.oneAtATime).toBeUndefined();
    const got = await Promise.all(questions.map((q) => run(engine, request(q))));
    for (const [i] of questions.entries()) {
      expect(got[i].text, questions[i]).toBe(expected[i].text);
      expect(got[i].done?.finish).toBe(expected[i].done?.finish);
      expect(got[i].done?.usage.completionTokens).toBe(expected[i].done?.usage.completionTokens);
      // the steps fed the prompt, web-llm's prefill only its last token: usage counts it all, as alone
      expect(got[i].done?.usage.promptTokens, questions[i]).toBe(expected[i].done?.usage.promptTokens);
      expect(got[i].done?.usage.batch?.maxRows).toBe(4);
    }
    expect(expected.map((e) => e.done?.usage.promptTokens)).toEqual(questions.map((q) => q.length));
    expect(pipeline.forwards.mixed.length).toBeGreaterThanOrEqual(1);
    expect(pipeline.forwards.batched.length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...pipeline.forwards.batched)).toBe(4);
    expect(engine.batchCounters?.()?.max_rows).toBe(4);
    // every row's request state was its view's: the pipeline's own is as loaded
    expect(pipeline.outputIds).toEqual([]);
  });

  it("a step's forward that fails (a device error) fails the rows it carried, each at once, and later requests still run", async () => {
    const { engine, pipeline } = await engineWith({ maxRows: 4 });
    const device = (pipeline as unknown as { device: { sync: () => Promise<void> } }).device;
    const sync = device.sync;
    let syncs = 0;
    // the third step's read-back fails, as a lost device's does
    device.sync = async () => {
      if (++syncs === 3) throw new Error("GPUDevice was lost: the step failed");
      return sync();
    };
    const long = { stop: [], max_tokens: 30, temperature: 0 };
    const outcome = (p: Promise<unknown>) => p.then(() => "done", (error: Error) => `failed: ${error.message}`);
    const settled = Promise.all([outcome(run(engine, request("thecat", { sampling: long }))), outcome(run(engine, request("hello", { sampling: long })))]);
    const hung = new Promise((resolve) => setTimeout(() => resolve("hung"), 3000));
    const results = await Promise.race([settled, hung]);
    expect(results).not.toBe("hung");
    for (const result of results as string[]) expect(result).toMatch(/^failed: .*lost/);
    // the rows left: the next request gets a row and its reply, as alone
    device.sync = sync;
    const alone = await engineWith();
    const expected = await run(alone.engine, request("abcxyz"));
    const next = await Promise.race([run(engine, request("abcxyz")), new Promise((resolve) => setTimeout(() => resolve("hung"), 3000))]);
    expect((next as { text: string }).text).toBe(expected.text);
  });

  it("an abort stops that row only (web-llm's engine-wide interrupt is not used)", async () => {
    const { engine } = await engineWith({ maxRows: 4 });
    const controller = new AbortController();
    const runs = [
      run(engine, request("thecat", { sampling: { stop: [], max_tokens: 30, temperature: 0 } })),
      run(engine, request("abcxyz", { sampling: { stop: [], max_tokens: 30, temperature: 0 } }), controller.signal, (n) => n === 3 && controller.abort()),
      run(engine, request("hello", { sampling: { stop: [], max_tokens: 30, temperature: 0 } })),
    ];
    const [a, aborted, c] = await Promise.all(runs);
    // the engine ends an aborted generation with finish "abort" (the host turns it into the AbortError)
    expect(aborted.done?.finish).toBe("abort");
    expect(aborted.text.length).toBeLessThanOrEqual(4);
    const alone = await engineWith();
    expect((a as { text: string }).text).toBe((await run(alone.engine, request("thecat", { sampling: { stop: [], max_tokens: 30, temperature: 0 } }))).text);
    expect((c as { text: string }).text).toBe((await run(alone.engine, request("hello", { sampling: { stop: [], max_tokens: 30, temperature: 0 } }))).text);
  });

  it("a request that needs the logit processor runs alone, with web-llm's own lock back, after the rows in flight", async () => {
    const { module } = standIn();
    const engine = createWebLlmEngine({ webllm: module, batching: { maxRows: 4 }, promptCache: false });
    await engine.load(record, {});
    const order: string[] = [];
    const row = run(engine, request("thecat")).then(() => order.push("row"));
    const alone = run(engine, request("hello", { sampling: { stop: [], max_tokens: 4, temperature: 0, top_k: 3 } })).then((r) => {
      order.push("alone");
      return r;
    });
    await Promise.all([row, alone]);
    expect(order).toEqual(["row", "alone"]);
    expect((await alone).done?.usage.batch).toBeUndefined();
  });

  it("a request with a prediction joins the rows: its drafts verify in the steps beside the other rows, its reply as alone, its drafts counted", async () => {
    const long = { stop: [], max_tokens: 16, temperature: 0 };
    const alone = await engineWith();
    const reference = await run(alone.engine, request("hellohello", { sampling: long }));
    const other = await run(alone.engine, request("thecat", { sampling: long }));
    // the library's prefill chunk bounds a step: 64 tokens leave each of 4 rows room for a draft of 15
    const { module, pipeline } = standIn();
    pipeline.prefillChunkSize = 64;
    const engine = createWebLlmEngine({ webllm: module, batching: { maxRows: 4, cost: WEIGHT_BOUND_COST }, promptCache: false });
    await engine.load(record, {});
    const [predicted, plain] = await Promise.all([
      run(engine, request("hellohello", { sampling: long, prediction: reference.text, speculative: undefined })),
      run(engine, request("thecat", { sampling: long })),
    ]);
    expect(predicted.text).toBe(reference.text);
    expect(plain.text).toBe(other.text);
    // it shared the steps with the other row, and most of its tokens came from its accepted drafts
    expect(predicted.done?.usage.batch?.maxRows).toBe(2);
    expect(predicted.done?.usage).toMatchObject({ acceptedPredictionTokens: 16, rejectedPredictionTokens: 0 });
    // one verify pass of its whole draft (its token and 14 drafted ones), in the same batch_prefill as the other row's prompt
    expect(predicted.done?.usage).toMatchObject({ decodePasses: 1, draftTokens: 14, acceptedDraftTokens: 14 });
    expect(pipeline.forwards.mixed.some((rowsOf) => rowsOf.length === 2 && rowsOf.some(([, n]) => n === 15))).toBe(true);
    // speculation off: a row like any other, one token per step, no drafts counted
    const off = await run(engine, request("hellohello", { sampling: long, prediction: reference.text, speculative: false }));
    expect(off.text).toBe(reference.text);
    expect(off.done?.usage.decodePasses).toBeUndefined();
    expect(off.done?.usage.batch?.passes).toBeGreaterThanOrEqual(16);
  });

  it("with the prompt cache on, a regenerate as a row beside another drafts from the reply its key's cache holds: the same reply, its drafts counted; another key's gets none", async () => {
    const long = { stop: [], max_tokens: 24, temperature: 0 };
    const ask = (q: string, key?: string) => request(q, { sampling: long, speculative: undefined, ...(key ? { promptCacheKey: key } : {}) });
    const alone = await engineWith();
    const reference = await run(alone.engine, ask("sphinxofblackquartz"));
    const other = await run(alone.engine, ask("abcxyz"));
    /** A fresh engine; `first`: the key whose first turn (a row) the cache then holds; then the regenerate beside another row. */
    async function regenerate(first: string | null, key: string) {
      const { module, pipeline } = standIn();
      pipeline.prefillChunkSize = 64;
      const engine = createWebLlmEngine({ webllm: module, batching: { maxRows: 4, cost: WEIGHT_BOUND_COST }, promptCache: { budgetTokens: 4096, maxSequences: 4 } });
      await engine.load(record, {});
      if (first !== null) expect((await run(engine, ask("sphinxofblackquartz", first))).text).toBe(reference.text);
      const [again, beside] = await Promise.all([run(engine, ask("sphinxofblackquartz", key)), run(engine, ask("abcxyz", "someone"))]);
      expect(again.text).toBe(reference.text);
      expect(beside.text).toBe(other.text);
      expect(again.done?.usage.batch?.maxRows).toBe(2);
      return again.done!.usage;
    }
    const regenerated = await regenerate("k", "k");
    const cold = await regenerate(null, "k");
    // its prompt came from the cache (all but the last token), and nearly every token from an accepted draft of the cached reply
    expect(regenerated.cachedTokens).toBe("sphinxofblackquartz".length - 1);
    expect(regenerated.acceptedDraftTokens).toBeGreaterThanOrEqual(18);
    expect(regenerated.decodePasses).toBeLessThanOrEqual(5);
    expect(regenerated.decodePasses).toBeLessThan(cold.decodePasses as number);
    // another key: what a cold cache gives (drafts from its prompt and output only)
    const stranger = await regenerate("k", "other");
    expect({ passes: stranger.decodePasses, drafted: stranger.draftTokens, accepted: stranger.acceptedDraftTokens }).toEqual({ passes: cold.decodePasses, drafted: cold.draftTokens, accepted: cold.acceptedDraftTokens });
  });

  it("without batching, or with it on a model whose rows cannot run, stats say why", async () => {
    const off = await engineWith();
    expect(off.engine.batchRows).toBeUndefined();
    expect(off.engine.oneAtATime).toMatch(/batching is off/);
    const { module, pipeline } = standIn();
    pipeline.slidingWindowSize = 1024;
    const engine = createWebLlmEngine({ webllm: module, batching: { maxRows: 4 }, promptCache: false });
    await engine.load(record, {});
    expect(engine.batchRows).toBeUndefined();
    expect(engine.oneAtATime).toMatch(/sliding-window model/);
  });
});

/**
 * Batching on by default (createClient's host, which makes the web-llm engine
 * from the client's options as in an app): with `batching` unset the rows are
 * sized to the model and device; `false` opts out; settings the client gave
 * are used as given.
 */
describe("batching by default: the host as createClient makes it", () => {
  const gpu = { available: true, info: { vendor: "t", architecture: "t", device: "", description: "", features: [], limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } };
  /** 64 KV bytes per token (2 layers × 1 KV head × 4 dims × K and V × 4 bytes), 32 per layer. */
  const config = { quantization: "q4f32_1", model_config: { num_hidden_layers: 2, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 4 } };
  const BYTES_PER_TOKEN = 64;

  /** A host with the stand-in web-llm as the one `import("@mlc-ai/web-llm")` gives; `memory`: the device's bytes. */
  function hostWith(options: Pick<EngineHostOptions, "batching" | "promptCache">, memory?: number) {
    const pipeline = new FakeBatchingPipeline();
    (pipeline as unknown as { config: unknown }).config = config;
    const device = memory === undefined ? undefined : new FakeGpuMemory(memory);
    if (device) (pipeline.tvm.lib.webGPUContext as { device?: unknown }).device = device;
    const { module, calls } = standIn(pipeline, true);
    provideModules({ webllm: module } as never);
    const host = new EngineHost({ models: [record], probeGpu: async () => gpu as never, ...options });
    return { host, pipeline, device, calls };
  }

  const body = (q: string) => ({ model: record.model_id, messages: [{ role: "user" as const, content: q }], max_tokens: 12, temperature: 0 });
  type Reply = { choices: Array<{ message: { content: string } }>; x_webgpu: { batch?: { max_rows: number } } };
  const questions = ["thecat", "abcxyz", "hello", "zzqq"];

  async function alone(): Promise<string[]> {
    const { host } = hostWith({ batching: false });
    const texts: string[] = [];
    for (const q of questions) texts.push(((await host.createChatCompletion(body(q))) as Reply).choices[0].message.content);
    return texts;
  }

  it("batching unset: four requests at once, the model not loaded yet, share passes as rows once it is, each reply as alone", async () => {
    const expected = await alone();
    const { host, pipeline, calls } = hostWith({});
    const got = (await Promise.all(questions.map((q) => host.createChatCompletion(body(q))))) as Reply[];
    expect(got.map((r) => r.choices[0].message.content)).toEqual(expected);
    expect(Math.max(...got.map((r) => r.x_webgpu.batch?.max_rows ?? 0))).toBeGreaterThanOrEqual(2);
    const stats = await host.stats();
    expect(stats.batching).toMatchObject({ available: true, model: record.model_id, row_cap: 4, reason: null });
    expect(calls.most).toBeGreaterThanOrEqual(2);
    expect(stats.max_rows).toBeGreaterThanOrEqual(2);
    // no device reachable (the stand-in's runtime has none): the starting size stands, as `batching: true` would
    expect(pipeline.forwards.batched.length + pipeline.forwards.single).toBeGreaterThan(0);
  });

  it("a first burst on a model whose rows cannot run (sliding window) goes into web-llm one generation at a time", async () => {
    const expected = await alone();
    const { host, pipeline, calls } = hostWith({});
    pipeline.slidingWindowSize = 1024;
    const got = (await Promise.all(questions.map((q) => host.createChatCompletion(body(q))))) as Reply[];
    expect(got.map((r) => r.choices[0].message.content)).toEqual(expected);
    expect(got.every((r) => r.x_webgpu.batch === undefined)).toBe(true);
    // the host let one generation into the engine at a time (web-llm's own lock would hide a second one waiting)
    expect(calls.most).toBe(1);
    expect((await host.stats()).batching.reason).toMatch(/sliding-window model/);
  });

  it("batching: false runs one generation at a time, and stats say so", async () => {
    const { host, pipeline } = hostWith({ batching: false });
    const got = (await Promise.all(questions.map((q) => host.createChatCompletion(body(q))))) as Reply[];
    expect(got.every((r) => r.x_webgpu.batch === undefined)).toBe(true);
    expect(pipeline.forwards.batched).toEqual([]);
    const stats = await host.stats();
    expect(stats.batching.available).toBe(false);
    expect(stats.batching.reason).toMatch(/batching is off/);
    expect(stats.max_rows).toBe(1);
  });

  // Prompt caching off: the re-created cache is web-llm's window (4096) plus 2048 tokens per row.
  const cacheBytes = (rows: number) => (4096 + rows * 2048) * BYTES_PER_TOKEN;

  it("batching unset on a device without room for four rows' KV: the rows are halved until the cache fits, and the client still works", async () => {
    const expected = await alone();
    const memory = (cacheBytes(4) + cacheBytes(2)) / 2;
    const { host, pipeline, device } = hostWith({ promptCache: false }, memory);
    const got = (await Promise.all(questions.map((q) => host.createChatCompletion(body(q))))) as Reply[];
    expect(got.map((r) => r.choices[0].message.content)).toEqual(expected);
    expect((await host.stats()).batching).toMatchObject({ available: true, row_cap: 2, reason: null });
    expect(Math.max(...got.map((r) => r.x_webgpu.batch?.max_rows ?? 0))).toBe(2);
    // the device was asked for four rows' cache, refused, then two rows', which it gave; the check freed what it took
    expect(device!.checks).toEqual([
      { bytes: cacheBytes(4), fitted: false },
      { bytes: cacheBytes(2), fitted: true },
    ]);
    expect(device!.inUse).toBe(0);
    // the KV cache made for the rows is the one that fitted: web-llm's sequence and two rows
    expect(pipeline.log.filter((line) => line.startsWith("create_kv_cache")).at(-1)).toBe(`create_kv_cache seqs=3 total=${4096 + 2 * 2048} chunk=8 page=16 sliding=0`);
  });

  it("batching unset on a device without room for two rows: one at a time, and stats say why", async () => {
    const { host, pipeline } = hostWith({ promptCache: false }, cacheBytes(2) - 1);
    const got = (await Promise.all(questions.slice(0, 2).map((q) => host.createChatCompletion(body(q))))) as Reply[];
    expect(got.every((r) => r.x_webgpu.batch === undefined && r.choices[0].message.content.length > 0)).toBe(true);
    expect(pipeline.forwards.batched).toEqual([]);
    const stats = await host.stats();
    expect(stats.batching).toMatchObject({ available: false, row_cap: 1 });
    expect(stats.batching.reason).toMatch(/sized to the device: a KV cache for 4, then 2 rows could not be allocated/);
  });

  it("with the prompt cache on (the default), the rows' room is checked with the cache's budget beside it", async () => {
    const { host, device } = hostWith({}, 2 ** 30);
    await host.createChatCompletion(body("thecat"));
    expect((await host.stats()).batching.row_cap).toBe(4);
    // the cache's default budget (8 windows: the most the budget rule gives) + its reply room (a window) + 4 rows × 2048 + a page per sequence (16 + 1 + 4)
    expect(device!.checks).toEqual([{ bytes: (8 * 4096 + 4096 + 4 * 2048 + 16 * 21) * BYTES_PER_TOKEN, fitted: true }]);
  });

  it("settings the client gave are used as given: they fit, or the load fails saying what to lower", async () => {
    const small = (cacheBytes(4) + cacheBytes(2)) / 2;
    const two = hostWith({ promptCache: false, batching: { maxRows: 2 } }, small);
    await two.host.createChatCompletion(body("thecat"));
    expect((await two.host.stats()).batching).toMatchObject({ available: true, row_cap: 2 });
    const roomy = hostWith({ promptCache: false, batching: true }, 2 ** 30);
    await roomy.host.createChatCompletion(body("thecat"));
    expect((await roomy.host.stats()).batching.row_cap).toBe(4);
    const four = hostWith({ promptCache: false, batching: { maxRows: 4 } }, small);
    await expect(four.host.createChatCompletion(body("thecat"))).rejects.toMatchObject({ status: 400, param: "batching.maxRows", message: expect.stringMatching(/lower batching\.maxRows/) });
    expect(four.device!.checks).toEqual([{ bytes: cacheBytes(4), fitted: false }]);
  });
});
