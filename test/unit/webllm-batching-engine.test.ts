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

function standIn() {
  const pipeline = new FakeBatchingPipeline();
  let interrupt = false;
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
          yield chunk();
        }
        yield { choices: [{ delta: {}, finish_reason: pipe.finishReason }] } as unknown as WebLlmChunk;
        // web-llm's usage counts the prompt tokens its prefill step counted (getCurRoundPrefillTotalTokens)
        yield { choices: [], usage: { prompt_tokens: pipe.curRoundPrefillTotalTokens, completion_tokens: pipe.outputIds.length } } as unknown as WebLlmChunk;
      } finally {
        await lock.release();
      }
    }
  }
  const module = { MLCEngine, prebuiltAppConfig: { cacheBackend: "cache", model_list: [] }, modelVersion: "v0_2_79" } as unknown as WebLlmModule;
  return { module, pipeline };
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
