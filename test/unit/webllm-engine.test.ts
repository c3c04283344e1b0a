/**
 * The adapter's own logic around web-llm, with a stand-in MLCEngine that
 * behaves as web-llm's documented API does (reference/webllm-0.2.86.md):
 * streamed chunks, a usage chunk counting only this round's prefill, an
 * engine-wide interrupt flag checked between decode steps, errors told apart
 * by `name`. The real web-llm runs in webllm-real-smoke.test.ts.
 */
import { describe, expect, it } from "vitest";
import { stopTokenText } from "../../src/engine/webllm/webllm-stop-token-text.js";
import { createWebLlmEngine, toWebLlmRecord, type WebLlmChunk, type WebLlmModule } from "../../src/engine/webllm/webllm-engine.js";
import type { EngineEvent, EngineRequest } from "../../src/engine/types.js";
import type { ModelRecord } from "../../src/models/record.js";
import * as webllm079 from "webllm-0279";
import * as webllm086 from "@mlc-ai/web-llm";
import { FAMILIES } from "../../src/families/families.js";
import { compileEbnf079 } from "./families/xgrammar-0279.js";
import { FakePipeline } from "./support/fake-webllm-pipeline.js";

const record: ModelRecord = { model: "http://127.0.0.1/m/", model_id: "Qwen3-0.6B-q4f32_1-MLC", model_lib: "http://127.0.0.1/m.wasm", family: "qwen3", integrity: { "tokenizer.json": "sha256-x" } };

interface Call {
  api: "chat" | "completion";
  body: Record<string, unknown>;
}

/** A request's prompt as token ids for the stand-in pipeline: one id per character, a marker per message. */
const promptIds = (body: Record<string, unknown>) =>
  [...(body.messages as Array<{ role: string; content: string }>).flatMap((m) => [1_000 + m.role.length, ...[...m.content].map((c) => c.charCodeAt(0))]), 1_009];

function standIn(options: { legacy?: boolean; tokens?: string[]; promptTokens?: number[]; throwName?: string; checkFields?: unknown; pipeline?: FakePipeline; chatConfig?: unknown; tokenizer?: unknown; stopTokens?: number[] } = {}) {
  const calls: Call[] = [];
  const log: string[] = [];
  let interrupt = false;
  let round = 0;
  let message = "";
  class MLCEngine {
    chat = { completions: { create: async (body: Record<string, unknown>) => this.stream("chat", body) } };
    completions = { create: async (body: Record<string, unknown>) => this.stream("completion", body) };
    constructor(readonly config: Record<string, unknown>) {}
    loadedModelIdToPipeline = new Map<string, FakePipeline | { tokenizer: unknown; stopTokens?: number[] }>();
    loadedModelIdToChatConfig = new Map<string, unknown>();
    setAppConfig(appConfig: unknown) {
      log.push(`appConfig ${JSON.stringify(appConfig)}`);
    }
    setInitProgressCallback(cb: (r: { progress: number; timeElapsed: number; text: string }) => void) {
      this.progress = cb;
    }
    progress: ((r: { progress: number; timeElapsed: number; text: string }) => void) | null = null;
    setLogitProcessorRegistry() {}
    async reload(id: string, chatOpts: unknown) {
      log.push(`reload ${id} ${JSON.stringify(chatOpts ?? null)}`);
      if (options.pipeline) this.loadedModelIdToPipeline.set(id, options.pipeline);
      else if (options.tokenizer) this.loadedModelIdToPipeline.set(id, { tokenizer: options.tokenizer, stopTokens: options.stopTokens });
      if (options.chatConfig) this.loadedModelIdToChatConfig.set(id, options.chatConfig);
      this.progress?.({ progress: 1, timeElapsed: 1, text: "Finish loading on WebGPU - test" });
    }
    async unload() {
      log.push("unload");
    }
    interruptGenerate() {
      interrupt = true;
    }
    async resetChat() {
      log.push("resetChat");
    }
    async getMessage() {
      return message;
    }
    async *stream(api: "chat" | "completion", body: Record<string, unknown>): AsyncGenerator<WebLlmChunk> {
      calls.push({ api, body });
      interrupt = false; // web-llm clears the flag when it takes the model lock
      let prompt = options.promptTokens?.[round] ?? 10;
      round++;
      const pipeline = options.pipeline;
      if (pipeline) {
        // web-llm's prefill (the pipeline's flow), then its round-only count
        const filled = pipeline.filledKVCacheLength;
        await pipeline.request({ prompt: promptIds(body), reply: (options.tokens ?? ["A", "B"]).map((t) => t.charCodeAt(0)) });
        prompt = pipeline.filledKVCacheLength - filled;
      }
      if (options.throwName) {
        const error = new Error("boom");
        error.name = options.throwName;
        throw error;
      }
      let out = "";
      let finish = "stop";
      let n = 0;
      try {
        for (const token of options.tokens ?? ["A", "B"]) {
          if (interrupt) {
            finish = "abort";
            break;
          }
          if (n >= (body.max_tokens as number)) {
            finish = "length";
            break;
          }
          n++;
          out += token;
          yield api === "chat" ? { choices: [{ delta: { content: token }, finish_reason: null }] } : { choices: [{ text: token, finish_reason: null }] };
          await new Promise((r) => setTimeout(r, 1));
        }
        message = out;
        yield { choices: [{ delta: {}, finish_reason: finish }] };
        yield { choices: [], usage: { prompt_tokens: prompt, completion_tokens: n, extra: { prefill_tokens_per_s: 100, decode_tokens_per_s: 20 } } };
      } finally {
        log.push(`released ${api}`);
      }
    }
  }
  const prebuiltAppConfig = options.legacy ? { useIndexedDBCache: false, model_list: [] } : { cacheBackend: "cache", model_list: [] };
  const preparePrefillInput = options.legacy ? function () {} : function (this: { pipeline: { getFinishReason(): string } }) { return this.pipeline.getFinishReason(); };
  Object.assign(MLCEngine.prototype, { preparePrefillInput });
  const module = {
    MLCEngine,
    prebuiltAppConfig,
    modelVersion: options.legacy ? "v0_2_48" : "v0_2_86/base",
    ...(options.legacy ? {} : { TENSOR_CACHE_MANIFEST_FILENAME: "tensor-cache.json" }),
    ...(options.checkFields ? { postInitAndCheckFieldsChatCompletion: options.checkFields } : {}),
  } as unknown as WebLlmModule;
  return { module, calls, log };
}

const request = (over: Partial<EngineRequest> = {}): EngineRequest => ({
  model: record.model_id,
  messages: [{ role: "user", content: "Hi" }],
  sampling: { stop: [], max_tokens: 8 },
  thinking: { enabled: true },
  continueFinalMessage: false,
  ...over,
});

async function run(engine: ReturnType<typeof createWebLlmEngine>, req: EngineRequest, signal = new AbortController().signal): Promise<EngineEvent[]> {
  const events: EngineEvent[] = [];
  for await (const e of engine.generate(req, signal)) events.push(e);
  return events;
}

describe("the web-llm adapter around MLCEngine", () => {
  it("loads with an appConfig of just this record in web-llm's fields, the cache dialect of its version, and conv_config", async () => {
    for (const legacy of [false, true]) {
      const { module, log } = standIn({ legacy });
      const engine = createWebLlmEngine({ webllm: module });
      const progress: number[] = [];
      await engine.load(record, { convConfig: { roles: { tool: "x" } }, onProgress: (p) => progress.push(p.fraction) });
      expect(engine.loadedModel).toBe(record.model_id);
      const app = JSON.parse(log[0].slice("appConfig ".length));
      expect(app.model_list).toEqual([{ model: record.model, model_id: record.model_id, model_lib: record.model_lib }]);
      expect(legacy ? app.useIndexedDBCache : app.cacheBackend).toBe(legacy ? true : "indexeddb");
      expect(log[1]).toBe(`reload ${record.model_id} {"conv_config":{"roles":{"tool":"x"}}}`);
      expect(progress.at(-1)).toBe(1);
      expect(await engine.acceptsPrefetch()).toBe(!legacy);
    }
    expect(toWebLlmRecord(record)).not.toHaveProperty("family");
  });

  it("streams text deltas then one done with usage; without a reachable pipeline the counts are web-llm's, nothing cached", async () => {
    const { module } = standIn({ promptTokens: [10, 4] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    const first = await run(engine, request());
    expect(first.map((e) => (e.type === "text" ? e.text : e.finish))).toEqual(["A", "B", "stop"]);
    expect(first.at(-1)).toMatchObject({ usage: { promptTokens: 10, cachedTokens: 0, completionTokens: 2, prefillTokensPerS: 100, decodeTokensPerS: 20 } });
    const second = await run(engine, request({ messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "AB" }, { role: "user", content: "More" }] }));
    expect(second.at(-1)).toMatchObject({ usage: { promptTokens: 4, cachedTokens: 0 } });
  });

  it("prompt caching: each request prefills only what no cached sequence holds; cached and prompt tokens are read from the pipeline", async () => {
    const pipeline = new FakePipeline();
    const { module } = standIn({ pipeline });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, { promptCache: { enabled: true, budgetTokens: 1_000, maxSequences: 4 } });
    // the budget, one context window for the running reply, a page per sequence
    expect(pipeline.log[0], "the cache was re-created for the budget").toBe("create_kv_cache seqs=5 total=5176 chunk=8 page=16 sliding=0");
    const sys = { role: "system" as const, content: "You are terse." };
    const usageOf = async (messages: EngineRequest["messages"], promptCacheKey?: string) => {
      const events = await run(engine, request({ messages, promptCacheKey }));
      return (events.at(-1) as Extract<EngineEvent, { type: "done" }>).usage;
    };
    const a1 = [sys, { role: "user" as const, content: "Hi" }];
    const ids = (m: EngineRequest["messages"]) => promptIds({ messages: m }).length;
    expect(await usageOf(a1)).toMatchObject({ promptTokens: ids(a1), cachedTokens: 0 });
    // regenerate: the whole prompt is cached but its last token, which is prefilled again for the logits
    expect(await usageOf(a1)).toMatchObject({ promptTokens: ids(a1), cachedTokens: ids(a1) - 1 });
    // a new chat with the same system prompt: the system message and the user marker are cached
    const b1 = [sys, { role: "user" as const, content: "Yo" }];
    expect(await usageOf(b1)).toMatchObject({ cachedTokens: 1 + sys.content.length + 1 });
    // back to the first chat, continued: its prompt and its reply's tokens but the last ("A": web-llm never feeds "B")
    const a2 = [...a1, { role: "assistant" as const, content: "AB" }, { role: "user" as const, content: "More" }];
    expect(await usageOf(a2)).toMatchObject({ promptTokens: ids(a2), cachedTokens: ids(a1) + 1 });
  });

  it("abort: interruptGenerate between decode steps, done with finish abort, lock released", async () => {
    const { module, log } = standIn({ tokens: ["a", "b", "c", "d", "e"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    const controller = new AbortController();
    const events: EngineEvent[] = [];
    for await (const e of engine.generate(request(), controller.signal)) {
      events.push(e);
      if (e.type === "text") controller.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: "done", finish: "abort" });
    expect(events.filter((e) => e.type === "text").length).toBeLessThan(5);
    expect(log).toContain("released chat");
  });

  it("a consumer that stops early still releases web-llm's model lock (iterator return)", async () => {
    const { module, log } = standIn({ tokens: ["a", "b", "c"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    for await (const e of engine.generate(request(), new AbortController().signal)) if (e.type === "text") break;
    expect(log).toContain("released chat");
  });

  it("web-llm ≤0.2.79 does not reset the KV cache after length/abort: the adapter resets it before the next turn", async () => {
    const { module, log } = standIn({ legacy: true, tokens: ["a", "b", "c"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    await run(engine, request({ sampling: { stop: [], max_tokens: 1 } }));
    expect(log).not.toContain("resetChat");
    await run(engine, request());
    expect(log).toContain("resetChat");
  });

  it("≤0.2.79 counts decode steps only: the token sampled at prefill is added back; a NaN rate becomes 0", async () => {
    const { module } = standIn({ legacy: true, tokens: ["a"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    const events = await run(engine, request());
    // the stand-in reports 1 as 0.2.86 would; the legacy adapter adds the prefill token
    expect(events.at(-1)).toMatchObject({ usage: { completionTokens: 2 } });
  });

  it("a raw prompt (/completions) goes to web-llm's completion API as is: no template, no enable_thinking, sampling and logprobs as for chat", async () => {
    const { module, calls } = standIn({ tokens: ["A", "B"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    const events = await run(engine, request({ messages: [], rawPrompt: "Once upon a time", thinking: { enabled: false }, topLogprobs: 2, sampling: { stop: ["\n"], max_tokens: 5, temperature: 0.5, seed: 7 } }));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toEqual({
      api: "completion",
      body: { prompt: "Once upon a time", stream: true, stream_options: { include_usage: true }, max_tokens: 5, temperature: 0.5, seed: 7, stop: ["\n"], logprobs: true, top_logprobs: 2 },
    });
    expect(events.map((e) => (e.type === "text" ? e.text : e.finish))).toEqual(["A", "B", "stop"]);
  });

  it("a loaded model's stop tokens get a text in the token table web-llm builds for xgrammar (0.2.79 masks empty-text stop tokens wrongly)", async () => {
    const tokenizer = { idToToken: (id: number) => (id === 7 ? "" : `t${id}`), encode: () => [], decode: () => "" };
    const { module } = standIn({ tokenizer, stopTokens: [7] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    expect([6, 7].map((id) => tokenizer.idToToken(id))).toEqual(["t6", stopTokenText(7)]);
  });

  it("thinking off sends enable_thinking:false to Qwen3; a final assistant message goes to the completion API", async () => {
    const { module, calls } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    await run(engine, request({ thinking: { enabled: false } }));
    expect(calls[0]).toMatchObject({ api: "chat", body: { extra_body: { enable_thinking: false }, stream: true, stream_options: { include_usage: true } } });
    // the stand-in exposes no conversation template: the adapter says what to do instead
    await expect(run(engine, request({ continueFinalMessage: true, messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "He" }] }))).rejects.toMatchObject({ status: 400, param: "messages" });
  });

  it("continues a reply from its start (a resumed response): the conversation with that start as an open assistant message goes to the completion API, max_tokens less its tokens; usage counts the start as the reply's", async () => {
    const chatConfig = { conv_template: { system_template: "<s>{system_message}", system_message: "", roles: { user: "U", assistant: "A" }, seps: ["\n"], role_content_sep: ": " } };
    const tokenizer = { encode: (text: string) => Array.from(text, (c) => c.charCodeAt(0)), decode: () => "" };
    const { module, calls } = standIn({ chatConfig, tokenizer, promptTokens: [20], tokens: ["C", "D"] });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    expect(engine.continuesReply!(request())).toBe(true);
    // decoding state outside the text: a grammar's position, penalty counts, a reasoning budget partly spent
    expect(engine.continuesReply!(request({ sampling: { stop: [], max_tokens: 8, frequency_penalty: 0.5 } }))).toBe(false);
    expect(engine.continuesReply!(request({ responseFormat: { type: "json_object", schema: "{}" } }))).toBe(false);
    // a reasoning budget is handed on: what the start left of it, none once the reasoning closed
    const budget = (tokens: number, continueReply: string) => request({ continueReply, thinking: { enabled: true, budgetTokens: tokens, endMarker: "</think>" } });
    expect(engine.continuesReply!(budget(100, "AB"))).toBe(true);
    expect(engine.continuesReply!(budget(2, "AB"))).toBe(false);
    expect(engine.continuesReply!(budget(2, "A</think>B"))).toBe(true);
    const events = await run(engine, request({ continueReply: "AB" }));
    expect(calls[0]).toMatchObject({ api: "completion", body: { prompt: "<s>U: Hi\nA: AB", max_tokens: 6 } });
    expect(events.map((e) => (e.type === "text" ? e.text : e.finish))).toEqual(["C", "D", "stop"]);
    expect(events.at(-1)).toMatchObject({ usage: { promptTokens: 18, completionTokens: 4, continuedTokens: 2 } });
  });

  it("a web-llm that fetches for itself (≤ 0.2.79) says whether its own cache holds a model (what resuming a response checks: it never downloads)", async () => {
    const asked: unknown[] = [];
    const { module } = standIn({ legacy: true });
    const engine = createWebLlmEngine({ webllm: { ...module, hasModelInCache: async (id: string, appConfig: unknown) => (asked.push([id, appConfig]), id === record.model_id) } as unknown as WebLlmModule });
    expect(await engine.acceptsPrefetch()).toBe(false);
    expect(await engine.holdsModel!(record, "indexeddb")).toBe(true);
    expect(asked[0]).toMatchObject([record.model_id, { model_list: [{ model_id: record.model_id, model: record.model }], useIndexedDBCache: true }]);
    expect(await engine.holdsModel!({ ...record, model_id: "Other-MLC" }, "cache")).toBe(false);
    expect(asked[1]).toMatchObject([expect.any(String), { useIndexedDBCache: false }]);
    // without the function (a stand-in of another version): not known to be held
    expect(await createWebLlmEngine({ webllm: module }).holdsModel!(record)).toBe(false);
  });

  it("tool_choice on 0.2.79 (no structural tags, ignored silently): the same constraint goes as an EBNF grammar that 0.2.79's xgrammar enforces", async () => {
    const weather = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string", enum: ["Paris", "Lyon"] } }, required: ["city"] } } };
    const context = (toolChoice: "required" | "auto") => ({ tools: [weather], toolChoice, parallelToolCalls: true, thinking: false, rawAssistantText: () => undefined });
    const forced = FAMILIES["qwen2.5"].toolGrammar(context("required"));
    const { module, calls } = standIn({ legacy: true, checkFields: webllm079.postInitAndCheckFieldsChatCompletion });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    await run(engine, request({ responseFormat: forced }));
    const format = calls[0].body.response_format as { type: string; grammar: string };
    expect(format.type).toBe("grammar");
    const accepts = await compileEbnf079(format.grammar);
    expect(await accepts('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')).toBe(true);
    expect(await accepts('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>')).toBe(false);
    expect(await accepts('<tool_call>\n{"name": "delete_all", "arguments": {"city": "Paris"}}\n</tool_call>')).toBe(false);
    expect(await accepts("Sure, it is sunny.")).toBe(false);
    // auto has no EBNF form: no response_format, the request runs unconstrained.
    await run(engine, request({ responseFormat: FAMILIES["qwen2.5"].toolGrammar(context("auto")) }));
    expect(calls[1].body.response_format).toBeUndefined();
    // 0.2.86 enforces structural tags: they go as they are.
    const current = standIn({ checkFields: webllm086.postInitAndCheckFieldsChatCompletion });
    const engine086 = createWebLlmEngine({ webllm: current.module });
    await engine086.load(record, {});
    await run(engine086, request({ responseFormat: forced }));
    expect(current.calls[0].body.response_format).toMatchObject({ type: "structural_tag" });
  });

  it("errors are mapped by name; a lost device forgets the loaded model so the host reloads it", async () => {
    const { module } = standIn({ throwName: "ModelNotLoadedError" });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(record, {});
    await expect(run(engine, request())).rejects.toMatchObject({ status: 503, code: "device_lost" });
    expect(engine.loadedModel).toBeNull();
    const tooLong = standIn({ throwName: "ContextWindowSizeExceededError" });
    const engine2 = createWebLlmEngine({ webllm: tooLong.module });
    await engine2.load(record, {});
    await expect(run(engine2, request())).rejects.toMatchObject({ status: 400, code: "context_length_exceeded" });
  });
});

describe("the web-llm adapter under EngineHost", () => {
  it("createClient's promptCache reaches the pipeline: a regenerate prefills one token, with prompt caching off all of it", async () => {
    const { EngineHost } = await import("../../src/host/engine-host.js");
    const gpu = { available: true, info: { vendor: "t", architecture: "t", device: "", description: "", features: [], limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } };
    const qwen: ModelRecord = { model: "http://127.0.0.1/q/", model_id: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", model_lib: "http://127.0.0.1/q.wasm", overrides: { context_window_size: 4096 } };
    for (const [promptCache, cachedOnRegenerate] of [[{ budgetTokens: 4096, maxSequences: 8 }, true], [false, false]] as const) {
      for (const legacy of [true]) {
        const pipeline = new FakePipeline();
        const { module } = standIn({ legacy, pipeline });
        const host = new EngineHost({ engine: createWebLlmEngine({ webllm: module }), models: [qwen], probeGpu: async () => gpu as never, promptCache });
        const body = { model: qwen.model_id, messages: [{ role: "system" as const, content: "Be brief." }, { role: "user" as const, content: "Hi" }], max_tokens: 2, temperature: 0 };
        const first = (await host.createChatCompletion(body)) as { usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } } };
        const again = (await host.createChatCompletion(body)) as typeof first;
        expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
        expect(again.usage.prompt_tokens_details.cached_tokens, `legacy ${legacy}, promptCache ${JSON.stringify(promptCache)}`).toBe(cachedOnRegenerate ? first.usage.prompt_tokens - 1 : 0);
      }
    }
  });
});
