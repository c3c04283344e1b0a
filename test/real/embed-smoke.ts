/**
 * The embedding half of the real-engine smoke page (driven by
 * scripts/smoke-real.mjs when it is given an embedding model folder).
 * `window.smokeEmbed(options)` (put there by `defineEmbedSmoke()`):
 *   1. loads the model through the library in its worker, fresh profile:
 *      our downloader fetches it from 127.0.0.1 into web-llm's cache;
 *   2. embeds a batch with more inputs than the library's compiled batch
 *      (so the host splits and re-joins it);
 *   3. loads it again in a fresh worker: from IndexedDB, zero requests;
 *      embeds the same batch, then once more through `client.fetch` and the
 *      unchanged openai SDK (its default base64 encoding);
 *   4. loads the same record into web-llm's own `CreateMLCEngine` on this page
 *      (reading the cache our downloader filled) and compares its
 *      `engine.embeddings.create` vectors with ours.
 * The workers and this page install the test-only compat shim
 * (webllm-compat-shim.ts) that the old library needs on web-llm 0.2.86.
 */
import OpenAI from "openai";
import type * as WebLLM from "@mlc-ai/web-llm";
import { createClient, type Client } from "../../src/index.js";
import type { LoadProgress, ModelRecord } from "../../src/index.js";
import { installCompatShim, shimLog } from "./webllm-compat-shim.js";
import embedWorkerUrl from "./embed-worker.ts?worker&url";

export interface EmbedSmokeOptions {
  modelId: string;
  countersUrl: string;
  /** WGSL kernels the shim empties (test-only; see webllm-compat-shim.ts). */
  stubKernels: string[];
  /** More than the library's compiled batch; the driver makes them (the last repeats the first, in another batch). */
  inputs: string[];
  /** `max_batch_size` of the library (the driver reads it from the .wasm). */
  compiledBatch?: number;
}

export type Json = Record<string, unknown>;
export interface EmbeddingList {
  data: Array<{ index: number; embedding: number[] | string }>;
  usage?: { prompt_tokens: number; total_tokens: number };
  model?: string;
}

const origin = location.origin;

export function embedRecord(modelId: string, compiledBatch?: number): ModelRecord {
  return {
    ...(compiledBatch ? { embedding_batch_size: compiledBatch } : {}),
    model: `${origin}/embed-model/`,
    model_id: modelId,
    model_lib: `${origin}/lib/embed-model.wasm`,
    model_type: 1, // web-llm's ModelType.embedding
    low_resource_required: true,
  };
}

export async function served(countersUrl: string): Promise<number> {
  const res = await fetch(countersUrl, { cache: "no-store" });
  return ((await res.json()) as { modelRequests: number }).modelRequests;
}

export function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string; param?: string; stack?: string };
  return { name: e?.name, status: e?.status, code: e?.code, param: e?.param, message: String(e?.message ?? error).slice(0, 600) };
}

/**
 * The stub list travels in the worker's name, not in a `?query` on its URL:
 * the worker's lazily imported chunks import back from its entry chunk by the
 * plain URL, and a module with another URL (the query) is a second instance,
 * which would run a second exposeEngineHost (an unconfigured host answering
 * the same messages).
 */
export function worker(stubKernels: string[]): Worker {
  return new Worker(new URL(embedWorkerUrl, location.href), { type: "module", name: `smoke-embed stubKernels=${stubKernels.join(",")}` });
}

async function loadOnce(modelId: string, options: EmbedSmokeOptions): Promise<{ client: Client; report: Json }> {
  const before = await served(options.countersUrl);
  const phases: string[] = [];
  let last: LoadProgress | null = null;
  let monotonic = true;
  const client = createClient({ models: [embedRecord(modelId, options.compiledBatch)], cache: "indexeddb", worker: worker(options.stubKernels) });
  const t0 = performance.now();
  let error: Json | undefined;
  try {
    await client.models.load(modelId, {
      onProgress: (p) => {
        if (last && p.fraction < last.fraction) monotonic = false;
        if (phases[phases.length - 1] !== p.phase) phases.push(p.phase);
        last = p;
      },
    });
  } catch (e) {
    error = errorOf(e);
  }
  const ms = Math.round(performance.now() - t0);
  const modelRequests = (await served(options.countersUrl)) - before;
  return { client, report: { ms, error, modelRequests, phases, lastProgress: last, fractionMonotonic: monotonic } };
}

/** Vectors as float arrays, in `index` order (base64 decoded as the OpenAI SDK does: little-endian float32). */
export function vectorsOf(list: EmbeddingList): number[][] {
  return [...list.data]
    .sort((a, b) => a.index - b.index)
    .map((d) => {
      if (typeof d.embedding !== "string") return d.embedding;
      const bytes = Uint8Array.from(atob(d.embedding), (c) => c.charCodeAt(0));
      return Array.from(new Float32Array(bytes.buffer));
    });
}

export async function embedTimed(work: () => Promise<EmbeddingList>): Promise<{ report: Json; vectors?: number[][] }> {
  const t0 = performance.now();
  try {
    const list = await work();
    const ms = Math.round(performance.now() - t0);
    const vectors = vectorsOf(list);
    const tokens = list.usage?.prompt_tokens;
    return {
      vectors,
      report: {
        ms,
        count: vectors.length,
        indices: list.data.map((d) => d.index),
        dims: [...new Set(vectors.map((v) => v.length))],
        usage: list.usage,
        model: list.model,
        tokensPerS: tokens ? Math.round((tokens / (ms / 1000)) * 100) / 100 : undefined,
        head: vectors[0]?.slice(0, 4),
        finite: vectors.every((v) => v.every(Number.isFinite)),
      },
    };
  } catch (error) {
    return { report: { ms: Math.round(performance.now() - t0), error: errorOf(error) } };
  }
}

/** Largest |a - b| over every component; Infinity when shapes differ. */
export function maxAbsDiff(a?: number[][], b?: number[][]): number | null {
  if (!a || !b) return null;
  if (a.length !== b.length) return Infinity;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i].length !== b[i].length) return Infinity;
    for (let j = 0; j < a[i].length; j++) max = Math.max(max, Math.abs(a[i][j] - b[i][j]));
  }
  return max;
}

function maxAbs(a?: number[][]): number | null {
  return a ? Math.max(...a.map((v) => Math.max(...v.map(Math.abs)))) : null;
}

declare global {
  interface Window {
    smokeEmbed(options: EmbedSmokeOptions): Promise<Json>;
    smokeEmbedReport: Json;
  }
}

/** Puts `smokeEmbed` on the window (a function, not a side-effect import: the package says sideEffects: false). */
export function defineEmbedSmoke(): void {
  window.smokeEmbed = smokeEmbed;
}

async function smokeEmbed(options: EmbedSmokeOptions): Promise<Json> {
  const { modelId, inputs } = options;
  const report: Json = { modelId, inputs: inputs.length, stubKernels: options.stubKernels };
  window.smokeEmbedReport = report;
  const body = { model: modelId, input: inputs };
  const embed = async (client: Client) => (await client.embeddings.create(body)) as EmbeddingList;

  // 1–2. network load (fresh profile) + a batch
  const first = await loadOnce(modelId, options);
  report.loadFromNetwork = first.report;
  const viaNetwork = first.report.error ? { report: { error: "not loaded" } } : await embedTimed(() => embed(first.client));
  report.embedAfterNetworkLoad = viaNetwork.report;
  first.client.terminate();

  // 3. fresh worker: IndexedDB, zero requests; same batch; then client.fetch + openai SDK (base64 default)
  const second = await loadOnce(modelId, options);
  report.loadFromIndexedDB = second.report;
  const viaCache = second.report.error ? { report: { error: "not loaded" } } : await embedTimed(() => embed(second.client));
  report.embedAfterIndexedDBLoad = viaCache.report;
  const openai = new OpenAI({ apiKey: "unused", baseURL: "http://webgpu.local/v1", fetch: second.client.fetch, dangerouslyAllowBrowser: true });
  const viaSdk = second.report.error
    ? { report: { error: "not loaded" } }
    : await embedTimed(async () => (await openai.embeddings.create(body)) as unknown as EmbeddingList);
  report.embedThroughOpenAISdk = viaSdk.report;
  second.client.terminate();

  // 4. web-llm's own engine on this page, on the cache our downloader filled
  installCompatShim({ stubKernels: options.stubKernels });
  const webllm = await import("@mlc-ai/web-llm"); // here only: the chat smoke never loads web-llm on the page
  // cacheBackend: web-llm ≥ 0.2.80; useIndexedDBCache: ≤ 0.2.79
  const appConfig = { model_list: [embedRecord(modelId, options.compiledBatch) as unknown as WebLLM.ModelRecord], cacheBackend: "indexeddb", useIndexedDBCache: true } as WebLLM.AppConfig;
  const before = await served(options.countersUrl);
  const t0 = performance.now();
  let engine: WebLLM.MLCEngine | undefined;
  try {
    engine = await webllm.CreateMLCEngine(modelId, { appConfig });
    report.webllmDirectLoad = { ms: Math.round(performance.now() - t0), modelRequests: (await served(options.countersUrl)) - before };
  } catch (error) {
    report.webllmDirectLoad = { ms: Math.round(performance.now() - t0), error: errorOf(error) };
  }
  const direct = engine ? await embedTimed(async () => (await engine.embeddings.create({ input: inputs })) as unknown as EmbeddingList) : { report: { error: "not loaded" } };
  report.webllmDirectEmbed = direct.report;
  await engine?.unload().catch(() => undefined);
  report.pageShimLog = [...new Set(shimLog)];

  report.compare = {
    maxAbsDiffOursVsWebllm: maxAbsDiff(viaCache.vectors, direct.vectors),
    maxAbsDiffNetworkVsIndexedDBLoad: maxAbsDiff(viaNetwork.vectors, viaCache.vectors),
    maxAbsDiffSdkBase64VsFloat: maxAbsDiff(viaSdk.vectors, viaCache.vectors),
    maxAbsComponent: maxAbs(direct.vectors),
    // the same text in two different batches (padding differs)
    sameTextAcrossBatchesMaxAbsDiff: inputs[0] === inputs[inputs.length - 1] && viaCache.vectors ? maxAbsDiff([viaCache.vectors[0]], [viaCache.vectors[inputs.length - 1]]) : null,
  };
  return report;
}
