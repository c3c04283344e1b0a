/**
 * The host's pipeline core, shared by every face (chat, Responses,
 * embeddings, transcription, administration): the catalog, the engines, the
 * one request queue (slot, timeout, abort), model loading, request
 * preparation and the generation loop, and the conversation memory.
 *
 *   resolve model (+ GPU checks) → queue → load → prepare for the family →
 *   generate (engine → stop guard → parser → the face's output)
 *
 * A face gets this through the `PipelineCore` interface: a new face is a new
 * file taking a `PipelineCore`, and one line of wiring in engine-host.ts.
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import type { NormalizedMessage, NormalizedRequest } from "../protocol/normalized.js";
import type { ChatCompletionChunk, ToolChoice } from "../protocol/types.js";
import type { Engine, EngineCapabilities, EngineKind, EngineSettings, LoadProgress } from "../engine/types.js";
import { DEFAULT_ENGINE_KIND, declaredCapabilities, engineKindOf, fetchesWeights, kindCatalogs, prefetchesFor, registeredEngineKind } from "../engine/registry.js";
import { createCatalog, type Catalog } from "../models/catalog.js";
import type { ModelRecord } from "../models/record.js";
import { hasPackageManifest, modelInputs, type ModelInputs } from "../models/inputs.js";
import { isEmbeddingRecord, notAChatModel } from "../models/embedding.js";
import { familyOf } from "../families/registry.js";
import { probeGpu, type GpuProbe } from "../gpu/probe.js";
import { checkDeviceFit, deviceMemoryGb, fitsTogether } from "../gpu/fit.js";
import { composeProgress } from "../cache/progress.js";
import type { CacheManager } from "../cache/manager.js";
import { batchingSettings, type BatchingOption } from "../engine/batching/options.js";
import { promptCacheSettings, type PromptCacheOption } from "../engine/prompt-cache/config.js";
import type { GenerationOutput, GenerationResult } from "./generation-output.js";
import { checkInputKinds } from "./input-kinds.js";
import { checkAudioLimits, hasAudio, prepareAudio } from "./audio-input.js";
import { checkRecordUrls } from "../cache/url-policy.js";
import { AUTO_ENGINE, chooseEngine, type EngineChoice } from "./engine-choice.js";
import { loadModule } from "../lazy-imports.js";
import { RequestQueue, type ShareSpec } from "./queue.js";
import { ConversationMemory } from "./conversation-memory.js";
import { prepareRequest, type Prepared } from "./prepare-request.js";
import { runGeneration } from "./generation-loop.js";
import { responseFormatFor } from "./engine-format.js";
import { GenerationTally } from "./generation-tally.js";

export type { Prepared } from "./prepare-request.js";

/** The options the core reads (EngineHostOptions adds those of single faces). */
export interface PipelineOptions {
  /**
   * The engine of the records that name no engine kind: the app's own Engine,
   * or the name of a kind registered with registerEngineKind (engine/registry.ts)
   * in the realm that runs the host. Default: web-llm's, loaded on first use.
   */
  engine?: Engine | string;
  /** Extra or replacement model records; replace prebuilt ones with the same id. */
  models?: ModelRecord[];
  /** Waiting requests beyond this → 429. Default 16. */
  maxQueue?: number;
  /** A request that runs longer than this (queue included) fails with 504. */
  timeoutMs?: number;
  cache?: "indexeddb" | "cache" | "opfs";
  onProgress?: (progress: LoadProgress) => void;
  /** How the adapter is probed; replaceable in tests. */
  probeGpu?: () => Promise<GpuProbe>;
  /** The device's memory in GB; default `navigator.deviceMemory` (replaceable in tests). */
  deviceMemoryGb?: number;
  /** Prompt caching: `false` turns it off; an object sets the KV budget (engine/prompt-cache/config.ts). Default on. */
  promptCache?: PromptCacheOption;
  /** Speculative decoding (engine/speculative/): `false` turns it off. Default on. */
  speculative?: boolean;
  /** Continuous batching on the web-llm engine (engine/webllm/batching/webllm-rows.ts). Default on, sized to the device (webllm-kv-fit.ts); `false` turns it off. */
  batching?: BatchingOption;
}

/** Receives a stream's chunks (chat) or events (Responses). The host calls `end` or `fail` exactly once. */
export interface ChunkSink<T = ChatCompletionChunk> {
  write(chunks: T[]): void;
  end(): void;
  fail(error: ApiError): void;
}

/**
 * A streamed request's start and end, as the streaming faces share them:
 * `run` calls `start` when its first output goes out (or when it ends without
 * any); the promise resolves then, and rejects with an error from before it.
 * After the start, the sink ends when `run` does, or on abort; another error fails it.
 */
export function streamInto<T>(sink: ChunkSink<T>, run: (start: () => void) => Promise<void>): Promise<void> {
  return new Promise<void>((resolveStarted, rejectStarted) => {
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      resolveStarted();
    };
    run(start).then(
      () => sink.end(),
      (error) => {
        if (!started) rejectStarted(error);
        else if (isAbortError(error)) sink.end();
        else sink.fail(ApiError.from(error));
      },
    );
  });
}

/** Whether any message carries a part other than text (an image, audio): only such a request is checked against what the model takes. */
function carriesMedia(messages: readonly NormalizedMessage[]): boolean {
  return messages.some((message) => typeof message.content !== "string" && message.content.some((part) => part.type !== "text"));
}

export interface RequestOptions {
  signal?: AbortSignal;
  /**
   * Who sent the request (a shared worker's tab): the raw text of a reply is
   * restored only for the client that received it. Absent: this host's one client.
   */
  client?: string;
}

export interface SlotOptions {
  /** The work generates with the record's chat model: on a batching engine (`Engine.batchRows` > 1) it runs beside other generations. */
  generation?: boolean;
}

/** What a face gets from the core. */
export interface PipelineCore {
  /** A chat-shaped request in its queue slot, model loaded, prepared for the family (validation of inputs and device first). */
  withSlot<T>(request: NormalizedRequest, signal: AbortSignal | undefined, work: (prepared: Prepared, signal: AbortSignal) => Promise<T>): Promise<T>;
  /** One generation of a prepared request; its events go to `output`. */
  generate(prepared: Prepared, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult>;
  /** `prepared` again in its slot with more `messages` (a hosted tool's next round, host/responses-mcp.ts), with `toolChoice` when given. */
  prepareAgain(prepared: Prepared, messages: NormalizedMessage[], toolChoice?: ToolChoice): Prepared;
  /**
   * A queue slot with `record` loaded (any request kind); `started` is when the slot was granted.
   * `generation`: the work generates with `record`'s chat model, so on a batching engine it may share the engine.
   */
  inSlot<T>(record: ModelRecord, signal: AbortSignal | undefined, work: (signal: AbortSignal, started: number) => Promise<T>, options?: SlotOptions): Promise<T>;
  /** The catalog; with `requested`, the app's own records suffice when they name it (web-llm not loaded). */
  catalog(requested?: string): Promise<Catalog>;
  /** The record a request's `model` names, for this adapter (404 when none); with `engine: "auto"`, its fallback where the GPU cannot serve it. */
  resolve(model: string): Promise<ModelRecord>;
  /** Which record and engine serve `model`, and why (host/engine-choice.ts). */
  chooseEngine(model: string): Promise<EngineChoice>;
  /** `engine: "auto"` was asked for. */
  readonly auto: boolean;
  /** The adapter's features (what model variants need). */
  features(): Promise<Set<string>>;
  gpu(): Promise<GpuProbe>;
  engineFor(record: ModelRecord): Promise<Engine>;
  /** What the engine serving `record` can do (engine/types.ts): each gate asks the capability it means. */
  capabilitiesOf(record: ModelRecord): Promise<EngineCapabilities>;
  /** Adapter checks before anything is downloaded (503s). */
  checkDevice(record: ModelRecord, request: NormalizedRequest | undefined): Promise<void>;
  /** What `record` takes (text, image, audio and their limits). */
  inputsOf(record: ModelRecord): Promise<ModelInputs>;
  ensureLoaded(record: ModelRecord, onProgress: ((p: LoadProgress) => void) | undefined, signal?: AbortSignal): Promise<void>;
  cacheManager(): Promise<CacheManager>;
  /** The one queue, for work that holds it without a request (loadModel). */
  readonly queue: RequestQueue;
  /** Engine-wide counts of the generations of one-at-a-time engines (`client.stats()`); every generation loop feeds it. */
  readonly tally: GenerationTally;
  /** The engines started so far: the default kind's (once created), then those of the other kinds (engine/registry.ts). */
  engines(): Engine[];
}

export class Pipeline implements PipelineCore {
  /** The engines made so far, by kind (a `host`-scoped kind) or kind and model id (a `record`-scoped one); the app's own engine under the default kind. */
  private readonly made = new Map<string, { engine: Promise<Engine>; capabilities: EngineCapabilities }>();
  private readonly started: Engine[] = [];
  readonly queue: RequestQueue;
  readonly tally = new GenerationTally();
  private readonly memory = new ConversationMemory();
  private catalogPromise: Promise<Catalog> | null = null;
  private ownCatalog: Catalog | null = null;
  private gpuPromise: Promise<GpuProbe> | null = null;
  private recentHoldMs = 1000;
  private readonly settings: EngineSettings;
  /** The kind of the records that name none: web-llm, or the registered kind `engine` names. */
  private readonly defaultKind: string;
  /** `engine: "auto"`: a record the GPU cannot serve runs its `fallback`. */
  readonly auto: boolean;
  /** The app's own engine (`engine` as an Engine), serving the default kind. */
  private readonly ownEngine: Engine | undefined;

  constructor(private readonly options: PipelineOptions = {}) {
    // "auto": records without a kind stay web-llm's, and a request may run a record's fallback instead (host/engine-choice.ts).
    this.auto = options.engine === AUTO_ENGINE;
    this.defaultKind = typeof options.engine === "string" && !this.auto ? registeredEngineKind(options.engine).kind : DEFAULT_ENGINE_KIND;
    this.ownEngine = typeof options.engine === "object" ? options.engine : undefined;
    if (this.ownEngine) {
      this.made.set(DEFAULT_ENGINE_KIND, { engine: Promise.resolve(this.ownEngine), capabilities: declaredCapabilities(this.ownEngine) });
      this.started.push(this.ownEngine);
    }
    const batching = batchingSettings(options.batching);
    this.settings = { promptCache: promptCacheSettings(options.promptCache, options.deviceMemoryGb ?? deviceMemoryGb()), ...(batching ? { batching } : {}) };
    this.queue = new RequestQueue(options.maxQueue ?? 16, () => this.recentHoldMs);
  }

  async withSlot<T>(request: NormalizedRequest, outerSignal: AbortSignal | undefined, work: (prepared: Prepared, signal: AbortSignal) => Promise<T>): Promise<T> {
    const arrived = performance.now();
    const record = await this.resolve(request.model);
    if (isEmbeddingRecord(record)) throw notAChatModel(record);
    const family = familyOf(record);
    // What the model takes (models/inputs.ts, from its cached manifest where it has one) is read only for a request with images or audio.
    const inputs = carriesMedia(request.messages) ? await this.inputsOf(record) : null;
    if (inputs) checkInputKinds(request.messages, record.model_id, inputs);
    await this.checkDevice(record, request);
    // Audio is measured or decoded here, in the worker, before the request queues (host/audio-input.ts).
    const audio = inputs !== null && hasAudio(request.messages);
    const messages = audio ? await prepareAudio(request.messages, inputs?.audio ?? null, record.model_id) : request.messages;
    if (audio && inputs?.audio) checkAudioLimits(messages, inputs.audio, record.model_id);

    return this.inSlot(record, outerSignal, async (signal, started) => {
      // Limits a package declares are known once its manifest is downloaded (the first load): checked then, before generating.
      if (audio && !inputs?.audio) {
        const late = (await this.inputsOf(record)).audio;
        if (late) checkAudioLimits(messages, late, record.model_id);
      }
      const prepared = prepareRequest(request, record, family, { arrived, started }, messages, this.memory);
      const capabilities = await this.capabilitiesOf(record);
      this.fitResponseFormat(prepared);
      if (this.options.speculative === false || !capabilities.speculative) prepared.engineRequest.speculative = false;
      // A batching engine admits rows in turns between clients (the shared worker's tabs).
      if (request.client !== undefined) prepared.engineRequest.owner = request.client;
      return work(prepared, signal);
      // A generation with audio (a transcription is one) holds the engine alone, as issue 38 keeps transcriptions'
      // own turn: on web-llm the models that hear decode one at a time anyway, and the scripted engine does the same.
    }, { generation: !audio });
  }

  /**
   * A queue slot with `record` loaded, for every request (chat, Responses,
   * embeddings): one queue, the timeout (504) and abort; `started` is when the
   * slot was granted (queue time ends there).
   */
  async inSlot<T>(record: ModelRecord, outerSignal: AbortSignal | undefined, work: (signal: AbortSignal, started: number) => Promise<T>, options: SlotOptions = {}): Promise<T> {
    if (outerSignal?.aborted) throw abortError();
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(outerSignal?.reason);
    outerSignal?.addEventListener("abort", onOuterAbort, { once: true });
    let timedOut = false;
    const timer = this.options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, this.options.timeoutMs)
      : undefined;
    let release: (() => void) | null = null;
    try {
      const share = options.generation ? await this.shareOf(record) : null;
      const turn = share ? await this.queue.acquireShared(share, controller.signal) : null;
      release = turn ? turn.release : await this.queue.acquire(controller.signal);
      const started = performance.now();
      await this.ensureLoaded(record, undefined, controller.signal);
      // Loaded: other generations of this model may now join (a batching engine).
      turn?.loaded();
      const result = await work(controller.signal, started);
      this.recentHoldMs = 0.8 * this.recentHoldMs + 0.2 * (performance.now() - started);
      return result;
    } catch (error) {
      if (timedOut) {
        throw new ApiError({ status: 504, code: "timeout", message: `The request ran longer than timeoutMs (${this.options.timeoutMs} ms) and was stopped.` });
      }
      if (error instanceof ApiError && error.code === "device_lost") await (await this.made.get(this.keyOf(record))?.engine)?.unload().catch(() => undefined);
      // An engine's plain Error reaches in-process callers as a 500 ApiError, as it does through the worker.
      throw isAbortError(error) ? error : ApiError.from(error);
    } finally {
      clearTimeout(timer);
      outerSignal?.removeEventListener("abort", onOuterAbort);
      release?.();
    }
  }

  /** How a generation with `record` shares a batching engine; null: it holds the engine alone. */
  private async shareOf(record: ModelRecord): Promise<ShareSpec | null> {
    if (isEmbeddingRecord(record) || !(await this.capabilitiesOf(record)).batch) return null;
    const engine = await this.engineFor(record);
    if ((engine.batchRows ?? 1) <= 1 && !engine.batchesAfterLoad) return null;
    return {
      group: { engine, model: record.model_id },
      // Read at each admission: the cap is the loaded model's (another model's before this one loads, 1 where it cannot batch).
      get maxRows() {
        return engine.batchRows ?? 1;
      },
      ready: () => engine.loadedModel === record.model_id,
    };
  }

  prepareAgain(prepared: Prepared, messages: NormalizedMessage[], toolChoice?: ToolChoice): Prepared {
    const now = performance.now();
    const request: NormalizedRequest = { ...prepared.request, messages, ...(toolChoice !== undefined ? { toolChoice } : {}) };
    const again = prepareRequest(request, prepared.record, prepared.family, { arrived: now, started: now }, messages, this.memory);
    this.fitResponseFormat(again);
    if (prepared.engineRequest.speculative !== undefined) again.engineRequest.speculative = prepared.engineRequest.speculative;
    if (prepared.engineRequest.owner !== undefined) again.engineRequest.owner = prepared.engineRequest.owner;
    return again;
  }

  /** The request's response format in a form its engine takes (EBNF where it takes only that), or a 400 before generating (host/engine-format.ts). */
  private fitResponseFormat(prepared: Prepared): void {
    const format = prepared.engineRequest.responseFormat;
    if (!format) return; // nothing constrains the output: nothing to fit
    const fitted = responseFormatFor(format, this.madeFor(prepared.record).capabilities, prepared.record.model_id, prepared.request.responseFormatParam);
    if (fitted === format) return;
    if (fitted) prepared.engineRequest.responseFormat = fitted;
    else delete prepared.engineRequest.responseFormat;
  }

  async generate(prepared: Prepared, output: GenerationOutput, signal: AbortSignal): Promise<GenerationResult> {
    return runGeneration(await this.engineFor(prepared.record), prepared, output, signal, this.memory, this.tally);
  }

  engines(): Engine[] {
    return [...this.started];
  }

  async ensureLoaded(record: ModelRecord, onProgress: ((p: LoadProgress) => void) | undefined, signal?: AbortSignal): Promise<void> {
    const engine = await this.engineFor(record);
    const capabilities = await this.capabilitiesOf(record);
    const embedding = isEmbeddingRecord(record);
    // A chat model and an embedding model are resident together: each checks its own slot.
    if ((embedding ? engine.loadedEmbeddingModel : engine.loadedModel) === record.model_id) return;
    // The model of the other kind stays unless both do not fit in GPU memory together.
    const otherId = embedding ? engine.loadedModel : engine.loadedEmbeddingModel;
    const other = otherId && capabilities.gpu ? (await this.catalog()).find(otherId) : undefined;
    const exclusive = other ? !fitsTogether([other, record], this.options.deviceMemoryGb ?? deviceMemoryGb()).fits : false;
    const emit = (progress: LoadProgress) => {
      this.options.onProgress?.(progress);
      onProgress?.(progress);
    };
    // A record's URLs are checked before the engine or our downloader fetch anything (cache/url-policy.ts).
    if (fetchesWeights(capabilities)) checkRecordUrls(record);
    // Our downloader fills the cache layout the engine loads from first (byte progress, resume, checks, quota).
    const phases = (await prefetchesFor(engine, capabilities)) ? composeProgress(emit) : null;
    if (phases) await (await this.cacheManager()).ensure(record, { onProgress: phases.download, signal, layout: capabilities.prefetch ?? undefined });
    await engine.load(record, {
      signal,
      // What the family asks of this engine in particular (web-llm: a conv_config).
      ...(embedding ? {} : this.kindOf(record)?.loadHints?.(familyOf(record))),
      exclusive,
      cacheBackend: this.options.cache,
      // A GGUF is handed over from our cache as Blobs (the engine fetches nothing).
      ...(capabilities.prefetch === "gguf" ? { storedFiles: async () => (await this.cacheManager()).readGguf(record) } : {}),
      onProgress: phases ? phases.engine : emit,
      ...(embedding ? {} : { promptCache: this.settings.promptCache }),
    });
  }

  async cacheManager(): Promise<CacheManager> {
    const { cacheManager } = await loadModule("cacheManager", () => import("../cache/manager.js"));
    return cacheManager(this.options.cache ?? "indexeddb");
  }

  /** What `record` takes: its cached package manifest when there is one (an engine loading MLC's layout), else the record (models/inputs.ts). */
  async inputsOf(record: ModelRecord): Promise<ModelInputs> {
    if (!hasPackageManifest(record) || (await this.capabilitiesOf(record)).prefetch !== "mlc") return modelInputs(record);
    const manifest = await (await this.cacheManager()).readPackageManifest(record).catch(() => null);
    return modelInputs(record, manifest);
  }

  async checkDevice(record: ModelRecord, request: NormalizedRequest | undefined): Promise<void> {
    if ((await this.capabilitiesOf(record)).gpu) checkDeviceFit(record, await this.gpu(), request?.provider);
  }

  /** The engine of `record`'s kind (engine/registry.ts), made on first use: the app's own engine serves the default kind. */
  async engineFor(record: ModelRecord): Promise<Engine> {
    return this.madeFor(record).engine;
  }

  async capabilitiesOf(record: ModelRecord): Promise<EngineCapabilities> {
    return this.madeFor(record).capabilities;
  }

  /** The registered kind of `record`, or null where the app's own engine serves it (the default kind). */
  private kindOf(record: ModelRecord): EngineKind | null {
    const kind = engineKindOf(record, this.defaultKind);
    return kind.kind === DEFAULT_ENGINE_KIND && this.ownEngine ? null : kind;
  }

  private keyOf(record: ModelRecord): string {
    const kind = engineKindOf(record, this.defaultKind);
    return kind.scope === "record" ? `${kind.kind}\u0000${record.model_id}` : kind.kind;
  }

  private madeFor(record: ModelRecord): { engine: Promise<Engine>; capabilities: EngineCapabilities } {
    const key = this.keyOf(record);
    const existing = this.made.get(key);
    if (existing) return existing;
    const kind = engineKindOf(record, this.defaultKind);
    // Made synchronously into the map: concurrent first requests share one engine.
    const engine = (async () => kind.create(record, this.settings))();
    engine.catch(() => this.made.delete(key));
    const made = { engine, capabilities: kind.capabilities };
    this.made.set(key, made);
    // The default kind's engine is listed first (client.stats()).
    void engine.then((e) => (key === this.defaultKind ? this.started.unshift(e) : this.started.push(e)), () => undefined);
    return made;
  }

  /**
   * A request that names one of the app's own records by its exact id needs
   * only those records: web-llm (whose catalog is the prebuilt list) is not
   * loaded for a page that only uses scripted or custom records.
   */
  catalog(requested?: string): Promise<Catalog> {
    if (requested !== undefined) {
      this.ownCatalog ??= createCatalog(this.options.models ?? []);
      if (this.ownCatalog.find(requested)) return Promise.resolve(this.ownCatalog);
    }
    this.catalogPromise ??= kindCatalogs().then((prebuilt) => createCatalog([...prebuilt, ...(this.options.models ?? [])]));
    return this.catalogPromise;
  }

  async resolve(model: string): Promise<ModelRecord> {
    // Only "auto" may run another record than the one named: without it the choice (and its reason) is not needed.
    if (this.auto) return (await this.chooseEngine(model)).record;
    const record = (await this.catalog(model)).resolve(model, await this.features());
    engineKindOf(record, this.defaultKind); // a record naming no registered kind is a 500 here, as the choice gives it
    return record;
  }

  async chooseEngine(model: string): Promise<EngineChoice> {
    const catalog = await this.catalog(model);
    const requested = catalog.resolve(model, await this.features());
    const gpu = await this.gpu();
    // A fallback not among the app's own records is looked up in the whole catalog (loading the kinds' lists).
    const fallback = this.auto ? requested.fallback : undefined;
    const whole = typeof fallback === "string" && !catalog.find(fallback) ? await this.catalog() : catalog;
    return chooseEngine(requested, { auto: this.auto, gpu, catalog: whole, kindOf: (record) => this.kindOf(record) ?? { ...engineKindOf(record, this.defaultKind), capabilities: declaredCapabilities(this.ownEngine!) } });
  }

  gpu(): Promise<GpuProbe> {
    this.gpuPromise ??= (this.options.probeGpu ?? probeGpu)();
    return this.gpuPromise;
  }

  async features(): Promise<Set<string>> {
    const gpu = await this.gpu();
    return new Set(gpu.available ? gpu.info.features : []);
  }
}
