/** The pipeline through the default module worker, in real Chromium (WebGPU on SwiftShader). */
import { describe, expect, it } from "vitest";
import { createClient, ApiError, type ChatCompletionChunk } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
const base = { model: "Qwen/Qwen3-0.6B", messages: [{ role: "user" as const, content: "hi" }] };

describe("through the worker", () => {
  it("streams chunks from a scripted engine inside the worker, usage included", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: ["One two three.", "Four."] }) });
    const stream = await client.chat.completions.create({ ...base, stream: true, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("One two three.");
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(4);
    const completion = await client.chat.completions.create(base);
    expect(completion.choices[0].message.content).toBe("Four.");
    client.terminate();
  });

  it("client.stats() counts the worker's engine: zeros at first, then one pass per token (speculation off)", async () => {
    // An engine that decodes one at a time (batch: false): the host counts each generation's own passes.
    const client = createClient({ engine: createScriptedEngine({ replies: [words(40), "One two three."], batch: false }), speculative: false });
    expect((await client.workerInfo()).worker).not.toBe("none");
    expect(await client.stats()).toEqual({
      forward_passes: 0,
      generated_tokens: 0,
      prefill_tokens: 0,
      mean_rows: 0,
      max_rows: 0,
      batching: { available: false, model: null, row_cap: 1, reason: "scripted engine without the batch option" },
    });
    const cut = await client.chat.completions.create({ ...base, max_tokens: 20 });
    const whole = await client.chat.completions.create(base);
    expect(cut.usage.completion_tokens).toBe(20);
    const stats = await client.stats();
    // The cut reply: one pass per token; the one that ends by itself: one more, for its end-of-text token.
    expect(stats).toMatchObject({ forward_passes: 20 + whole.usage.completion_tokens + 1, generated_tokens: 20 + whole.usage.completion_tokens + 1, mean_rows: 1, max_rows: 1 });
    expect(stats.prefill_tokens).toBe(cut.x_webgpu.prefill_tokens + whole.x_webgpu.prefill_tokens);
    expect(stats.batching).toMatchObject({ available: false, row_cap: 1 });
    expect(stats.batching.model).toMatch(/^Qwen3-0\.6B-/);
    client.terminate();
  });

  it("keeps error fields across the worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [] }) });
    const invalid = await client.chat.completions.create({ ...base, temperature: 9 }).catch((e) => e);
    expect(invalid).toBeInstanceOf(ApiError);
    expect(invalid).toMatchObject({ status: 400, param: "temperature", type: "invalid_request_error", code: "invalid_value" });
    const missing = await client.chat.completions.create({ ...base, model: "no-such-model" }).catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
    client.terminate();
  });

  it("aborts across the worker: a running stream stops, a queued request never starts", async () => {
    // One at a time (batch: false), so the second request is queued behind the first.
    const client = createClient({ engine: createScriptedEngine({ replies: [words(2000), words(2000), "after"], tokenDelayMs: 1, batch: false }) });
    const stream = await client.chat.completions.create({ ...base, stream: true });
    const queuedController = new AbortController();
    const queued = client.chat.completions.create(base, { signal: queuedController.signal });
    queuedController.abort();
    await expect(queued).rejects.toMatchObject({ name: "AbortError" });
    let n = 0;
    for await (const _chunk of stream) if (++n === 3) stream.controller.abort();
    expect(n).toBeLessThan(100);
    const controller = new AbortController();
    const running = client.chat.completions.create(base, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    await expect(running).rejects.toMatchObject({ name: "AbortError" });
    const after = await client.chat.completions.create(base);
    expect(after.choices[0].message.content).toBe("after");
    expect(await client.queueState()).toEqual({ waiting: 0, running: false });
    client.terminate();
  });

  it("a terminated worker fails the open stream with 503; the next request gets a fresh worker", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [words(5000)], tokenDelayMs: 2 }) });
    const stream = await client.chat.completions.create({ ...base, stream: true });
    let n = 0;
    const error = await (async () => {
      try {
        for await (const _chunk of stream) if (++n === 2) client.terminate();
      } catch (e) {
        return e;
      }
    })();
    expect(error).toMatchObject({ status: 503, code: "worker_lost" });
    // The fresh worker is configured from the same options, so its scripted replies start over.
    const again = await client.chat.completions.create({ ...base, max_tokens: 2 });
    expect(again.choices[0].message.content).toBe("w0 w1");
    client.terminate();
  });

  it("probes the SwiftShader adapter, and its lack of shader-f16 picks q4f32_1", async () => {
    const client = createClient({ engine: createScriptedEngine({ replies: [] }) });
    const gpu = await client.gpu.info();
    expect(gpu.available).toBe(true);
    if (!gpu.available) return;
    expect(gpu.info.architecture).toBe("swiftshader");
    expect(gpu.info.features).not.toContain("shader-f16");
    expect(gpu.info.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    expect(gpu.info.limits.maxBufferSize).toBeGreaterThan(0);
    const model = await client.models.retrieve("Qwen/Qwen3-0.6B");
    expect(model.quantization).toBe("q4f32_1");
    client.terminate();
  });
});
