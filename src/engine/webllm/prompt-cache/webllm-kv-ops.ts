/**
 * The paged KV cache operations of the TVM runtime inside a web-llm model
 * library, as the prompt-cache binding uses them: `vm.builtin.kv_state_popn`,
 * `kv_state_fork_sequence` (parent, child, position or -1), `kv_state_remove_sequence`,
 * `kv_state_add_sequence`, and re-creating the cache bigger with the library's
 * `create_tir_paged_kv_cache` and the arguments web-llm itself passes.
 * Present in web-llm 0.2.79's `v0_2_48` libraries and the `v0_2_80` runtime
 * of 0.2.86; integers go in as `tvm.scalar(v, "int64")` (`popn`'s count as
 * `"int32"`), as web-llm passes them.
 */

/** The slice of web-llm's tvmjs instance used here. */
export interface TvmLike {
  getGlobalFunc(name: string): (...args: unknown[]) => unknown;
  scalar(value: number, dtype: string): unknown;
  makeShapeTuple(shape: number[]): unknown;
  beginScope(): void;
  endScope(): void;
  detachFromCurrentScope<T>(value: T): T;
}

/** What the pipeline exposes of its KV cache (web-llm's `LLMChatPipeline` fields). */
export interface KvCacheHost {
  tvm: TvmLike;
  vm?: { getFunction(name: string): (...args: unknown[]) => unknown };
  kvCache: unknown;
  prefillChunkSize?: number;
  slidingWindowSize?: number;
  /** 0.2.86 manifest models name their cache constructor. */
  artifact?: { program?: { exports?: { create_kv_cache?: string } } };
}

/** Tokens per page of web-llm's paged KV cache (its `defaultPageSize`). */
export const WEBLLM_PAGE_SIZE = 16;

export interface KvOps {
  popn(seq: number, n: number): void;
  fork(parent: number, child: number, position: number): void;
  remove(seq: number): void;
  add(seq: number): void;
}

const NAMES = { popn: "vm.builtin.kv_state_popn", fork: "vm.builtin.kv_state_fork_sequence", remove: "vm.builtin.kv_state_remove_sequence", add: "vm.builtin.kv_state_add_sequence" } as const;

/** The runtime's sequence operations on `host.kvCache` (read at each call: the cache may be re-created), or null when the library lacks one. */
export function kvOpsOf(host: KvCacheHost): KvOps | null {
  const tvm = host.tvm;
  const fns: Partial<Record<keyof typeof NAMES, (...args: unknown[]) => unknown>> = {};
  for (const [key, name] of Object.entries(NAMES) as Array<[keyof typeof NAMES, string]>) {
    try {
      tvm.beginScope();
      fns[key] = tvm.detachFromCurrentScope(tvm.getGlobalFunc(name));
    } catch {
      return null;
    } finally {
      tvm.endScope();
    }
  }
  const i64 = (v: number) => tvm.scalar(v, "int64");
  return {
    popn: (seq, n) => void fns.popn!(host.kvCache, i64(seq), tvm.scalar(n, "int32")),
    fork: (parent, child, position) => void fns.fork!(host.kvCache, i64(parent), i64(child), i64(position)),
    remove: (seq) => void fns.remove!(host.kvCache, i64(seq)),
    add: (seq) => void fns.add!(host.kvCache, i64(seq)),
  };
}

/**
 * Replaces the pipeline's paged KV cache by one of `totalTokens` tokens (all
 * sequences together) and `maxSequences` sequences, with web-llm's other
 * arguments (prefill chunk, page size, sliding-window flag). The old cache is
 * disposed only once the new one exists; the caller then adds sequence 0
 * (web-llm's `resetKVCache`). Throws when the library cannot make one.
 */
export function recreateKvCache(host: KvCacheHost, totalTokens: number, maxSequences: number): void {
  const tvm = host.tvm;
  const allocatedBefore = gpuAllocatedBytes(host);
  const name = host.artifact?.program?.exports?.create_kv_cache ?? "create_tir_paged_kv_cache";
  const shape = (n: number) => tvm.makeShapeTuple([n]);
  // The function and the shapes are TVM objects: they exist only inside a scope.
  tvm.beginScope();
  let made: unknown;
  try {
    const create = host.vm?.getFunction(name);
    if (typeof create !== "function") throw new Error(`The model library has no ${name}.`);
    made = tvm.detachFromCurrentScope(
      create(shape(maxSequences), shape(totalTokens), shape(host.prefillChunkSize ?? 2048), shape(WEBLLM_PAGE_SIZE), shape((host.slidingWindowSize ?? -1) !== -1 ? 1 : 0)),
    );
  } finally {
    tvm.endScope();
  }
  // The new cache's pages are allocated when it is made, before the old one goes: what it holds per token.
  const allocatedAfter = gpuAllocatedBytes(host);
  if (allocatedBefore !== null && allocatedAfter !== null && allocatedAfter > allocatedBefore && totalTokens > 0) {
    measuredBytesPerToken.set(host, (allocatedAfter - allocatedBefore) / totalTokens);
  }
  const old = host.kvCache as { dispose?: () => void } | undefined;
  host.kvCache = made;
  old?.dispose?.();
}

/** Device bytes per KV token of the cache recreateKvCache last made on each pipeline, as the runtime counted them. */
const measuredBytesPerToken = new WeakMap<object, number>();

/**
 * Device bytes one KV token takes in `host`'s re-created cache (every layer's
 * keys and values, with the cache's own tables), measured from the WebGPU
 * runtime's allocation count when the cache was made; null where nothing was
 * measured (no re-creation yet, a runtime that does not count).
 */
export function kvBytesPerToken(host: object): number | null {
  return measuredBytesPerToken.get(host) ?? null;
}

/** tvmjs's count of the device memory it holds (`webGPUContext.currAllocatedBytes`), or null. */
function gpuAllocatedBytes(host: KvCacheHost): number | null {
  const bytes = (host.tvm as { lib?: { webGPUContext?: { currAllocatedBytes?: unknown } } }).lib?.webGPUContext?.currAllocatedBytes;
  return typeof bytes === "number" ? bytes : null;
}
