/**
 * The real engine: web-llm's MLCEngine, created in this (worker) thread and
 * driven through its public chat API with messages already shaped by the
 * family. Works with web-llm 0.2.79 through 0.2.86 (webllm-compat.ts).
 *
 * - load → `engine.reload(model_id, {conv_config})` with an appConfig holding
 *   just this record and the cache backend; progress mapped by webllm-progress.ts.
 * - generate → webllm-generate.ts (streamed `chat.completions.create`, or
 *   `completions.create` for a raw prompt or a continued final message).
 * - what is loaded, and every way of forgetting it: webllm-residency.ts.
 * - speculative decoding: speculative/webllm-speculative.ts verifies n-gram
 *   drafts in one pass inside web-llm's decode step (attached by the cache
 *   slot, below the prompt cache); its pass and draft counts join the usage.
 * - prompt caching: prompt-cache/webllm-cache-slot.ts hooks each loaded
 *   chat pipeline (prompt-cache/webllm-binding.ts); usage counts (prompt,
 *   cached) are read from the pipeline's filled KV length.
 * - reload/unload never run under a generation: the host's queue runs one
 *   thing at a time, and this adapter keeps no background work.
 *
 * - embeddings: an embedding model (model_type 1) loads next to the chat
 *   model in the same MLCEngine (web-llm keeps several pipelines); see
 *   webllm-embed.ts. Adding the second one uses `reloadInternal`, which adds a
 *   model without unloading the other; replacing one reloads both with
 *   `reload([chat, embedding])` (web-llm's reload always unloads everything).
 *
 * web-llm internals read (guarded; absent → graceful fallback):
 * `loadedModelIdToPipeline` (tokenizer, filledKVCacheLength, logitProcessor)
 * and `loadedModelIdToChatConfig` (conversation template); see webllm-shapes.ts.
 */
import { ApiError, abortError } from "../../protocol/api-error.js";
import type { PromptCacheOption, PromptCacheSettings } from "../prompt-cache/config.js";
import type { ModelRecord } from "../../models/record.js";
import type { EmbedRequest, Engine, LoadOptions } from "../types.js";
import { isEmbeddingRecord } from "../../models/embedding.js";
import { checkWebLlmEmbedInputs, embedWithWebLlm, type WebLlmEmbeddingModel } from "./webllm-embed.js";
import { cacheConfig, detectWebLlmCompat, type WebLlmCompat } from "./webllm-compat.js";
import { mapWebLlmError } from "./webllm-errors.js";
import { WebLlmCacheSlot } from "./prompt-cache/webllm-cache-slot.js";
import { giveStopTokensText } from "./webllm-stop-token-text.js";
import { WebLlmSpeculativeSlot } from "./speculative/webllm-speculative-slot.js";
import { RequestLogitProcessor } from "./webllm-logits.js";
import { createProgressMapper } from "./webllm-progress.js";
import { importWebLlm } from "./import-webllm.js";
import { countWebLlmPromptTokens } from "./webllm-count.js";
import { loadedModelOf, type WebLlmEngineLike, type WebLlmModule } from "./webllm-shapes.js";
import { WebLlmResidency } from "./webllm-residency.js";
import { continuesReply, generateWithWebLlm, type WebLlmGenerationContext } from "./webllm-generate.js";
import { WebLlmRows, type CachedReplies, type KvKeeper, type PrefixSource, type WebLlmRowsOptions } from "./batching/webllm-rows.js";
import { fitRows, type KvFitPipeline } from "./batching/webllm-kv-fit.js";

export type { WebLlmChunk, WebLlmEngineLike, WebLlmModule } from "./webllm-shapes.js";

export interface WebLlmEngineOptions {
  /** The web-llm module, or how to get it; default `import("@mlc-ai/web-llm")`. */
  webllm?: WebLlmModule | (() => Promise<WebLlmModule>);
  /** web-llm's log level; default "WARN". */
  logLevel?: string;
  /** Prompt caching (engine/prompt-cache/config.ts); the host's load options win. */
  promptCache?: PromptCacheOption | PromptCacheSettings;
  /**
   * Continuous batching (batching/webllm-rows.ts): generations in flight
   * share each decode forward, up to `maxRows`. Absent here: off. The client
   * passes it on by default (`batchingSettings`), with `sizeToDevice`: the
   * rows are then fitted to the model and device at each load
   * (batching/webllm-kv-fit.ts).
   */
  batching?: WebLlmRowsOptions;
}

/** The web-llm engine as the host sees it. */
export interface WebLlmEngine extends Engine {
  readonly requiresGpu: true;
  /** What was detected about the running web-llm (null before the first load). */
  readonly compat: WebLlmCompat | null;
  /**
   * Whether this web-llm reads the cache layout our downloader writes
   * (`tensor-cache.json`, `mlc-chat-config.json` stored as bytes: 0.2.80 on).
   * ≤ 0.2.79 reads `ndarray-cache.json` and a parsed config object, so the
   * host skips its downloader there and web-llm fetches the files itself.
   */
  acceptsPrefetch(): Promise<boolean>;
}

/** fields of our ModelRecord that web-llm's appConfig understands; the rest (family, our integrity map…) stays out. */
// model_manifest: web-llm 0.2.86's package manifest, which turns on its image/audio adapters (Gemma 4); older web-llm ignores it.
const WEBLLM_RECORD_FIELDS = ["model", "model_id", "model_lib", "overrides", "vram_required_MB", "low_resource_required", "required_features", "buffer_size_required_bytes", "model_type", "model_manifest"];

/** web-llm's `ModelRecord` for one of ours. */
export function toWebLlmRecord(record: ModelRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of WEBLLM_RECORD_FIELDS) if (record[key] !== undefined) out[key] = record[key];
  return out;
}

export function createWebLlmEngine(options: WebLlmEngineOptions = {}): WebLlmEngine {
  let module: WebLlmModule | null = null;
  let engine: WebLlmEngineLike | null = null;
  let compat: WebLlmCompat | null = null;
  const residency = new WebLlmResidency();
  /** The embedding request whose inputs checkEmbedInputs last counted (all of one request's inputs). */
  let counted: EmbedRequest | null = null;
  const cache = new WebLlmCacheSlot(options.promptCache, new WebLlmSpeculativeSlot());
  const registry = new Map<string, RequestLogitProcessor>();
  /** The loaded chat model's rows (continuous batching), when the client batches and the model can. */
  let rows: WebLlmRows | null = null;
  let rowsReason: string | null = options.batching ? "no chat model is loaded" : "batching is off (createClient({ batching }))";
  const generation: WebLlmGenerationContext = {
    rows: () => rows,
    get engine() {
      return engine;
    },
    get compat() {
      return compat;
    },
    residency,
    cache,
    registry,
  };

  /**
   * Hooks a freshly (re)loaded chat pipeline: the rows snapshot it first (they
   * use its methods as they were before the prompt cache and speculation hook
   * them), are sized to the device (batching/webllm-kv-fit.ts), then the
   * prompt cache re-creates the KV cache with room for the rows.
   */
  async function attachChat(loaded: unknown, promptCache?: PromptCacheSettings): Promise<void> {
    rows = null;
    // Before any constrained request builds xgrammar's token table from the tokenizer (webllm-stop-token-text.ts).
    giveStopTokensText(loaded);
    if (!options.batching) return cache.attach(loaded, promptCache);
    // A row starts from the prompt cache's longest cached prefix of its key (read only: the row's KV goes when it ends).
    const prefix: PrefixSource = (child, full, key) => cache.current?.forkInto(child, full, key) ?? 0;
    // A row that ended cleanly hands its prompt and reply to the cache, as a request run alone leaves them there.
    const keeper: KvKeeper = (from, tokens, key) => cache.current?.keep(from, tokens, key) ?? false;
    // A row drafts from the replies its key's cache holds after its prompt (a regenerate), as a request run alone does.
    const replies: CachedReplies = (tokens, key) => cache.current?.repliesAfter(tokens, key) ?? [];
    type Pipe = ConstructorParameters<typeof WebLlmRows>[0];
    let candidate = loaded ? new WebLlmRows(loaded as Pipe, options.batching, prefix, keeper, replies) : null;
    rowsReason = candidate ? candidate.unsupported : "the web-llm pipeline is not reachable";
    let settings: WebLlmRowsOptions | null = candidate && !candidate.unsupported ? options.batching : null;
    if (candidate && settings) {
      // The whole cache the prompt cache (or ensureKvRoom) will re-create with these rows beside it.
      const cacheTokens = (sized: WebLlmRowsOptions) => cache.plannedKvTokens(loaded, promptCache, WebLlmRows.kvReservation(loaded as Pipe, sized)) ?? WebLlmRows.ownKvTokens(loaded as Pipe, sized);
      const fit = await fitRows(loaded as KvFitPipeline, settings, cacheTokens);
      if (!fit.settings) rowsReason = fit.reason;
      else if (fit.settings.maxRows !== candidate.maxRows) candidate = new WebLlmRows(loaded as Pipe, fit.settings, prefix, keeper, replies);
      settings = fit.settings;
    }
    const usable = candidate && settings ? candidate : null;
    cache.attach(loaded, promptCache, usable && settings ? WebLlmRows.kvReservation(loaded as Pipe, settings) : undefined);
    if (!usable || !settings) return;
    if (!cache.current?.policy) {
      try {
        usable.ensureKvRoom(settings);
      } catch (error) {
        rowsReason = `the KV cache could not be re-created for rows (${(error as Error).message})`;
        return;
      }
    }
    rows = usable;
  }

  function forgetChat(): void {
    cache.forget();
    rows = null;
    if (options.batching) rowsReason = "no chat model is loaded";
  }

  async function getModule(): Promise<WebLlmModule> {
    if (module) return module;
    const given = options.webllm;
    module = typeof given === "function" ? await given() : (given ?? ((await importWebLlm()) as unknown as WebLlmModule));
    compat = detectWebLlmCompat(module);
    return module;
  }

  /** The start of every load: not aborted, the module, the one MLCEngine (created at the first load). */
  async function startLoad(loadOptions: LoadOptions): Promise<WebLlmEngineLike> {
    if (loadOptions.signal?.aborted) throw abortError();
    const webllm = await getModule();
    engine ??= new webllm.MLCEngine({ logLevel: options.logLevel ?? "WARN", logitProcessorRegistry: registry });
    return engine;
  }

  /** web-llm's app config for the models of this load (the cache backend with them), and the progress callback. */
  function configureLoad(live: WebLlmEngineLike, modelList: ModelRecord[], loadOptions: LoadOptions): void {
    let appCache: Record<string, unknown>;
    try {
      appCache = cacheConfig(compat as WebLlmCompat, loadOptions.cacheBackend ?? "indexeddb");
    } catch (error) {
      throw new ApiError({ status: 400, code: "unsupported_cache", param: "cache", message: (error as Error).message });
    }
    live.setAppConfig({ model_list: modelList.map(toWebLlmRecord), ...appCache });
    const mapProgress = createProgressMapper();
    live.setInitProgressCallback((report) => loadOptions.onProgress?.(mapProgress(report)));
  }

  async function load(next: ModelRecord, loadOptions: LoadOptions): Promise<void> {
    if (isEmbeddingRecord(next)) return loadEmbedding(next, loadOptions);
    const key = JSON.stringify([next.model_id, next.model, next.model_lib, loadOptions.convConfig ?? null, loadOptions.cacheBackend ?? "indexeddb"]);
    if (residency.loaded === next.model_id && key === residency.loadedKey) return;
    const live = await startLoad(loadOptions);
    const processor = registry.get(next.model_id) ?? new RequestLogitProcessor();
    registry.clear();
    registry.set(next.model_id, processor);
    live.setLogitProcessorRegistry?.(registry);
    const embedding = residency.embedding;
    configureLoad(live, [next, ...(embedding && !loadOptions.exclusive ? [embedding.record] : [])], loadOptions);
    const hadChat = residency.loaded !== null;
    residency.forgetChat();
    forgetChat();
    const opts = loadOptions.convConfig ? { conv_config: loadOptions.convConfig } : undefined;
    // An embedding model stays: added to when no chat model is resident, reloaded with the new one otherwise.
    const resident = loadOptions.exclusive ? null : embedding;
    if (loadOptions.exclusive) residency.embedding = null;
    await runReload(loadOptions.signal, (live) =>
      !resident
        ? live.reload(next.model_id, opts)
        : !hadChat && live.reloadInternal
          ? addModel(live, next.model_id, opts)
          : live.reload([next.model_id, resident.id], [opts ?? {}, {}]),
    );
    residency.chatOpts = opts;
    // Bound at reload; detached again when reachable so requests that need none pay no logits copy per token.
    const loaded = loadedModelOf(engine, next.model_id);
    if (loaded && "logitProcessor" in loaded) loaded.logitProcessor = undefined;
    try {
      await attachChat(loaded, loadOptions.promptCache);
    } catch (error) {
      // Batching settings the device cannot hold (batching/webllm-kv-fit.ts): nothing stays loaded.
      residency.forgetAll();
      forgetChat();
      await live.unload().catch(() => undefined);
      throw error;
    }
    residency.setChat(next.model_id, key, next);
  }

  /**
   * Runs a reload. web-llm's reload has no signal; unload() aborts it (and
   * drops every model, so both slots are cleared on abort or failure).
   */
  async function runReload(signal: AbortSignal | undefined, reload: (live: WebLlmEngineLike) => Promise<void>): Promise<void> {
    const live = engine as WebLlmEngineLike;
    const onAbort = () => void live.unload().catch(() => undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await reload(live);
    } catch (error) {
      residency.forgetAll();
      await live.unload().catch(() => undefined);
      if (signal?.aborted) throw abortError();
      throw mapWebLlmError(error, "load");
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal?.aborted) {
      residency.forgetAll();
      await live.unload().catch(() => undefined);
      throw abortError();
    }
  }

  /** One more model next to the loaded one, the way web-llm's reload loads each of its list (with its abort controller). */
  async function addModel(live: WebLlmEngineLike, modelId: string, opts: unknown): Promise<void> {
    const internal = live as unknown as { reloadController?: AbortController };
    internal.reloadController = new AbortController();
    try {
      await (live.reloadInternal as NonNullable<WebLlmEngineLike["reloadInternal"]>)(modelId, opts);
    } finally {
      internal.reloadController = undefined;
    }
  }

  async function loadEmbedding(next: ModelRecord, loadOptions: LoadOptions): Promise<void> {
    const key = JSON.stringify([next.model_id, next.model, next.model_lib, loadOptions.cacheBackend ?? "indexeddb"]);
    if (residency.embedding?.id === next.model_id && residency.embedding.key === key) return;
    const live = await startLoad(loadOptions);
    const record = residency.record;
    configureLoad(live, [...(record && !loadOptions.exclusive ? [record] : []), next], loadOptions);
    const hadEmbedding = residency.embedding !== null;
    residency.embedding = null;
    if (loadOptions.exclusive && residency.loaded) {
      // Both do not fit: the chat model goes, and comes back (alone) at the next chat request.
      residency.forgetChat();
      forgetChat();
    }
    const chat = residency.loaded;
    await runReload(loadOptions.signal, (live) => {
      if (!chat) return live.reload(next.model_id);
      if (!hadEmbedding && live.reloadInternal) return addModel(live, next.model_id, undefined);
      // Replacing the embedding model unloads everything: the chat model comes back with it (its KV cache does not).
      forgetChat();
      return live.reload([chat, next.model_id], [residency.chatOpts ?? {}, {}]).then(() => attachChat(loadedModelOf(engine, chat)));
    });
    residency.embedding = { id: next.model_id, key, record: next };
  }

  /** The resident embedding model `modelId` (500 when it is not the one loaded). */
  function residentEmbedding(modelId: string): { id: string; record: ModelRecord } {
    const embedding = residency.embedding;
    if (!engine || !embedding || embedding.id !== modelId) {
      throw new ApiError({ status: 500, code: "model_not_loaded", message: `Embedding model ${modelId} is not loaded in the web-llm engine.` });
    }
    return embedding;
  }

  return {
    requiresGpu: true,
    get batchRows() {
      return rows ? rows.maxRows : undefined;
    },
    // The rows exist once a chat model is loaded and sized (attachChat): until then the host lets the first generation load alone.
    batchesAfterLoad: !!options.batching,
    batchCounters: () => rows?.counters() ?? null,
    get oneAtATime() {
      return rows ? undefined : `the web-llm engine decodes one sequence at a time here: ${rowsReason}`;
    },
    embedsTokenIds: true,
    continuesReply: (request) => continuesReply(generation, request),
    countTokens: async (request) => countWebLlmPromptTokens(loadedModelOf(engine, request.model)?.tokenizer, request),
    get loadedEmbeddingModel() {
      return residency.embedding?.id ?? null;
    },
    checkEmbedInputs(request) {
      const resident = residentEmbedding(request.model);
      checkWebLlmEmbedInputs(loadedModelOf(engine, request.model) as WebLlmEmbeddingModel | undefined, resident.record, request);
      counted = request;
    },
    async embed(request, signal) {
      const resident = residentEmbedding(request.model);
      // A batch of the request the host just had counted is not tokenized again.
      const precounted = counted !== null && counted.model === request.model && request.input.every((item, i) => item === counted!.input[request.firstIndex + i]);
      try {
        return await embedWithWebLlm(engine!, loadedModelOf(engine, request.model) as WebLlmEmbeddingModel | undefined, resident.record, request, signal, precounted);
      } catch (error) {
        const mapped = error instanceof ApiError || (error as Error)?.name === "AbortError" ? error : mapWebLlmError(error, "generate");
        if (mapped instanceof ApiError && mapped.code === "device_lost") residency.deviceLost();
        throw mapped;
      }
    },
    get compat() {
      return compat;
    },
    get loadedModel() {
      return residency.loaded;
    },
    async acceptsPrefetch() {
      await getModule();
      return compat?.cacheOption === "cacheBackend" && compat.tensorCacheFile === "tensor-cache.json";
    },
    async holdsModel(model, cacheBackend) {
      const webllm = (await getModule()) as WebLlmModule & { hasModelInCache?: (id: string, appConfig: unknown) => Promise<boolean> };
      if (!webllm.hasModelInCache || !compat) return false;
      const appConfig = { model_list: [toWebLlmRecord(model)], ...cacheConfig(compat, cacheBackend ?? "indexeddb") };
      return webllm.hasModelInCache(model.model_id, appConfig).catch(() => false);
    },
    load,
    generate: (request, signal) => generateWithWebLlm(generation, request, signal),
    async unload() {
      residency.forgetAll();
      forgetChat();
      await engine?.unload().catch(() => undefined);
    },
  };
}
