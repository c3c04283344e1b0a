/** Model names: catalog ids, aliases, the vendor prefix, and the f16/f32 variant choice. */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { EngineHost } from "../../src/testing.js";
import { aliasOf } from "../../src/models/catalog.js";
import type { GpuProbe } from "../../src/gpu/probe.js";

const adapter = (features: string[]): GpuProbe => ({
  available: true,
  info: {
    vendor: "test",
    architecture: "test",
    device: "",
    description: "",
    features,
    limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 30, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 },
    isFallbackAdapter: false,
  },
});

async function resolvedId(model: string, features: string[] = []): Promise<string> {
  const engine = createScriptedEngine({ replies: () => "ok" });
  const host = new EngineHost({ engine, probeGpu: async () => adapter(features) });
  await host.createChatCompletion({ model, messages: [{ role: "user", content: "hi" }] });
  return engine.requests[0].model;
}

describe("model names", () => {
  it("an alias picks q4f16_1 when the adapter has shader-f16, else q4f32_1", async () => {
    expect(await resolvedId("Qwen3-0.6B", ["shader-f16"])).toBe("Qwen3-0.6B-q4f16_1-MLC");
    expect(await resolvedId("Qwen3-0.6B", [])).toBe("Qwen3-0.6B-q4f32_1-MLC");
  });

  it("a leading vendor/ segment is ignored, case too", async () => {
    expect(await resolvedId("Qwen/Qwen3-0.6B")).toBe("Qwen3-0.6B-q4f32_1-MLC");
    expect(await resolvedId("meta-llama/llama-3.2-1b-instruct")).toBe("Llama-3.2-1B-Instruct-q4f32_1-MLC");
  });

  it("an exact catalog id is used as is", async () => {
    expect(await resolvedId("Qwen3-0.6B-q4f16_1-MLC")).toBe("Qwen3-0.6B-q4f16_1-MLC");
  });

  it("the response echoes the model as sent", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: ["ok"] }), worker: false });
    const completion = await client.chat.completions.create({ model: "Qwen/Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] });
    expect(completion.model).toBe("Qwen/Qwen3-0.6B");
  });

  it("aliases drop the quantization and MLC suffix only", () => {
    expect(aliasOf("Qwen3-0.6B-q4f16_1-MLC")).toBe("Qwen3-0.6B");
    expect(aliasOf("Llama-3.1-8B-Instruct-q4f32_1-MLC-1k")).toBe("Llama-3.1-8B-Instruct-1k");
  });

  it("models.list() is an OpenAI list with local extras; embedding models are listed, marked as such", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [] }), worker: false });
    const list = await client.models.list();
    expect(list.object).toBe("list");
    expect(list.data.length).toBeGreaterThan(100);
    const qwen = list.data.find((m) => m.id === "Qwen3-0.6B-q4f16_1-MLC");
    expect(qwen).toMatchObject({ object: "model", owned_by: "webgpu-openai", context_window: 4096, quantization: "q4f16_1" });
    expect(qwen).toMatchObject({ type: "chat", capabilities: { embeddings: false } });
    const embedders = list.data.filter((m) => m.id.startsWith("snowflake-arctic-embed"));
    expect(embedders).toHaveLength(4);
    expect(embedders.every((m) => m.type === "embedding" && m.capabilities.embeddings)).toBe(true);
    expect(await client.models.retrieve("Qwen/Qwen3-0.6B")).toMatchObject({ id: "Qwen/Qwen3-0.6B", object: "model" });
  });

  it("app records add models and replace prebuilt ones with the same id", async () => {
    const engine = createScriptedEngine({ replies: () => "ok" });
    const client = createClient({
      engine,
      worker: false,
      models: [{ model: "http://127.0.0.1:9/my-model/", model_id: "My-Model-q4f32_1-MLC", model_lib: "http://127.0.0.1:9/lib.wasm", overrides: { context_window_size: 1024 } }],
    });
    await client.chat.completions.create({ model: "my-model", messages: [{ role: "user", content: "hi" }] });
    expect(engine.requests[0].model).toBe("My-Model-q4f32_1-MLC");
    expect(engine.requests[0].sampling.max_tokens).toBe(1024);
  });

  it("a model load is reported as progress, and loading happens once", async () => {
    const engine = createScriptedEngine({ replies: () => "ok" });
    const progress: number[] = [];
    const client = createClient({ engine, worker: false });
    await client.models.load("Qwen3-0.6B", { onProgress: (p) => progress.push(p.fraction) });
    await client.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }] });
    expect(progress.at(-1)).toBe(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(engine.loads).toEqual(["Qwen3-0.6B-q4f32_1-MLC"]);
  });
});
