/**
 * Device memory per row of continuous batching (issue 38), measured on a
 * real web-llm model library's paged KV cache: the library (BENCH_WEBLLM_LIB)
 * is instantiated by web-llm 0.2.86's own runtime on WebGPU (SwiftShader in
 * headless Chromium is enough), and the library's KV cache constructor makes
 * the rows' room as a batching engine makes it, once for 1 row and once for
 * N rows (each row min(context window, 2048) tokens, as
 * WebLlmRows.kvReservation gives them). The bytes are tvmjs's count of the
 * GPU buffers it allocated (`webGPUContext.currAllocatedBytes`) around each
 * creation, the count `client.stats().batching.kv_bytes_per_row` is taken
 * from (recreateKvCache): per row = (N rows − 1 row) / (N − 1), so what does
 * not grow with the rows (the cache's own small arrays) is left out. web-llm's
 * own sequence (its context window) is left out of both caches: it is not a
 * row's, and a long window would make the caches needlessly large here.
 *
 * No weight is loaded. web-llm instantiates the library and opens its WebGPU
 * device before it fetches weights, and the generated model the artifact
 * server serves for it names a weight shard that is not there (0.2.79 looks
 * for an `ndarray-cache.json` it does not serve at all), so its load stops at
 * the weights. web-llm keeps its runtime to itself (tvmjs is bundled in it,
 * not exported): the bench catches the runtime as tvmjs constructs it, by the
 * `asyncifyHandler` field only tvmjs's `Instance` sets (a setter on
 * Object.prototype during the load, removed as soon as it fired).
 *
 * The runtime is web-llm 0.2.86's; a library it cannot instantiate (one
 * built for an older TVM runtime, such as the prebuilt Qwen2-0.5B `v0_2_48`
 * library: "TVMFFIFunctionGetGlobal is not a function") is measured on web-llm
 * 0.2.79's, and the result says which runtime made the caches and why the
 * newer one did not.
 */
import { CacheManager } from "../src/cache/manager.js";
import type { ModelRecord } from "../src/models/record.js";
import { WebLlmRows } from "../src/engine/webllm/batching/webllm-rows.js";
import { kvBytesPerToken, recreateKvCache, type KvCacheHost, type TvmLike } from "../src/engine/webllm/prompt-cache/webllm-kv-ops.js";
import { shimOldModelLibraries } from "./webllm-loader.js";

export interface KvMemoryOptions {
  /** The artifact server, started with the model library (`modelLib`). */
  serverUrl: string;
  /** N: the rows of the larger cache (at least 2). */
  rows: number;
}

export interface KvMemoryResult {
  /** The web-llm whose runtime made the caches, and why an earlier one was not used. */
  webllm: string;
  skipped: string[];
  rows: number;
  /** The library's compiled context window, and the KV tokens each row gets. */
  contextWindow: number;
  tokensPerRow: number;
  /** GPU bytes the cache for 1 row and for N rows allocated. */
  bytesOneRow: number;
  bytesRows: number;
  /** (N rows − 1 row) / (N − 1). */
  bytesPerRow: number;
  /** What `client.stats().batching.kv_bytes_per_row` reports for N rows: bytes per token of the N-row cache × tokens per row. */
  statsBytesPerRow: number | null;
  /** From the library's metadata. */
  library: { model_type?: string; quantization?: string; max_batch_size?: number; prefill_chunk_size?: number; sliding_window_size?: number };
}

type Fn = (...args: unknown[]) => unknown;

/** tvmjs's runtime instance, as far as this uses it. */
type Runtime = TvmLike & {
  lib?: { webGPUContext?: { currAllocatedBytes?: number } };
  createVirtualMachine(device: unknown): { getFunction(name: string): Fn; dispose?(): void };
  webgpu(): unknown;
  dispose?(): void;
};

/** A field tvmjs's `Instance` constructor assigns (and nothing else in web-llm 0.2.79's or 0.2.86's bundle). */
const RUNTIME_FIELD = "asyncifyHandler";

/** web-llm's engine as far as the bench drives it. */
interface Engine {
  reload(modelId: string): Promise<void>;
  unload(): Promise<void>;
}

/** The web-llm runtimes tried, newest first, each with how to make its engine for `record` (web-llm's own Cache API cache). */
const RUNTIMES: Array<{ webllm: string; engine(record: ModelRecord): Promise<Engine> }> = [
  {
    webllm: "0.2.86",
    engine: async (record) => {
      shimOldModelLibraries();
      const { MLCEngine } = await import("@mlc-ai/web-llm");
      return new MLCEngine({ appConfig: { model_list: [record as never], cacheBackend: "cache" } });
    },
  },
  {
    webllm: "0.2.79",
    engine: async (record) => {
      const { MLCEngine } = await import("webllm-0279");
      return new MLCEngine({ appConfig: { model_list: [record as never], useIndexedDBCache: false } });
    },
  },
];

/** Runs `load` and returns the tvmjs runtime it constructed (null: none), and how the load ended. */
async function catchRuntime(load: () => Promise<unknown>): Promise<{ runtime: Runtime | null; loadError: unknown }> {
  let runtime: Runtime | null = null;
  const proto = Object.prototype as unknown as Record<string, unknown>;
  Object.defineProperty(Object.prototype, RUNTIME_FIELD, {
    configurable: true,
    set(this: object, value: unknown) {
      delete proto[RUNTIME_FIELD];
      // The runtime keeps the field as its own, as it would have.
      Object.defineProperty(this, RUNTIME_FIELD, { value, writable: true, configurable: true, enumerable: true });
      runtime = this as Runtime;
    },
  });
  let loadError: unknown = null;
  try {
    await load();
  } catch (error) {
    loadError = error;
  } finally {
    delete proto[RUNTIME_FIELD];
  }
  return { runtime, loadError };
}

/** tvmjs's count of the GPU memory it holds now. */
function allocated(runtime: Runtime): number {
  const bytes = runtime.lib?.webGPUContext?.currAllocatedBytes;
  if (typeof bytes !== "number") throw new Error("the runtime has no WebGPU context with an allocation count (webGPUContext.currAllocatedBytes)");
  return bytes;
}

export async function benchKvMemory(options: KvMemoryOptions): Promise<KvMemoryResult> {
  const rows = Math.max(2, Math.floor(options.rows));
  // A generated model for the real library whose one weight shard is missing: web-llm's load stops at the weights.
  const spec = { shards: 1, shardBytes: 4096, md5: false, realLib: true, validTokenizer: true, dataPaths: ["params_shard_9.bin"] };
  const created = (await (await fetch(`${options.serverUrl}/__control/model`, { method: "POST", body: JSON.stringify(spec) })).json()) as { record: ModelRecord };
  const record = created.record;
  const skipped: string[] = [];
  const engines: Engine[] = [];
  const runtimes: Runtime[] = [];
  try {
    let found: { tvm: Runtime; webllm: string } | null = null;
    for (const candidate of RUNTIMES) {
      const engine = await candidate.engine(record);
      engines.push(engine);
      const { runtime, loadError } = await catchRuntime(() => engine.reload(record.model_id));
      if (runtime) runtimes.push(runtime);
      const why = String((loadError as Error | null)?.message ?? loadError ?? "it loaded");
      if (runtime?.lib?.webGPUContext) {
        found = { tvm: runtime, webllm: candidate.webllm };
        break;
      }
      // Typically a library built for another TVM runtime than this web-llm's: the next (older) one may instantiate it.
      skipped.push(`web-llm ${candidate.webllm}: ${why}`);
    }
    if (!found) throw new Error(`no web-llm runtime opened the WebGPU device with this library (${skipped.join("; ")})`);
    const tvm = found.tvm;
    tvm.beginScope();
    let vm: ReturnType<Runtime["createVirtualMachine"]>;
    let metadata: Record<string, unknown>;
    try {
      vm = tvm.detachFromCurrentScope(tvm.createVirtualMachine(tvm.webgpu()));
      metadata = JSON.parse(String(tvm.detachFromCurrentScope(vm.getFunction("_metadata")()))) as Record<string, unknown>;
    } finally {
      tvm.endScope();
    }
    const number = (key: string) => (typeof metadata[key] === "number" ? (metadata[key] as number) : undefined);
    const contextWindow = number("context_window_size") ?? -1;
    const host: KvCacheHost = { tvm, vm, kvCache: undefined, prefillChunkSize: number("prefill_chunk_size"), slidingWindowSize: number("sliding_window_size") ?? -1 };
    // The rows' KV room as the engine reserves it (kvReservation), without web-llm's own sequence.
    const tokensFor = (n: number) => WebLlmRows.kvReservation({ contextWindowSize: contextWindow }, { maxRows: n }).tokens;
    // Each cache is counted as it is made, every cache made before it still held: the runtime's memory
    // pool hands freed memory out again, and a cache made after another was freed counted less than its
    // pages (4 rows of Qwen2-0.5B: 145 MiB against 105 MiB for 1 row, 13 MiB a row, a quarter of its pages).
    const held: unknown[] = [];
    const cacheBytes = (n: number): number => {
      if (host.kvCache !== undefined) held.push(host.kvCache);
      host.kvCache = undefined;
      const before = allocated(tvm);
      recreateKvCache(host, tokensFor(n), n);
      return allocated(tvm) - before;
    };
    const free = () => {
      for (const cache of [...held, host.kvCache]) (cache as { dispose?: () => void } | undefined)?.dispose?.();
      held.length = 0;
      host.kvCache = undefined;
    };
    const bytesOneRow = cacheBytes(1);
    const bytesRows = cacheBytes(rows);
    // As WebLlmRows.counters() computes kv_bytes_per_row: the measured bytes per token × a row's tokens.
    const perToken = kvBytesPerToken(host);
    free();
    vm.dispose?.();
    if (!(bytesOneRow > 0) || !(bytesRows > bytesOneRow)) throw new Error(`the runtime counted ${bytesOneRow} bytes for 1 row and ${bytesRows} for ${rows}: no KV pages measured`);
    const tokensPerRow = tokensFor(1);
    return {
      webllm: found.webllm,
      skipped,
      rows,
      contextWindow,
      tokensPerRow,
      bytesOneRow,
      bytesRows,
      bytesPerRow: Math.round((bytesRows - bytesOneRow) / (rows - 1)),
      statsBytesPerRow: perToken === null ? null : Math.round((perToken * tokensFor(rows)) / rows),
      library: {
        model_type: metadata.model_type as string | undefined,
        quantization: metadata.quantization as string | undefined,
        max_batch_size: number("max_batch_size"),
        prefill_chunk_size: number("prefill_chunk_size"),
        sliding_window_size: number("sliding_window_size"),
      },
    };
  } finally {
    for (const engine of engines) await engine.unload().catch(() => undefined);
    for (const runtime of runtimes) {
      try {
        runtime.dispose?.();
      } catch {
        // its device may already be gone: nothing else holds it
      }
    }
    await new CacheManager("cache").delete(record.model_id, record).catch(() => undefined);
  }
}
