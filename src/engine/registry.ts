/**
 * The engine seam's registry: which engine serves a model record, by the
 * record's `engine.kind` (absent: web-llm), and what that engine can do.
 *
 * The host never names an engine: pipeline-core asks `engineKindOf(record)`
 * for the kind, makes the kind's engine once (per host, or per record for
 * kinds whose settings live in the record), and each of its gates asks the
 * kind's capabilities (engine/types.ts, `EngineCapabilities`). Adding an
 * engine is its own module and one `registerEngineKind` call: web-llm
 * (engine/webllm/kind.ts) and the scripted engine (scripted-record.ts) are
 * registered here, an app's or a test's own engine by the call.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ModelRecord } from "../models/record.js";
import { ALL_RESPONSE_FORMATS, type Engine, type EngineCapabilities, type EngineKind } from "./types.js";
import { WEBLLM_ENGINE_KIND } from "./webllm/kind.js";
import { SCRIPTED_ENGINE_KIND } from "./scripted-record.js";
import { WLLAMA_ENGINE_KIND } from "./wllama/kind.js";

/** Records without `engine` are web-llm's. */
export const DEFAULT_ENGINE_KIND = WEBLLM_ENGINE_KIND.kind;

const kinds = new Map<string, EngineKind>([
  [WEBLLM_ENGINE_KIND.kind, WEBLLM_ENGINE_KIND],
  [SCRIPTED_ENGINE_KIND.kind, SCRIPTED_ENGINE_KIND],
  [WLLAMA_ENGINE_KIND.kind, WLLAMA_ENGINE_KIND],
]);

/** Registers an engine kind (replacing one of the same name); returns what undoes it. */
export function registerEngineKind(kind: EngineKind): () => void {
  const before = kinds.get(kind.kind);
  kinds.set(kind.kind, kind);
  return () => {
    if (kinds.get(kind.kind) !== kind) return;
    if (before) kinds.set(kind.kind, before);
    else kinds.delete(kind.kind);
  };
}

/** The records the registered kinds bring (web-llm's prebuilt list), in registration order. */
export async function kindCatalogs(): Promise<ModelRecord[]> {
  const lists = await Promise.all([...kinds.values()].map((kind) => kind.catalog?.() ?? []));
  return lists.flat();
}

/**
 * A registered kind by name, for a host told to serve the records that name
 * no kind with it (`engine: "<kind>"`); an unregistered name is a 400 that
 * says where to register it.
 */
export function registeredEngineKind(name: string): EngineKind {
  const kind = kinds.get(name);
  if (kind) return kind;
  throw new ApiError({
    status: 400,
    code: "unknown_engine_kind",
    param: "engine",
    message: `The engine kind ${JSON.stringify(name)} is not registered where the host runs (known kinds: ${[...kinds.keys()].join(", ")}): call registerEngineKind before creating the client, or with a worker, in the worker's module before exposeEngineHost.`,
  });
}

/** The kind that serves `record` (`defaultKind` where it names none); a record naming no registered kind is a catalog error (500 naming the record). */
export function engineKindOf(record: ModelRecord, defaultKind = DEFAULT_ENGINE_KIND): EngineKind {
  const name = record.engine?.kind ?? defaultKind;
  const kind = kinds.get(name);
  if (kind) return kind;
  throw new ApiError({
    status: 500,
    code: "invalid_model_record",
    param: "model",
    message: `The catalog record ${record.model_id} names the engine kind ${JSON.stringify(name)}, which is not registered: known kinds are ${[...kinds.keys()].join(", ")}.`,
  });
}

/**
 * The capabilities of an engine an app passed as the host's own (in place of
 * web-llm): those it declares, or else read from `requiresGpu` (true: a GPU
 * engine loading from the cache our downloader fills, as web-llm does).
 */
export function declaredCapabilities(engine: Engine): EngineCapabilities {
  if (engine.capabilities) return engine.capabilities;
  const gpu = engine.requiresGpu === true;
  return { gpu, prefetch: gpu ? "mlc" : null, ownsCache: false, batch: true, speculative: true, responseFormats: ALL_RESPONSE_FORMATS };
}

/** Whether the engine fetches anything of the record's (its URLs then pass the URL policy first). */
export function fetchesWeights(capabilities: EngineCapabilities): boolean {
  return capabilities.prefetch !== null || capabilities.ownsCache;
}

/** Whether the host's downloader fills the cache `engine` loads from (it may decline at run time: web-llm ≤ 0.2.79). */
export async function prefetchesFor(engine: Engine, capabilities: EngineCapabilities): Promise<boolean> {
  if (capabilities.prefetch === null) return false;
  return engine.acceptsPrefetch ? engine.acceptsPrefetch() : true;
}

/** Whether the engine's own cache (not ours) says whether `record` is there. */
export async function keepsOwnCache(engine: Engine, capabilities: EngineCapabilities): Promise<boolean> {
  return capabilities.ownsCache || (capabilities.prefetch !== null && !(await prefetchesFor(engine, capabilities)));
}
