/**
 * The web-llm adapter's embeddings, with a stand-in MLCEngine that keeps
 * several models the way web-llm 0.2.86 does (reference/webllm-0.2.86.md,
 * bundle L18173–18330, L18861–18990): `reload(id | ids)` unloads everything
 * then loads each; `reloadInternal(id)` loads one more; `embeddings.create`
 * needs a loaded embedding model; with two models loaded a request must name
 * its model. The real engine runs in the smoke test (another branch).
 */
import { describe, expect, it } from "vitest";
import { createWebLlmEngine, type WebLlmChunk, type WebLlmModule } from "../../src/engine/webllm/webllm-engine.js";
import { EngineHost } from "../../src/host/engine-host.js";
import type { ModelRecord } from "../../src/models/record.js";
import type { GpuProbe } from "../../src/gpu/probe.js";

const chat: ModelRecord = { model: "http://127.0.0.1/q/", model_id: "Qwen3-0.6B-q4f32_1-MLC", model_lib: "http://127.0.0.1/q.wasm", family: "qwen3" };
const chat2: ModelRecord = { model: "http://127.0.0.1/s/", model_id: "SmolLM2-360M-Instruct-q4f32_1-MLC", model_lib: "http://127.0.0.1/s.wasm" };
const embed: ModelRecord = { model: "http://127.0.0.1/e/", model_id: "snowflake-arctic-embed-s-q0f32-MLC-b4", model_lib: "http://127.0.0.1/snowflake-arctic-embed-s-q0f32-ctx512_cs512_batch4-webgpu.wasm", model_type: 1 };

function standIn(options: { noReloadInternal?: boolean; legacy?: boolean } = {}) {
  const log: string[] = [];
  const pipelines = new Map<string, { tokenizer: { encode(t: string): number[] }; contextWindowSize?: number }>();
  let types = new Map<string, number>();
  class MLCEngine {
    loadedModelIdToPipeline = pipelines;
    appConfig: { model_list: Array<{ model_id: string; model_type?: number }> } = { model_list: [] };
    chat = { completions: { create: async (body: Record<string, unknown>) => this.stream(body) } };
    completions = { create: async (body: Record<string, unknown>) => this.stream(body) };
    embeddings = {
      create: async (body: { model?: string; input: Array<string | number[]> }) => {
        log.push(`embed ${body.model} ${body.input.length}`);
        const id = this.pick(body.model);
        if (types.get(id) !== 1) throw Object.assign(new Error(`${id} is not an embedding model`), { name: "IncorrectPipelineLoadedError" });
        // Shuffled on purpose: the adapter orders by index.
        const data = body.input.map((text, index) => ({ index, object: "embedding", embedding: [index, String(text).length, 0] })).reverse();
        return { object: "list", model: id, data, usage: { prompt_tokens: body.input.length * 3, total_tokens: body.input.length * 3 } };
      },
    };
    constructor(readonly config: Record<string, unknown>) {}
    setAppConfig(appConfig: typeof this.appConfig) {
      this.appConfig = appConfig;
      log.push(`appConfig ${appConfig.model_list.map((r) => r.model_id).join(",")}`);
    }
    setInitProgressCallback() {}
    setLogitProcessorRegistry() {}
    async reload(ids: string | string[]) {
      await this.unloadQuietly();
      const list = Array.isArray(ids) ? ids : [ids];
      log.push(`reload ${list.join(",")}`);
      for (const id of list) this.add(id);
    }
    add(id: string) {
      const record = this.appConfig.model_list.find((r) => r.model_id === id);
      if (!record) throw Object.assign(new Error(`no record ${id}`), { name: "ModelNotFoundError" });
      types.set(id, record.model_type ?? 0);
      pipelines.set(id, { tokenizer: { encode: (t: string) => t.split(/\s+/).map((_, i) => i) }, ...(record.model_type === 1 ? { contextWindowSize: 512 } : {}) });
    }
    async unloadQuietly() {
      pipelines.clear();
      types = new Map();
    }
    async unload() {
      log.push("unload");
      await this.unloadQuietly();
    }
    interruptGenerate() {}
    async resetChat() {}
    async getMessage() {
      return "ok";
    }
    pick(model: unknown): string {
      const loaded = [...pipelines.keys()];
      if (typeof model === "string") {
        if (!loaded.includes(model)) throw Object.assign(new Error(`${model} not loaded`), { name: "SpecifiedModelNotFoundError" });
        return model;
      }
      if (loaded.length !== 1) throw Object.assign(new Error(`unclear model among ${loaded}`), { name: "UnclearModelToUseError" });
      return loaded[0];
    }
    async *stream(body: Record<string, unknown>): AsyncGenerator<WebLlmChunk> {
      const id = this.pick(body.model);
      log.push(`chat ${id}`);
      yield { choices: [{ delta: { content: "ok" }, finish_reason: null }] };
      yield { choices: [{ delta: {}, finish_reason: "stop" }] };
      yield { choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } };
    }
  }
  if (!options.noReloadInternal) {
    Object.assign(MLCEngine.prototype, {
      async reloadInternal(this: MLCEngine, id: string) {
        log.push(`reloadInternal ${id}`);
        this.add(id);
      },
    });
  }
  Object.assign(MLCEngine.prototype, { preparePrefillInput: function (this: { pipeline: { getFinishReason(): string } }) { return this.pipeline.getFinishReason(); } });
  const module = {
    MLCEngine,
    prebuiltAppConfig: options.legacy ? { useIndexedDBCache: false, model_list: [] } : { cacheBackend: "cache", model_list: [] },
    modelVersion: options.legacy ? "v0_2_48" : "v0_2_86/base",
    ...(options.legacy ? {} : { TENSOR_CACHE_MANIFEST_FILENAME: "tensor-cache.json" }),
  } as unknown as WebLlmModule;
  return { module, log, pipelines };
}

const loads = (log: string[]) => log.filter((l) => /^(reload|reloadInternal|unload)\b/.test(l));
const chatRequest = (model = chat.model_id) => ({ model, messages: [{ role: "user" as const, content: "Hi" }], sampling: { stop: [], max_tokens: 8 }, thinking: { enabled: false }, continueFinalMessage: false });

async function drain(iterable: AsyncIterable<unknown>) {
  for await (const _ of iterable) void _;
}

describe("web-llm adapter: an embedding model next to the chat model", () => {
  it("adds the embedding model without unloading the chat model; interleaved requests never reload", async () => {
    const { module, log } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(chat, {});
    await engine.load(embed, {});
    expect(engine.loadedModel).toBe(chat.model_id);
    expect(engine.loadedEmbeddingModel).toBe(embed.model_id);
    expect(log).toContain(`appConfig ${chat.model_id},${embed.model_id}`);
    for (let i = 0; i < 3; i++) {
      await drain(engine.generate(chatRequest(), new AbortController().signal));
      const result = await engine.embed!({ model: embed.model_id, input: ["a b", "c"], firstIndex: 0 }, new AbortController().signal);
      expect(result).toEqual({ embeddings: [[0, 3, 0], [1, 1, 0]], promptTokens: 6 });
      await engine.load(chat, {});
      await engine.load(embed, {});
    }
    expect(loads(log)).toEqual([`reload ${chat.model_id}`, `reloadInternal ${embed.model_id}`]);
    // With two models resident, chat requests name theirs.
    expect(log.filter((l) => l.startsWith("chat "))).toEqual(Array(3).fill(`chat ${chat.model_id}`));
  });

  it("embedding first, then chat: the chat model is added", async () => {
    const { module, log } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(embed, {});
    await engine.load(chat, {});
    expect(loads(log)).toEqual([`reload ${embed.model_id}`, `reloadInternal ${chat.model_id}`]);
    await drain(engine.generate(chatRequest(), new AbortController().signal));
    expect((await engine.embed!({ model: embed.model_id, input: ["x"], firstIndex: 0 }, new AbortController().signal)).embeddings).toHaveLength(1);
  });

  it("switching the chat model reloads both (web-llm's reload drops every model); the embedding model stays usable", async () => {
    const { module, log } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(chat, {});
    await engine.load(embed, {});
    await engine.load(chat2, {});
    expect(loads(log).at(-1)).toBe(`reload ${chat2.model_id},${embed.model_id}`);
    expect(engine.loadedEmbeddingModel).toBe(embed.model_id);
    await drain(engine.generate(chatRequest(chat2.model_id), new AbortController().signal));
    expect((await engine.embed!({ model: embed.model_id, input: ["x"], firstIndex: 0 }, new AbortController().signal)).embeddings).toHaveLength(1);
  });

  it("a web-llm without reloadInternal gets reload([chat, embedding])", async () => {
    const { module, log } = standIn({ noReloadInternal: true });
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(chat, {});
    await engine.load(embed, {});
    expect(loads(log)).toEqual([`reload ${chat.model_id}`, `reload ${chat.model_id},${embed.model_id}`]);
    expect(engine.loadedModel).toBe(chat.model_id);
  });

  it("an input longer than the window is refused naming its request-wide index, before web-llm runs", async () => {
    const { module, log } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(embed, {});
    const long = Array.from({ length: 513 }, () => "w").join(" ");
    await expect(engine.embed!({ model: embed.model_id, input: ["ok", long], firstIndex: 8 }, new AbortController().signal)).rejects.toMatchObject({ status: 400, param: "input[9]", code: "context_length_exceeded" });
    expect(log.some((l) => l.startsWith("embed "))).toBe(false);
  });

  it("a tokenizer that truncates at the window (tokenizer.json truncation) cannot hide a long input; an input exactly window-long passes", async () => {
    const { module, log, pipelines } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(embed, {});
    const words = (n: number) => Array.from({ length: n }, () => "w").join(" ");
    pipelines.get(embed.model_id)!.tokenizer.encode = (t: string) => t.split(/\s+/).slice(0, 512).map((_, i) => i);
    await expect(engine.embed!({ model: embed.model_id, input: [words(900)], firstIndex: 0 }, new AbortController().signal)).rejects.toMatchObject({ status: 400, param: "input[0]", message: expect.stringContaining("longer than 512 tokens") });
    expect(log.some((l) => l.startsWith("embed "))).toBe(false);
    const exact = await engine.embed!({ model: embed.model_id, input: [words(511), words(512)], firstIndex: 0 }, new AbortController().signal);
    expect(exact.embeddings).toHaveLength(2);
  });

  it("abort before the batch: AbortError and web-llm is not called; token ids pass through", async () => {
    const { module, log } = standIn();
    const engine = createWebLlmEngine({ webllm: module });
    await engine.load(embed, {});
    const controller = new AbortController();
    controller.abort();
    await expect(engine.embed!({ model: embed.model_id, input: ["x"], firstIndex: 0 }, controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    expect(log.some((l) => l.startsWith("embed "))).toBe(false);
    expect(engine.embedsTokenIds).toBe(true);
    const result = await engine.embed!({ model: embed.model_id, input: [[1, 2, 3]], firstIndex: 0 }, new AbortController().signal);
    expect(result.embeddings).toHaveLength(1);
  });

  it("through EngineHost: when both do not fit in the device's memory, each load unloads the other kind (and says nothing when they fit)", async () => {
    const gpu: GpuProbe = { available: true, info: { vendor: "t", architecture: "t", device: "", description: "", features: [], limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } };
    const bigChat = { ...chat, vram_required_MB: 1400 };
    const smallEmbed = { ...embed, vram_required_MB: 240 };
    for (const [memoryGb, expected] of [
      [2, [`reload ${chat.model_id}`, `reload ${embed.model_id}`, `reload ${chat.model_id}`, `reload ${embed.model_id}`]],
      [4, [`reload ${chat.model_id}`, `reloadInternal ${embed.model_id}`]],
    ] as const) {
      const { module, log } = standIn({ legacy: true });
      const engine = createWebLlmEngine({ webllm: module });
      const host = new EngineHost({ engine, models: [bigChat, smallEmbed], probeGpu: async () => gpu, deviceMemoryGb: memoryGb });
      for (let i = 0; i < 2; i++) {
        await host.createChatCompletion({ model: chat.model_id, messages: [{ role: "user", content: "Hi" }] });
        await host.createEmbeddings({ model: embed.model_id, input: "x" });
      }
      expect(loads(log).filter((l) => l !== "unload")).toEqual(expected);
    }
  });

  it("through EngineHost: every input is counted with the model's tokenizer before the first batch, so a failing request runs no batch", async () => {
    const { module, log, pipelines } = standIn({ legacy: true });
    const engine = createWebLlmEngine({ webllm: module });
    const gpu: GpuProbe = { available: true, info: { vendor: "t", architecture: "t", device: "", description: "", features: [], limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } };
    const host = new EngineHost({ engine, models: [chat, embed], probeGpu: async () => gpu });
    const words = (n: number) => Array.from({ length: n }, () => "w").join(" ");
    // b4: the over-window input is in the second batch.
    await expect(host.createEmbeddings({ model: embed.model_id, input: ["a", "b", "c", "d", "e", words(513)] })).rejects.toMatchObject({ status: 400, param: "input[5]", code: "context_length_exceeded" });
    expect(log.filter((l) => l.startsWith("embed "))).toEqual([]);
    // A tokenizer that truncates at the window: the cut input is found up front as well.
    pipelines.get(embed.model_id)!.tokenizer.encode = (t: string) => t.split(/\s+/).slice(0, 512).map((_, i) => i);
    await expect(host.createEmbeddings({ model: embed.model_id, input: ["a", "b", "c", "d", words(900)] })).rejects.toMatchObject({ status: 400, param: "input[4]", message: expect.stringContaining("longer than 512 tokens") });
    expect(log.filter((l) => l.startsWith("embed "))).toEqual([]);
    // Counted once, up front: the batches do not tokenize their inputs again.
    const encoded: string[] = [];
    pipelines.get(embed.model_id)!.tokenizer.encode = (t: string) => (encoded.push(t), t.split(/\s+/).map((_, i) => i));
    await host.createEmbeddings({ model: embed.model_id, input: ["a", "b", "c", "d", "e"] });
    expect(log.filter((l) => l.startsWith("embed "))).toEqual([`embed ${embed.model_id} 4`, `embed ${embed.model_id} 1`]);
    expect(encoded).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("through EngineHost: batches of the compiled size (b4), in order, one load per model", async () => {
    const { module, log } = standIn({ legacy: true }); // legacy: web-llm fetches for itself, so no downloader in Node
    const engine = createWebLlmEngine({ webllm: module });
    const gpu: GpuProbe = { available: true, info: { vendor: "t", architecture: "t", device: "", description: "", features: [], limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false } };
    const host = new EngineHost({ engine, models: [chat, embed], probeGpu: async () => gpu });
    const input = Array.from({ length: 10 }, (_, i) => "x".repeat(i + 1));
    const response = await host.createEmbeddings({ model: "snowflake-arctic-embed-s", input });
    expect(log.filter((l) => l.startsWith("embed "))).toEqual([`embed ${embed.model_id} 4`, `embed ${embed.model_id} 4`, `embed ${embed.model_id} 2`]);
    expect(response.data.map((d) => (d.embedding as number[])[1])).toEqual(input.map((t) => t.length));
    expect(response.usage).toEqual({ prompt_tokens: 30, total_tokens: 30 });
    await host.createChatCompletion({ model: chat.model_id, messages: [{ role: "user", content: "Hi" }] });
    await host.createEmbeddings({ model: "snowflake-arctic-embed-s", input: "again" });
    expect(loads(log)).toEqual([`reload ${embed.model_id}`, `reloadInternal ${chat.model_id}`]);
  });
});
