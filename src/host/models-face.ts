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
import { engineMode, wllamaThreads, type EngineMode, type WllamaThreads } from "./engine-choice.js";
import { ggufListing, type GgufListing } from "./gguf-listing.js";

/** `client.gpu.info()` before the client adds `worker`. */
export type GpuInfoReply = GpuProbe & { engine: EngineMode; wllama: WllamaThreads };

export class ModelsFace {
  /** GGUF headers read so far, by file URL (a file's header does not change under its URL). */
  private readonly ggufListings = new Map<string, Promise<GgufListing>>();

  constructor(private readonly core: PipelineCore) {}

  async list(): Promise<ModelList> {
    const catalog = await this.core.catalog();
    return { object: "list", data: await Promise.all(catalog.records.map((record) => this.objectOf(record))) };
  }

  async retrieve(id: string): Promise<ModelObject> {
    const record = await this.core.resolve(id);
    return { ...(await this.objectOf(record)), id };
  }

  /** The model object; a GGUF record's size and quantization come from its file's header (host/gguf-listing.ts). */
  private async objectOf(record: ModelRecord): Promise<ModelObject> {
    const object = modelObject(record, await this.core.inputsOf(record));
    if ((await this.core.capabilitiesOf(record)).prefetch !== "gguf") return object;
    const listing = await this.ggufListingOf(record);
    return { ...object, quantization: listing.quantization, size_bytes: listing.sizeBytes };
  }

  private ggufListingOf(record: ModelRecord): Promise<GgufListing> {
    const known = this.ggufListings.get(record.model);
    if (known) return known;
    const listing = ggufListing(record, () => this.core.cacheManager());
    // Only a header that was read is kept: a server down now may answer the next list.
    void listing.then((l) => l.quantization === null && this.ggufListings.delete(record.model));
    this.ggufListings.set(record.model, listing);
    return listing;
  }

  /** The adapter, what runs the GPU's records (`engine: "auto"`), and how wllama runs here (threads: as a loaded wllama reports them, else as a load will ask). */
  async gpuInfo(): Promise<GpuInfoReply> {
    const probe = await this.core.gpu();
    return { ...probe, engine: engineMode(this.core.auto, probe), wllama: wllamaThreads(this.core.engines()) };
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
