/**
 * Model and GPU administration on the pipeline core: `models.list` /
 * `models.retrieve` (catalog records as OpenAI model objects with what each
 * takes), `gpu.info`, `loadModel` ahead of the first request, and the
 * queue's state.
 */
import type { ModelList, ModelObject } from "../protocol/types.js";
import type { LoadProgress } from "../engine/types.js";
import { contextWindowOf, quantizationOf, type ModelRecord } from "../models/record.js";
import type { ModelInputs } from "../models/inputs.js";
import { embeddingDimensionsOf, embeddingWindowOf, isEmbeddingRecord } from "../models/embedding.js";
import { familyOf } from "../families/registry.js";
import type { GpuProbe } from "../gpu/probe.js";
import type { PipelineCore } from "./pipeline-core.js";

export class ModelsFace {
  constructor(private readonly core: PipelineCore) {}

  async list(): Promise<ModelList> {
    const catalog = await this.core.catalog();
    return { object: "list", data: await Promise.all(catalog.records.map(async (record) => modelObject(record, await this.core.inputsOf(record)))) };
  }

  async retrieve(id: string): Promise<ModelObject> {
    const record = await this.core.resolve(id);
    return { ...modelObject(record, await this.core.inputsOf(record)), id };
  }

  async gpuInfo(): Promise<GpuProbe> {
    return this.core.gpu();
  }

  /** Loads a model ahead of the first request (downloads it if needed), with progress. */
  async load(model: string, options: { onProgress?: (p: LoadProgress) => void; signal?: AbortSignal } = {}): Promise<{ model: string }> {
    const record = await this.core.resolve(model);
    await this.core.checkDevice(record, undefined);
    const release = await this.core.queue.acquire(options.signal);
    try {
      await this.core.ensureLoaded(record, options.onProgress, options.signal);
    } finally {
      release();
    }
    return { model: record.model_id };
  }

  /** Requests waiting and whether one runs: for tests and the demo. */
  queueState(): { waiting: number; running: boolean } {
    return { waiting: this.core.queue.waiting, running: this.core.queue.running };
  }
}

function modelObject(record: ModelRecord, inputs: ModelInputs): ModelObject {
  if (isEmbeddingRecord(record)) {
    return {
      id: record.model_id,
      object: "model",
      created: 0,
      owned_by: "webgpu-openai",
      type: "embedding",
      family: "embedding",
      vram_required_mb: record.vram_required_MB ?? null,
      context_window: embeddingWindowOf(record),
      input_modalities: ["text"],
      capabilities: { tools: false, reasoning: false, vision: false, audio: false, embeddings: true },
      quantization: quantizationOf(record.model_id),
      dimensions: embeddingDimensionsOf(record),
    };
  }
  const family = familyOf(record);
  return {
    id: record.model_id,
    object: "model",
    created: 0,
    owned_by: "webgpu-openai",
    family: family.name,
    vram_required_mb: record.vram_required_MB ?? null,
    context_window: contextWindowOf(record),
    type: "chat",
    input_modalities: inputs.kinds,
    capabilities: { tools: true, reasoning: family.reasoning !== null, vision: inputs.kinds.includes("image"), audio: inputs.kinds.includes("audio"), embeddings: false },
    quantization: quantizationOf(record.model_id),
  };
}
