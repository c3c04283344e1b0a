/**
 * What crosses between the page and the worker. Calls go through comlink;
 * streamed chunks are pushed over a MessagePort per request.
 */
import type { ApiErrorInit } from "../protocol/api-error.js";
import type { PackedChunks } from "./chunk-wire.js";
import type { PackedEvents } from "./event-wire.js";
import type { LoadProgress } from "../engine/types.js";
import type { Endpoint, EndpointName, HostOptionsArg, HostResult, LeadingArgs } from "../host/endpoints.js";
import type { EngineHostOptions } from "../host/engine-host.js";
import type { WorkerHostOption } from "../host/host-options.js";
import type { PromptCacheOption } from "../engine/prompt-cache/config.js";
import type { TranscriptionStreamEvent } from "../protocol/transcription-types.js";
import type { CompletionChunk } from "../protocol/completions-types.js";

/** Worker → page, on a request's port. */
export type PortMessage =
  | { type: "chunks"; packed: PackedChunks }
  | { type: "events"; packed: PackedEvents }
  | { type: "transcript"; events: TranscriptionStreamEvent[] }
  | { type: "completion"; chunks: CompletionChunk[] }
  | { type: "end" }
  | { type: "error"; error: ApiErrorInit };

/** Page → worker, on a request's port. */
export type PortCommand = { type: "abort" };

/** A scripted engine as data (`createScriptedEngine`'s options): rebuilt in the worker. */
export type ScriptedEngineSpec = { kind: "scripted"; replies: string[]; tokenDelayMs?: number; loadDelayMs?: number; embedDelayMs?: number; promptCache?: PromptCacheOption; batch?: { maxRows?: number; prefillChunkTokens?: number } };

/**
 * Serializable engine choice for the worker: what serves the records that
 * name no engine kind. `{ kind: "webllm" }` (the default), a scripted engine,
 * or any kind registered with registerEngineKind in the worker's module (an
 * app's own worker, which calls it before exposeEngineHost).
 */
export type EngineSpec = ScriptedEngineSpec | { kind: string };

/** Whether `spec` carries a scripted engine's replies (any other kind is a registered kind's name). */
export function isScriptedSpec(spec: EngineSpec): spec is ScriptedEngineSpec {
  return spec.kind === "scripted" && Array.isArray((spec as Partial<ScriptedEngineSpec>).replies);
}

/** What the page's `configure` sends: the host's plain-data options (host/host-options.ts lists them) and the engine as data. */
export type WorkerHostConfig = Pick<EngineHostOptions, WorkerHostOption> & { engine: EngineSpec };

/** Which worker serves a client: one SharedWorker for every tab of the origin, a dedicated one, or none (this thread). */
export type WorkerKind = "shared" | "dedicated" | "none";

/** `client.workerInfo()`: which worker serves this client and how many tabs it serves. */
export interface WorkerInfo {
  worker: WorkerKind;
  /** Tabs (clients) connected to the worker, this one included: 1 for a dedicated worker or none. */
  tabs: number;
  /** Set when `worker: "shared"` was asked for but this browser has no SharedWorker (a dedicated one serves instead). */
  fallback?: string;
}

/** A tab joining a shared worker: the Web Lock it holds while alive (the worker waits on it to learn the tab is gone). */
export interface TabHello {
  lock: string;
}

/**
 * Tab → shared worker, on the tab's own port beside comlink's calls: the tab
 * is leaving (its page unloads for good, or its client is terminated), so the
 * worker lets it go at once. Where Web Locks are missing (an insecure context,
 * e.g. a page on http://192.168.x.x) this is how the worker learns a tab is
 * gone; elsewhere its lock says so too, and the first to arrive wins. A worker
 * that predates it drops it unanswered, as any message that is not a call.
 */
export const TAB_GOODBYE = { type: "webgpu-openai:tab-goodbye" } as const;

export function isTabGoodbye(data: unknown): boolean {
  return typeof data === "object" && data !== null && (data as { type?: unknown }).type === TAB_GOODBYE.type;
}

/** What a shared worker answers a tab that joins. */
export interface ConfigureResult {
  /** Options of this tab that were not applied (the first tab's win), e.g. `["models", "maxQueue"]`. */
  ignored: string[];
  /** A Web Lock the worker holds for its whole life: a tab that asks for it is granted it when the worker is gone. */
  workerLock?: string;
}

/**
 * A tab's offer to start a Worker for the shared worker (which has no Worker
 * constructor in Chromium): a Worker of `type` from `script`, its messages
 * relayed over `port` (llama.cpp's Worker for a GGUF model: engine/wllama/wllama-tab-host.ts).
 */
export type TabWorkerStarter = (script: Blob, port: MessagePort, type: WorkerType) => void | Promise<void>;

/** A failed write of the response store, as it crosses to the page (rebuilt there as an ApiError). */
export type StoreErrorListener = (error: ApiErrorInit) => void;

type ProgressOf<K extends EndpointName> = HostOptionsArg<K> extends { onProgress?: infer P } ? P : never;

/** How the worker serves endpoint `K` of the table (host/endpoints.ts): a request's signal becomes its port. */
type WorkerMethod<K extends EndpointName> =
  Endpoint<K> extends { kind: "stream" } ? (...args: [...LeadingArgs<K>, port: MessagePort]) => Promise<void>
  : Endpoint<K> extends { progress: true } ? (...args: [...LeadingArgs<K>, port: MessagePort, onProgress?: ProgressOf<K>]) => HostResult<K>
  : Endpoint<K> extends { port: true } ? (...args: [...LeadingArgs<K>, port: MessagePort]) => HostResult<K>
  : (...args: LeadingArgs<K>) => HostResult<K>;

/**
 * The API the worker exposes with comlink: every endpoint of the table (a
 * stream resolves when generation has started; its items then arrive on the
 * port, and abort arrives on it), plus the two calls about the worker itself.
 */
export type WorkerApi = { [K in EndpointName]: WorkerMethod<K> } & {
  configure(config: WorkerHostConfig, onProgress?: (progress: LoadProgress) => void, tab?: TabHello, onStoreError?: StoreErrorListener, hostWorker?: TabWorkerStarter): Promise<ConfigureResult | void>;
  workerInfo(): WorkerInfo;
};
