/**
 * The two host questions the Prompt API asks (host/prompt-support.ts):
 * `client.tokens.count` (the prompt tokens of a chat request in its model,
 * nothing generated) and `client.models.status` (available / downloadable /
 * unavailable, from the GPU probe, the model's fit and the weight cache).
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { EngineHost } from "../../src/host/engine-host.js";
import type { GpuProbe } from "../../src/gpu/probe.js";
import type { Engine, EngineRequest } from "../../src/engine/types.js";
import { countWebLlmPromptTokens, GENERATION_HEADER_TOKENS, TEMPLATE_TOKENS_PER_MESSAGE } from "../../src/engine/webllm/webllm-count.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

const adapter = (features: string[], maxStorageBufferBindingSize = 2 ** 30): GpuProbe => ({
  available: true,
  info: { vendor: "v", architecture: "a", device: "", description: "", features, limits: { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize, maxComputeWorkgroupStorageSize: 32768, maxComputeInvocationsPerWorkgroup: 256 }, isFallbackAdapter: false },
});

/** A scripted engine that says it runs on the GPU, as web-llm does. */
function gpuEngine(): Engine {
  const engine = createScriptedEngine({ replies: [] });
  return Object.assign(Object.create(engine) as Engine, { requiresGpu: true as const, load: engine.load, generate: engine.generate, unload: engine.unload, countTokens: engine.countTokens });
}

describe("client.tokens.count", () => {
  it("counts the prompt as the engine renders it (tools included), generating nothing", async () => {
    const engine = createScriptedEngine({ replies: ["unused"] });
    const client = createClient({ worker: false, engine });
    const messages = [{ role: "system" as const, content: "Be brief." }, { role: "user" as const, content: "How many tokens is this?" }];
    const counted = await client.tokens.count({ model: MODEL, messages });
    expect(counted).toEqual({ object: "tokens.count", model: MODEL, input_tokens: expect.any(Number) });
    expect(engine.requests).toHaveLength(0);
    const withTools = await client.tokens.count({ model: MODEL, messages, tools: [{ type: "function", function: { name: "lookup", description: "Look a word up in the dictionary.", parameters: { type: "object" } } }] });
    expect(withTools.input_tokens).toBeGreaterThan(counted.input_tokens);
    // The count is the prompt the engine then really gets.
    const completion = await client.chat.completions.create({ model: MODEL, messages });
    expect(completion.usage.prompt_tokens).toBe(counted.input_tokens);
  });

  it("refuses what the chat endpoint refuses (400)", async () => {
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }) });
    await expect(client.tokens.count({ model: MODEL, messages: [] })).rejects.toMatchObject({ status: 400 });
  });
});

describe("client.models.status", () => {
  it("an engine that needs no GPU: available", async () => {
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }) });
    expect(await client.models.status(MODEL)).toEqual({ id: MODEL, status: "available" });
  });

  it("a GPU engine: unavailable without WebGPU or when the model does not fit, downloadable when it fits but is not cached", async () => {
    const noGpu = new EngineHost({ engine: gpuEngine(), probeGpu: async () => ({ available: false, reason: "WebGPU is not available in this browser." }) });
    expect(await noGpu.modelStatus(MODEL)).toEqual({ id: MODEL, status: "unavailable", reason: "WebGPU is not available in this browser." });

    const noF16 = new EngineHost({ engine: gpuEngine(), probeGpu: async () => adapter([]) });
    expect(await noF16.modelStatus(MODEL)).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/shader-f16/) });

    const fits = new EngineHost({ engine: gpuEngine(), probeGpu: async () => adapter(["shader-f16"]) });
    expect(await fits.modelStatus(MODEL)).toEqual({ id: MODEL, status: "downloadable" });
    expect(await fits.modelStatus("no-such-model")).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/no-such-model/) });
  });

  it("a GPU engine that fetches into its own cache (web-llm ≤ 0.2.79): available when that cache holds the model, which only the engine can tell", async () => {
    const selfFetching = (holds: boolean): Engine => Object.assign(gpuEngine(), { acceptsPrefetch: async () => false, holdsModel: async () => holds });
    expect(await new EngineHost({ engine: selfFetching(true), probeGpu: async () => adapter(["shader-f16"]) }).modelStatus(MODEL)).toEqual({ id: MODEL, status: "available" });
    expect(await new EngineHost({ engine: selfFetching(false), probeGpu: async () => adapter(["shader-f16"]) }).modelStatus(MODEL)).toEqual({ id: MODEL, status: "downloadable" });
  });
});

describe("web-llm's count", () => {
  it("is the model tokenizer's count of every text plus the template's markup per message and the generation header", () => {
    const tokenizer = { encode: (text: string) => text.split(" ").map((word) => word.length) };
    const request = { model: MODEL, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "one two three" }], continueFinalMessage: false } as EngineRequest;
    expect(countWebLlmPromptTokens(tokenizer, request)).toBe(2 + 3 + 2 * TEMPLATE_TOKENS_PER_MESSAGE + GENERATION_HEADER_TOKENS);
    expect(countWebLlmPromptTokens(tokenizer, { ...request, continueFinalMessage: true })).toBe(2 + 3 + 2 * TEMPLATE_TOKENS_PER_MESSAGE);
  });
});
