/**
 * How many CPU threads llama.cpp gets under wllama, and how that is told.
 *
 * What wllama 3.8.1 does (src/wllama.ts `loadModel`, read in its sources):
 * its one `wllama.wasm` is an Emscripten pthread build (`-sUSE_PTHREADS`,
 * shared memory), used for both modes. It runs multi-threaded when
 * `isSupportMultiThread()` holds (a SharedArrayBuffer can be posted: the
 * context is cross-origin isolated) AND `n_threads` > 1; otherwise it starts
 * no pthreads and passes llama.cpp 1 thread. Left out, `n_threads` is
 * `floor(navigator.hardwareConcurrency / 2)`: on a 2- or 3-core machine that
 * is 1, so an isolated page still ran single-threaded.
 *
 * Our rule, where the context is isolated: wllama's own, half the logical
 * cores (`hardwareConcurrency` counts SMT siblings, which add little to
 * llama.cpp's matrix work; the page, our worker and other tabs keep the
 * rest), at most 8 (decoding is memory-bound and stops scaling; each thread
 * is a Worker). So a 2- or 3-core machine stays single-threaded by default:
 * ggml's threads spin at every barrier, and where they outnumber free cores
 * a token waits for a descheduled thread. Measured on a loaded 2-core
 * machine (load average 5 to 11): 2 threads decoded 6 to 29 tok/s where 1
 * decoded 36 to 803 (docs/models.md, "Threads"). A record may ask for its own count (`engine.threads`),
 * up to `hardwareConcurrency`. Not isolated: 1 (wllama could start no
 * threads anyway).
 */
import { ApiError } from "../../protocol/api-error.js";

/** What `gpu.info().wllama` and `models.status(id).engine` say of wllama's threads. */
export interface WllamaThreadReport {
  /** "multi": llama.cpp runs on a pool of pthreads; "single": on one thread. */
  threads: "multi" | "single";
  /** llama.cpp's thread count (wllama's `getNumThreads()`, or what a load will ask for). */
  n_threads: number;
  /** "wllama": what the loaded wllama says (`isMultithread()`, `getNumThreads()`); "planned": no GGUF is loaded yet, this is what a load asks for. */
  source: "wllama" | "planned";
}

/** What wllama reports once a model is loaded. */
export interface WllamaLoadedThreads {
  multithread: boolean;
  n_threads: number;
}

export const MAX_WLLAMA_THREADS = 8;

/** The `n_threads` a load passes wllama: threads only where the context is cross-origin isolated; `asked`: the record's `engine.threads`. */
export function wllamaThreadCount(isolated: boolean, hardwareConcurrency: number | undefined, asked?: number): number {
  if (!isolated) return 1;
  const cores = Math.max(1, Math.floor(hardwareConcurrency ?? 1));
  if (asked !== undefined) return Math.min(asked, cores);
  return Math.max(1, Math.min(MAX_WLLAMA_THREADS, Math.floor(cores / 2)));
}

/** A record's `engine.threads`: a whole number from 1 (the load refuses anything else with a 400). */
export function checkThreadsSetting(value: unknown, modelId: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return value;
  throw new ApiError({
    status: 400,
    code: "invalid_model_record",
    param: "engine.threads",
    message: `${modelId}: engine.threads must be a whole number of threads from 1 (got ${JSON.stringify(value)}); leave it out for half the logical cores (at most ${MAX_WLLAMA_THREADS}) where the page is cross-origin isolated.`,
  });
}

/** This context's isolation and the `n_threads` a load here passes wllama. */
export function contextThreadCount(asked?: number): { isolated: boolean; n_threads: number } {
  const scope = globalThis as { crossOriginIsolated?: boolean; navigator?: { hardwareConcurrency?: number } };
  const isolated = scope.crossOriginIsolated === true;
  return { isolated, n_threads: wllamaThreadCount(isolated, scope.navigator?.hardwareConcurrency, asked) };
}

/** The report: what the loaded wllama said, else what a load here will ask for. */
export function wllamaThreadReport(loaded: WllamaLoadedThreads | null, asked?: number): WllamaThreadReport {
  if (loaded) return { threads: loaded.multithread ? "multi" : "single", n_threads: loaded.n_threads, source: "wllama" };
  const planned = contextThreadCount(asked).n_threads;
  return { threads: planned > 1 ? "multi" : "single", n_threads: planned, source: "planned" };
}
