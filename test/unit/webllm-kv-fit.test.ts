/**
 * Sizing continuous batching's rows to the model and the device when the
 * client left `batching` unset (webllm-kv-fit.ts): the library's compiled
 * batch limit, and a check that allocates the KV cache's bytes in our own
 * error scopes before tvmjs does (tvmjs destroys the device on an allocation
 * error of its own).
 */
import { describe, expect, it } from "vitest";
import { canAllocate, fitRows, libraryMaxBatch, type KvFitPipeline } from "../../src/engine/webllm/batching/webllm-kv-fit.js";
import { FakeGpuMemory } from "./support/fake-gpu-memory.js";

/** A pipeline whose library reports `metadata` (null: a library without `_metadata`), 64 KV bytes per token over 2 layers. */
function pipelineWith(metadata: Record<string, unknown> | null, device?: FakeGpuMemory): KvFitPipeline {
  let scopes = 0;
  return {
    tvm: {
      beginScope: () => void scopes++,
      endScope: () => void scopes--,
      detachFromCurrentScope: <T>(value: T) => value,
      lib: { webGPUContext: { device } },
    },
    vm: {
      getFunction: (name: string) => {
        if (scopes === 0) throw new Error("Must call beginScope");
        if (name !== "_metadata" || metadata === null) throw new Error(`no ${name}`);
        return () => ({ toString: () => JSON.stringify(metadata) });
      },
    },
    config: { quantization: "q4f32_1", model_config: { num_hidden_layers: 2, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 4 } },
    contextWindowSize: 4096,
  };
}

const tokensFor = (settings: { maxRows: number }) => 4096 + settings.maxRows * 2048;

describe("sizing the default rows to the model and the device", () => {
  it("the library's compiled batch limit caps the rows before any memory is asked for", async () => {
    expect(libraryMaxBatch(pipelineWith({ max_batch_size: 2 }))).toBe(2);
    expect(libraryMaxBatch(pipelineWith({ prefill_chunk_size: 1024 }))).toBeNull();
    expect(libraryMaxBatch(pipelineWith(null))).toBeNull();
    const device = new FakeGpuMemory(2 ** 30);
    const fit = await fitRows(pipelineWith({ max_batch_size: 2 }, device), { maxRows: 4, sizeToDevice: true }, tokensFor);
    expect(fit.settings?.maxRows).toBe(2);
    expect(device.checks).toEqual([{ bytes: tokensFor({ maxRows: 2 }) * 64, fitted: true }]);
    const one = await fitRows(pipelineWith({ max_batch_size: 1 }, device), { maxRows: 4, sizeToDevice: true }, tokensFor);
    expect(one).toEqual({ settings: null, reason: "the model library's forwards take one sequence (max_batch_size 1)" });
  });

  it("halves the rows until the cache fits: 8 → 4 → 2", async () => {
    const device = new FakeGpuMemory(tokensFor({ maxRows: 2 }) * 64);
    const fit = await fitRows(pipelineWith(null, device), { maxRows: 8, sizeToDevice: true }, tokensFor);
    expect(fit).toEqual({ settings: { maxRows: 2, sizeToDevice: true }, tried: [8, 4] });
    expect(device.checks.map((check) => check.fitted)).toEqual([false, false, true]);
  });

  it("a layer's pages bigger than one storage buffer may be does not fit, and nothing is allocated for it", async () => {
    const device = new FakeGpuMemory(2 ** 40);
    device.limits.maxStorageBufferBindingSize = 1000;
    expect(await canAllocate(device, 2 * 1004, 2)).toBe(false);
    expect(await canAllocate(device, 2 * 1000, 2)).toBe(true);
    expect(device.checks).toEqual([{ bytes: 2000, fitted: true }]);
  });

  it("a createBuffer that throws counts as not fitting, and the error scopes are still popped", async () => {
    const device = new FakeGpuMemory(2 ** 30);
    let calls = 0;
    const create = device.createBuffer.bind(device);
    device.createBuffer = (descriptor) => {
      if (++calls === 2) throw new RangeError("size too large");
      return create(descriptor);
    };
    expect(await canAllocate(device, 4096, 2)).toBe(false);
    expect(device.checks).toHaveLength(1);
    expect(device.inUse).toBe(0);
    // the device's scopes are balanced: a later check works
    expect(await canAllocate(device, 4096, 1)).toBe(true);
  });
});

describe("the memory check's own buffers", () => {
  it("are destroyed even when the device fails to report its error scopes (a lost device): no test allocation stays held", async () => {
    const memory = new FakeGpuMemory(2 ** 30);
    const pop = memory.popErrorScope.bind(memory);
    memory.popErrorScope = () => pop().then(() => Promise.reject(new Error("OperationError: the device was lost")));
    await expect(canAllocate(memory, 64 * 2 ** 20, 4)).rejects.toThrow(/lost/);
    expect(memory.inUse).toBe(0);
  });
});
