/**
 * web-llm 0.2.86's own weight download, timed: `MLCEngine.reload()` of a
 * generated model from the artifact server, into web-llm's cache. The clock
 * runs from its "Start to fetch params" report to the report that all shards
 * are fetched (its 4 parallel loops, one `addToCache` per shard); then the
 * engine is unloaded (the generated weights fit no real model, so its GPU
 * load that follows is of no interest).
 *
 * web-llm instantiates the model library and finds a WebGPU device before it
 * fetches a weight, so this needs a real model library (`realLib` on the
 * artifact server) and WebGPU (SwiftShader in headless Chromium is enough).
 */
import type { CacheBackend } from "../src/cache/layout.js";
import type { ModelRecord } from "../src/models/record.js";

let shimmed = false;

/**
 * Model libraries built before web-llm 0.2.86 import two TVM thread-pool hooks
 * its runtime no longer provides; single-threaded wasm needs no-op / 1. Any
 * other missing import throws with its name. (Same shim as the real-model tools.)
 */
export function shimOldModelLibraries(): void {
  if (shimmed) return;
  shimmed = true;
  const known: Record<string, (...args: unknown[]) => unknown> = {
    _ZN3tvm7runtime9threading15ResetThreadPoolEv: () => undefined,
    _ZN3tvm7runtime9threading10NumThreadsEv: () => 1,
  };
  const original = WebAssembly.instantiate.bind(WebAssembly) as (source: unknown, imports?: WebAssembly.Imports) => Promise<unknown>;
  (WebAssembly as { instantiate: unknown }).instantiate = async (source: unknown, imports?: WebAssembly.Imports) => {
    if (source instanceof WebAssembly.Module || !imports?.env) return original(source, imports);
    const module = await WebAssembly.compile(source as BufferSource);
    for (const wanted of WebAssembly.Module.imports(module)) {
      if (wanted.kind !== "function") continue;
      const space = (imports[wanted.module] ??= {}) as Record<string, unknown>;
      if (typeof space[wanted.name] === "function") continue;
      space[wanted.name] = known[wanted.name] ?? (() => {
        throw new Error(`missing wasm import ${wanted.module}.${wanted.name}`);
      });
    }
    return { module, instance: await original(module, imports) };
  };
}

export interface WebLlmDownload {
  seconds: number;
  /** Progress reports web-llm gave during the download. */
  reports: number;
}

/** Times web-llm's download of `record` into `backend`; rejects with web-llm's error when it fails before the download ends. */
export async function timeWebLlmDownload(record: ModelRecord, backend: CacheBackend, timeoutMs = 600_000): Promise<WebLlmDownload> {
  shimOldModelLibraries();
  const { MLCEngine } = await import("@mlc-ai/web-llm");
  let started: number | null = null;
  let reports = 0;
  let finish: (seconds: number) => void = () => undefined;
  const downloaded = new Promise<number>((resolve) => (finish = resolve));
  const engine = new MLCEngine({
    appConfig: { model_list: [record as never], cacheBackend: backend },
    initProgressCallback: (report) => {
      if (report.text.startsWith("Start to fetch params")) started = performance.now();
      if (!report.text.startsWith("Fetching param cache") || started === null) return;
      reports++;
      if (report.progress >= 1) finish((performance.now() - started) / 1000);
    },
  });
  const reload = engine.reload(record.model_id);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const seconds = await Promise.race([
      downloaded,
      reload.then(() => Promise.reject(new Error("web-llm loaded without a download (was the model cached?)"))),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("web-llm's download timed out")), timeoutMs))),
    ]);
    return { seconds, reports };
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    // The library was built against an older TVM runtime than web-llm 0.2.86's (its FFI names changed): say what to pass instead.
    if (message.includes("Cannot find global function ffi.")) throw new Error(`${message}: the model library predates web-llm 0.2.86's runtime; set BENCH_WEBLLM_LIB to one it can instantiate`);
    throw error;
  } finally {
    clearTimeout(timer);
    // Its GPU load of the generated weights is not measured: stop it and wait until it has stopped.
    await engine.unload().catch(() => undefined);
    await Promise.race([reload.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 60_000))]);
  }
}
