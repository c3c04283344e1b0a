/**
 * createClient: the OpenAI-shaped object apps use. It forwards to an
 * EngineHost running in a dedicated worker (browser default) or in this thread.
 */
import type { EngineHostOptions } from "../host/engine-host.js";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParams } from "../protocol/types.js";
import { requestPersistence } from "../cache/quota.js";
import type { ScriptedEngine } from "../engine/scripted.js";
import type { EngineSpec } from "../worker/protocol.js";
import { promptCacheSettings } from "../engine/prompt-cache/config.js";
import { batchingSettings } from "../engine/batching/options.js";
import { ApiError } from "../protocol/api-error.js";
import { inProcessBackend, workerBackend, type Backend } from "./backend.js";
import { ChunkQueue } from "./chunk-queue.js";
import { CLIENT_HOST_OPTIONS, pickOptions } from "../host/host-options.js";
import type { ResponseCreateParams, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { Stream } from "./stream.js";
import { createFetchHandler } from "./fetch-handler.js";
import { withFallback } from "./fallback.js";
import { chooseWorkerLink } from "./shared-choice.js";
import { outputText } from "../protocol/responses/output-text.js";
import { transcriptionsApi } from "./transcriptions.js";
import type { Completion, CompletionChunk, CompletionCreateParams } from "../protocol/completions-types.js";
import type { Client, ClientOptions, RequestOptions } from "./types.js";

/** The client's types live in types.ts; re-exported here, where they have always been importable from. */
export type { Client, ClientOptions, RequestOptions } from "./types.js";

/** A Stream whose generation stops when `external` aborts, or when the consumer breaks or aborts `stream.controller`. */
async function openStream<T>(external: AbortSignal | null | undefined, start: (queue: ChunkQueue<T>, signal: AbortSignal) => Promise<void>): Promise<Stream<T>> {
  const controller = new AbortController();
  const forward = () => controller.abort(external?.reason);
  if (external?.aborted) forward();
  external?.addEventListener("abort", forward, { once: true });
  const queue = new ChunkQueue<T>();
  await start(queue, controller.signal);
  return new Stream(queue, controller);
}

const inBrowser = () => typeof Worker !== "undefined" && typeof (globalThis as { document?: unknown }).document !== "undefined";

export function createClient(options: ClientOptions = {}): Client {
  const local = chooseBackend(options);
  const backend = options.fallback ? withFallback(local, options.fallback) : local;

  async function create(body: ChatCompletionCreateParams, requestOptions: RequestOptions = {}): Promise<ChatCompletion | Stream> {
    const external = requestOptions.signal;
    if (body && typeof body === "object" && body.stream === true) {
      return openStream<ChatCompletionChunk>(external, (queue, signal) => backend.streamChatCompletion(body, queue, signal));
    }
    return backend.createChatCompletion(body, external ?? new AbortController().signal);
  }

  async function createResponse(body: ResponseCreateParams, requestOptions: RequestOptions = {}): Promise<ResponseObject | Stream<ResponseStreamEvent>> {
    const external = requestOptions.signal;
    if (body && typeof body === "object" && body.stream === true) {
      return openStream<ResponseStreamEvent>(external, (queue, signal) => backend.streamResponse(body, queue, signal));
    }
    return withOutputText(await backend.createResponse(body, external ?? new AbortController().signal));
  }

  async function createCompletion(body: CompletionCreateParams, requestOptions: RequestOptions = {}): Promise<Completion | Stream<CompletionChunk>> {
    const external = requestOptions.signal;
    if (body && typeof body === "object" && body.stream === true) {
      return openStream<CompletionChunk>(external, (queue, signal) => backend.streamCompletion(body, queue, signal));
    }
    return backend.createCompletion(body, external ?? new AbortController().signal);
  }

  async function retrieveResponse(id: string, query: { stream?: boolean | null; starting_after?: number } = {}, requestOptions: RequestOptions = {}): Promise<ResponseObject | Stream<ResponseStreamEvent>> {
    if (query?.stream === true) {
      return openStream<ResponseStreamEvent>(requestOptions.signal, (queue, signal) => backend.retrieveResponseStream(id, query.starting_after, queue, signal));
    }
    return withOutputText(await backend.retrieveResponse(id));
  }

  const client: Client = {
    chat: { completions: { create: create as Client["chat"]["completions"]["create"] } },
    responses: {
      create: createResponse as Client["responses"]["create"],
      retrieve: retrieveResponse as Client["responses"]["retrieve"],
      delete: (id) => backend.deleteResponse(id),
      cancel: async (id) => withOutputText(await backend.cancelResponse(id)),
      list: async (query) => {
        const list = await backend.listResponses(query);
        return { ...list, data: list.data.map(withOutputText) };
      },
      clear: () => backend.clearResponses(),
      inputItems: { list: (id, query) => backend.listResponseInputItems(id, query) },
      compact: (body, requestOptions = {}) => backend.compactResponse(body, requestOptions.signal ?? new AbortController().signal),
    },
    completions: { create: createCompletion as Client["completions"]["create"] },
    embeddings: { create: (body, requestOptions = {}) => backend.createEmbeddings(body, requestOptions.signal ?? new AbortController().signal) },
    audio: { transcriptions: transcriptionsApi(backend, openStream) },
    models: {
      list: () => backend.listModels(),
      retrieve: (id) => backend.retrieveModel(id),
      load: (id, loadOptions = {}) => {
        // persist() exists only in window contexts, so the page asks (the worker cannot); usage() reports the answer.
        void requestPersistence();
        return backend.loadModel(id, loadOptions);
      },
      status: (id) => backend.modelStatus(id),
    },
    tokens: { count: (body, requestOptions = {}) => backend.countTokens(body, requestOptions.signal ?? new AbortController().signal) },
    mcp: {
      listTools: (server, requestOptions = {}) => backend.mcpListTools(server, requestOptions.signal ?? new AbortController().signal),
      callTool: (call, requestOptions = {}) => backend.mcpCallTool(call, requestOptions.signal ?? new AbortController().signal),
    },
    gpu: {
      info: async () => {
        const [probe, where] = await Promise.all([backend.gpuInfo(), backend.workerInfo()]);
        return { ...probe, worker: where.worker };
      },
    },
    workerInfo: () => backend.workerInfo(),
    fetch: undefined as unknown as Client["fetch"],
    queueState: () => backend.queueState(),
    stats: () => backend.stats(),
    cache: {
      list: () => backend.cacheList(),
      delete: (id) => backend.cacheDelete(id),
      clear: () => backend.cacheClear(),
      usage: () => backend.cacheUsage(),
    },
    terminate: () => backend.terminate(),
  };
  client.fetch = createFetchHandler(client);
  return client;
}

/** `output_text` added, as the OpenAI SDK adds it. */
function withOutputText(response: ResponseObject): ResponseObject {
  return { ...response, output_text: outputText(response) };
}

function chooseBackend(options: ClientOptions): Backend {
  promptCacheSettings(options.promptCache); // a bad option fails here, not at the first request
  if (options.batching !== undefined) batchingSettings(options.batching);
  if (options.speculative !== undefined && typeof options.speculative !== "boolean") {
    throw new ApiError({ status: 400, param: "speculative", message: "`speculative` must be true or false." });
  }
  const useWorker = options.worker ?? inBrowser();
  const hostOptions: EngineHostOptions = pickOptions(options, CLIENT_HOST_OPTIONS);
  if (!useWorker) return inProcessBackend(hostOptions);
  const link = chooseWorkerLink(useWorker);
  const customWorker = typeof useWorker === "object" ? useWorker : undefined;
  let engine: EngineSpec = { kind: "webllm" };
  if (typeof options.engine === "string") engine = { kind: options.engine };
  else if (options.engine) {
    const spec = (options.engine as Partial<ScriptedEngine>).spec;
    if (!spec && !customWorker) {
      throw new ApiError({
        status: 400,
        param: "engine",
        message: "This engine cannot be sent to a worker (only scripted engines with string replies can). Pass `worker: false` to run it in this thread, or a Worker that calls exposeEngineHost with it.",
      });
    }
    if (spec) engine = spec;
  }
  return link.wrap(workerBackend({ ...hostOptions, engine, link: link.connect }));
}
