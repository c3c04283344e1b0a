/**
 * Every API endpoint, declared once. Each key is the EngineHost method that
 * serves it; each entry says what the three ways of reaching the host need to
 * know about it:
 *
 * - `kind`: `"unary"` answers once; `"stream"` resolves when output has
 *   started and then writes items to a sink (the host's `ChunkSink`, the
 *   client's `ChunkQueue`, a worker's port).
 * - `args`: the arguments before the request's own ones (its signal, or its
 *   queue and signal), named for the reader; their count is what the wire needs.
 * - `port`: the request has a MessagePort to the worker: abort travels on it
 *   (every stream has one, its items travel on it too). The host method then
 *   takes `{ signal }` last (a stream: sink, then `{ signal }`).
 * - `progress`: the last argument is the host's options object itself
 *   (`{ signal, onProgress }`), and `onProgress` crosses to the worker as a proxy.
 * - `transfer`: what of the body moves to the worker instead of being copied:
 *   `"audio"` parts of chat messages or Responses input, the uploaded `"file"`.
 * - `wire`: a stream's wire form on its port (worker/port-sink.ts writes it,
 *   client/backend.ts reads it).
 *
 * From this table come the client's `Backend` type and both its backends
 * (client/backend.ts: in-process and worker), and the worker's `WorkerApi`
 * type and exposed object (worker/protocol.ts, worker/expose.ts), whose
 * names the port guard allows. A new endpoint is a host method (served by its
 * face module), one entry here, and its `Client` method (create-client.ts).
 *
 * Types only from the host: the page imports this without the host's code.
 */
import type { EngineHost } from "./engine-host.js";
import type { ChunkSink } from "./pipeline-core.js";

export type StreamWire = "chunks" | "events" | "completion" | "transcript";
export type BodyTransfer = "audio" | "file";

export type EndpointSpec =
  | { readonly kind: "unary"; readonly args: readonly string[]; readonly port: false }
  | { readonly kind: "unary"; readonly args: readonly string[]; readonly port: true; readonly progress?: true; readonly transfer?: BodyTransfer }
  | { readonly kind: "stream"; readonly args: readonly string[]; readonly port: true; readonly wire: StreamWire; readonly transfer?: BodyTransfer };

export const ENDPOINTS = {
  // chat completions (host/chat-face.ts)
  createChatCompletion: { kind: "unary", args: ["body"], port: true, transfer: "audio" },
  streamChatCompletion: { kind: "stream", args: ["body"], port: true, transfer: "audio", wire: "chunks" },
  // raw completions (host/completions-face.ts)
  createCompletion: { kind: "unary", args: ["body"], port: true },
  streamCompletion: { kind: "stream", args: ["body"], port: true, wire: "completion" },
  // responses (host/responses-face.ts, responses-compact.ts)
  createResponse: { kind: "unary", args: ["body"], port: true, transfer: "audio" },
  streamResponse: { kind: "stream", args: ["body"], port: true, transfer: "audio", wire: "events" },
  retrieveResponse: { kind: "unary", args: ["id"], port: false },
  retrieveResponseStream: { kind: "stream", args: ["id", "startingAfter"], port: true, wire: "events" },
  deleteResponse: { kind: "unary", args: ["id"], port: false },
  listResponseInputItems: { kind: "unary", args: ["id", "query"], port: false },
  cancelResponse: { kind: "unary", args: ["id"], port: false },
  listResponses: { kind: "unary", args: ["query"], port: false },
  clearResponses: { kind: "unary", args: [], port: false },
  compactResponse: { kind: "unary", args: ["body"], port: true },
  // embeddings (host/embeddings.ts)
  createEmbeddings: { kind: "unary", args: ["body"], port: true },
  // audio transcriptions (host/transcriptions.ts)
  createTranscription: { kind: "unary", args: ["body"], port: true, transfer: "file" },
  streamTranscription: { kind: "stream", args: ["body"], port: true, transfer: "file", wire: "transcript" },
  // Prompt API support (host/prompt-support.ts)
  countTokens: { kind: "unary", args: ["body"], port: true, transfer: "audio" },
  modelStatus: { kind: "unary", args: ["id"], port: false },
  // MCP servers' tools for connectMcp (host/mcp-face.ts)
  mcpListTools: { kind: "unary", args: ["body"], port: true },
  mcpCallTool: { kind: "unary", args: ["body"], port: true },
  // models, GPU (host/models-face.ts)
  listModels: { kind: "unary", args: [], port: false },
  retrieveModel: { kind: "unary", args: ["id"], port: false },
  gpuInfo: { kind: "unary", args: [], port: false },
  loadModel: { kind: "unary", args: ["model"], port: true, progress: true },
  queueState: { kind: "unary", args: [], port: false },
  // engine-wide counters (host/stats-face.ts)
  stats: { kind: "unary", args: [], port: false },
  // weight cache (host/cache-face.ts)
  cacheList: { kind: "unary", args: [], port: false },
  cacheDelete: { kind: "unary", args: ["id"], port: false },
  cacheClear: { kind: "unary", args: [], port: false },
  cacheUsage: { kind: "unary", args: [], port: false },
} as const satisfies { readonly [K in keyof EngineHost]?: EndpointSpec };

export type EndpointName = keyof typeof ENDPOINTS;
export type Endpoint<K extends EndpointName> = (typeof ENDPOINTS)[K];

/** The table's entries, for the code that builds one function per endpoint. */
export const endpointEntries = Object.entries(ENDPOINTS) as Array<[EndpointName, EndpointSpec]>;

/** `args` of a call as the entry counts them: the first `count`, missing ones as undefined (as a hand-written `(id, query) =>` passes them). */
export function leading(args: readonly unknown[], count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => args[i]);
}

// ── types derived from the host's methods ───────────────────────────────────

type HostParams<K extends EndpointName> = Parameters<EngineHost[K]>;
type DropLast<T extends readonly unknown[]> = T extends readonly [...infer Head, unknown] ? Head : never;

/** What the host method returns (a Promise, or a plain value as `queueState`'s). */
export type HostResult<K extends EndpointName> = ReturnType<EngineHost[K]>;

/** The arguments before the request's own: all of them for a unary call without a port. */
export type LeadingArgs<K extends EndpointName> =
  Endpoint<K> extends { kind: "stream" } ? DropLast<DropLast<Required<HostParams<K>>>>
  : Endpoint<K> extends { port: true } ? DropLast<Required<HostParams<K>>>
  : HostParams<K>;

/** The host method's last argument (its options object). */
export type HostOptionsArg<K extends EndpointName> = Required<HostParams<K>> extends readonly [...unknown[], infer Last] ? Last : never;

/** What a stream writes to its sink. */
export type StreamItem<K extends EndpointName> = Required<HostParams<K>> extends readonly [...unknown[], ChunkSink<infer T>, unknown] ? T : never;

// ── checks the compiler makes of the table ──────────────────────────────────

/** Every public method of the host is an endpoint here (a host method with no entry would be unreachable from a client). */
type Unlisted = Exclude<{ [K in keyof EngineHost]: EngineHost[K] extends (...args: never[]) => unknown ? K : never }[keyof EngineHost], EndpointName>;
/** Each entry's `args` has as many names as the host method takes before the request's own arguments. */
type ArityMismatch = { [K in EndpointName]: Endpoint<K>["args"]["length"] extends LeadingArgs<K>["length"] ? never : K }[EndpointName];
/** Fails to compile naming the endpoint when either check fails. */
type Holds<T extends true> = T;
export type TableMatchesHost = Holds<[Unlisted | ArityMismatch] extends [never] ? true : Unlisted | ArityMismatch>;
