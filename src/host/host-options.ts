/**
 * The host's options, listed once. `EngineHostOptions` (engine-host.ts, on
 * `PipelineOptions`) declares them; this module says which of them a page can
 * send to a worker (plain data, structured-cloneable) and which a client
 * hands its host, and copies them by these lists: the worker's `configure`
 * config, the host built from it, the shared worker's "ignored options" check
 * and createClient all read the same list instead of spelling the fields out.
 * Types only from the host, so the page imports this without the host's code.
 */
import type { EngineHostOptions } from "./engine-host.js";

/** What a page sends to a worker's `configure` besides the engine (functions cannot cross; an engine travels as an EngineSpec). */
export const WORKER_HOST_OPTIONS = ["models", "maxQueue", "timeoutMs", "cache", "responsesStore", "promptCache", "speculative", "batching", "mcp"] as const satisfies readonly (keyof EngineHostOptions)[];
export type WorkerHostOption = (typeof WORKER_HOST_OPTIONS)[number];

/** What createClient hands its host: the worker's options plus the engine and the callbacks (proxied to a worker by the backend). */
export const CLIENT_HOST_OPTIONS = [...WORKER_HOST_OPTIONS, "engine", "onProgress", "onResponseStoreError"] as const satisfies readonly (keyof EngineHostOptions)[];
export type ClientHostOption = (typeof CLIENT_HOST_OPTIONS)[number];

/** `from`'s `keys`, each one set (an absent option as `undefined`, as the hand-written copies had it). */
export function pickOptions<T, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const key of keys) picked[key] = from[key];
  return picked;
}
