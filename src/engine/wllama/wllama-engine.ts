/**
 * The wllama engine: GGUF models on llama.cpp compiled to WebAssembly
 * (`@wllama/wllama` 3.8.1), behind the same Engine seam as web-llm. It runs
 * where WebGPU is missing (CPU, SIMD; threads when the page is cross-origin
 * isolated: wllama-threads.ts), so it does not require a GPU and the host skips its adapter and
 * fit checks for it.
 *
 * A record selects it with `engine: { kind: "wllama", wasm }` and names its
 * GGUF file by URL in `model`. The host's downloader stores the GGUF in the
 * app's cache backend first (cache/gguf-artifacts.ts: integrity, resume,
 * quota, stall watchdog, progress); the engine hands wllama the stored
 * files as Blobs (disk-backed in OPFS and the Cache API), fetching nothing.
 * Prompts of a record whose `family` is a known ChatML family are rendered by
 * us as web-llm would give them (chatml-prompt.ts); any other record's from
 * the GGUF's own `tokenizer.chat_template` by `@huggingface/jinja`
 * (gguf-prompt.ts); both are sent as a raw completion. A template that Jinja
 * cannot render is left to llama.cpp's own Jinja engine (createChatCompletion;
 * a final assistant message is then continued by llama-server itself:
 * prefill-echo.ts). Usage comes from llama-server's own counts
 * (`timings`: prompt tokens prefilled and reused, tokens generated); logprobs
 * from its per-token probabilities (wllama-logprobs.ts).
 *
 * In a SharedWorker (which cannot start Workers in Chromium) a connected tab
 * starts llama.cpp's Worker for it (wllama-tab-host.ts); when that tab
 * closes, the requests waiting on it fail with a 503 and the model is let go,
 * so the next load is hosted by another tab.
 */
import { ApiError, abortError, isAbortError } from "../../protocol/api-error.js";
import { contextWindowOf, type ModelRecord, type WllamaRecordEngine } from "../../models/record.js";
import type { EmbedRequest, EmbedResult, Engine, EngineCpuThreads, EngineEvent, EngineRequest, EngineUsage, LoadOptions } from "../types.js";
import { embedWithWllama } from "./wllama-embed.js";
import type { WllamaChatChunk, WllamaFinish, WllamaInstance, WllamaRawChunk, WllamaTimings } from "./wllama-api.js";
import { importWllama } from "./import-wllama.js";
import { chatmlPrompt, chatmlShapeOf, type ChatmlShape } from "./chatml-prompt.js";
import { GgufPrompts } from "./gguf-prompt.js";
import { chatLogprobs, checkWllamaRequest, continuedText, RAW_CHAT_TEXT, rawLogprobs, templateSwitches, wllamaMessages, wllamaSampling } from "./wllama-request.js";
import { PrefillEcho, type StreamedText } from "./prefill-echo.js";
import { tokenLogprobsOf } from "./wllama-logprobs.js";
import { WLLAMA_WASM_URL } from "./wllama-catalog.js";
import { checkThreadsSetting, contextThreadCount } from "./wllama-threads.js";
import { hostedStream, leaseHostingTab, loadWithTabWorker, type TabWorkerLease } from "./wllama-tab-host.js";

/** Absolute: wllama starts its own worker from a blob: URL, against which a relative path would not resolve. */
function absolute(url: string): string {
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  return base ? new URL(url, base).href : url;
}

/** wllama logs its progress and the model's metadata to the console: only its warnings and errors reach the app's. */
const noop = () => undefined;
const QUIET = { debug: noop, log: noop, warn: (...args: unknown[]) => console.warn(...args), error: (...args: unknown[]) => console.error(...args) };

function usageOf(timings: WllamaTimings | undefined, emitted: number): EngineUsage {
  if (!timings) return { promptTokens: 0, cachedTokens: 0, completionTokens: emitted, prefillTokensPerS: 0, decodeTokensPerS: 0 };
  return {
    promptTokens: timings.prompt_n + timings.cache_n,
    cachedTokens: timings.cache_n,
    completionTokens: timings.predicted_n,
    prefillTokensPerS: timings.prompt_per_second,
    decodeTokensPerS: timings.predicted_per_second,
  };
}

function finishOf(reason: WllamaFinish): "stop" | "length" {
  return reason === "length" ? "length" : "stop";
}

/** `embedding`: the record is a GGUF embedding model (model_type 1): loaded for embeddings, it embeds and does not chat. */
export function createWllamaEngine(spec: WllamaRecordEngine, embedding = false): Engine {
  let wllama: WllamaInstance | null = null;
  let loaded: string | null = null;
  /** The loaded record's ChatML family, when it has one: its prompts are rendered by us. */
  let chatml: ChatmlShape | undefined;
  /** What the loaded wllama reports of its threads. */
  let threads: EngineCpuThreads | null = null;
  /** Any other chat record's: its GGUF's own template, rendered by us where our Jinja can. */
  let ggufPrompts: GgufPrompts | undefined;
  /** In a SharedWorker: the tab whose Worker runs llama.cpp (null: wllama's Worker is this context's own). */
  let hosted: TabWorkerLease | null = null;
  /** Why the model was let go while loaded (its hosting tab closed): what a request that still finds it gone fails with. */
  let lostWith: ApiError | null = null;

  async function load(record: ModelRecord, options: LoadOptions): Promise<void> {
    if (loaded === record.model_id && wllama) return;
    await unload();
    lostWith = null;
    // wllama runs llama.cpp in a Worker of its own; Chromium gives a SharedWorker no Worker constructor, so there a tab starts it.
    const lease = leaseHostingTab(record.model_id);
    try {
      await loadOn(lease, record, options);
    } catch (error) {
      lease?.release();
      throw error;
    }
  }

  /** `load`'s work once a tab (in a SharedWorker) was chosen to host llama.cpp's Worker. */
  async function loadOn(lease: TabWorkerLease | null, record: ModelRecord, options: LoadOptions): Promise<void> {
    const { Wllama } = await importWllama();
    // The host's downloader stored the GGUF (prefetch "gguf"); wllama reads the Blobs, nothing is fetched again.
    if (!options.storedFiles) throw new ApiError({ status: 500, code: "model_not_cached", param: "model", message: `${record.model_id}: the wllama engine loads its GGUF from the client's cache, and nothing was stored for it. Load it through the client (models.load or a request), which downloads it first.` });
    const blobs = await options.storedFiles();
    if (options.signal?.aborted) throw abortError();
    // Threads only where this context is cross-origin isolated (wllama-threads.ts); the record may ask for a count.
    const { n_threads } = contextThreadCount(checkThreadsSetting(spec.threads, record.model_id));
    const instance = new Wllama({ default: absolute(spec.wasm ?? WLLAMA_WASM_URL) }, { suppressNativeLog: true, logger: QUIET });
    // Hosted, the load waits on a tab that may never answer (frozen, misbehaving): the request's abort or timeout
    // abandons it, so the queue slot every tab's requests wait behind is freed, and the tab told to end the Worker.
    const abandon = () => lease?.lose(abortError());
    if (lease) options.signal?.addEventListener("abort", abandon, { once: true });
    try {
      const loading = () => instance.loadModel(blobs, { n_ctx: contextWindowOf(record), n_threads, ...(embedding ? { embeddings: true } : {}) });
      await (lease ? loadWithTabWorker(lease, loading) : loading());
    } catch (error) {
      await instance.exit().catch(() => undefined);
      if (lease?.lost.aborted) throw lease.lost.reason;
      throw new ApiError({ status: 500, code: "model_load_failed", param: "model", message: `llama.cpp could not load the GGUF of ${record.model_id} (${record.model}): ${error instanceof Error ? error.message : String(error)}` });
    } finally {
      options.signal?.removeEventListener("abort", abandon);
    }
    wllama = instance;
    loaded = record.model_id;
    hosted = lease;
    // The hosting tab closed: llama.cpp is gone with it. What waits on it fails (the lease's race); the next load re-hosts.
    if (lease) {
      const letGo = () => {
        if (wllama !== instance) return;
        void unload();
        lostWith = lease.lost.reason as ApiError;
      };
      if (lease.lost.aborted) queueMicrotask(letGo);
      else lease.lost.addEventListener("abort", letGo, { once: true });
    }
    // What wllama did, not what we asked: it starts threads only where SharedArrayBuffer can be posted.
    threads = { multithread: instance.isMultithread(), n_threads: instance.getNumThreads() };
    chatml = chatmlShapeOf(record);
    ggufPrompts = chatml || embedding ? undefined : new GgufPrompts(record.model_id, () => instance.getLoadedContextInfo(), blobs[0]);
    const bytes = blobs.reduce((sum, blob) => sum + blob.size, 0);
    options.onProgress?.({ phase: "load", loadedBytes: bytes, totalBytes: bytes, fraction: 1, etaS: null, file: null });
  }

  async function* generate(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineEvent> {
    if (!wllama || loaded !== request.model) throw lostWith ?? new ApiError({ status: 500, message: `Model ${request.model} is not loaded.` });
    // This load's: a tab that closes mid-request lets go of the model while the request still holds them.
    const instance = wllama;
    const lease = hosted;
    checkWllamaRequest(request, instance.getLoadedContextInfo().n_vocab);
    const sampling = wllamaSampling(request, signal);
    const top = request.topLogprobs ?? 0;
    let emitted = 0;
    let last: WllamaChatChunk | WllamaRawChunk | null = null;
    /** One streamed token: its text and its logprobs (a chunk may carry either alone: a stop string's held-back text). */
    function eventOf(streamed: StreamedText | null): EngineEvent | null {
      if (!streamed || (!streamed.text && !streamed.logprobs)) return null;
      emitted++;
      return { type: "text", text: streamed.text, ...(streamed.logprobs ? { logprobs: streamed.logprobs } : {}) };
    }
    /** A chunk's text and, where asked, its logprobs. */
    function streamedOf(text: string, chunk: WllamaChatChunk | WllamaRawChunk): StreamedText {
      const logprobs = request.topLogprobs === undefined ? undefined : tokenLogprobsOf(chunk.choices[0]?.logprobs, top);
      return logprobs ? { text, logprobs } : { text };
    }
    try {
      // A raw completion takes its prompt as is; a chat, the prompt we render (undefined: llama.cpp renders the GGUF's template).
      const prompt = request.rawPrompt ?? (chatml ? chatmlPrompt(request, chatml) : await ggufPrompts?.render(request));
      if (prompt !== undefined) {
        for await (const chunk of await hostedStream(lease, instance.createCompletion({ ...sampling, ...rawLogprobs(request), prompt, stream: true }))) {
          last = chunk;
          const event = eventOf(streamedOf(chunk.choices[0]?.text ?? "", chunk));
          if (event) yield event;
        }
      } else {
        const messages = wllamaMessages(request);
        // Continuing a final assistant message: llama-server echoes it before what it generates.
        const continued = continuedText(messages, request);
        const echo = continued === undefined ? null : new PrefillEcho(continued);
        for await (const chunk of await hostedStream(lease, instance.createChatCompletion({ ...sampling, ...chatLogprobs(request), ...RAW_CHAT_TEXT, ...templateSwitches(request), messages, stream: true }))) {
          last = chunk;
          const streamed = streamedOf(chunk.choices[0]?.delta.content ?? "", chunk);
          const event = eventOf(echo ? echo.take(streamed) : streamed);
          if (event) yield event;
        }
        const rest = eventOf(echo?.flush() ?? null);
        if (rest) yield rest;
      }
    } catch (error) {
      // Aborted: llama.cpp stopped the slot. Its counts are not reported then; what streamed is counted.
      if (signal.aborted || isAbortError(error) || (error as { name?: string })?.name === "AbortError") {
        yield { type: "done", finish: "abort", usage: usageOf(undefined, emitted) };
        return;
      }
      throw error;
    }
    // The last chunk carries the finish reason and llama-server's timings (its exact token counts).
    yield { type: "done", finish: finishOf(last?.choices[0]?.finish_reason ?? "stop"), usage: usageOf(last?.timings, emitted) };
  }

  async function unload(): Promise<void> {
    const instance = wllama;
    wllama = null;
    loaded = null;
    chatml = undefined;
    threads = null;
    ggufPrompts = undefined;
    hosted?.release();
    hosted = null;
    await instance?.exit().catch(() => undefined);
  }

  async function embed(request: EmbedRequest, signal: AbortSignal): Promise<EmbedResult> {
    if (!wllama || !embedding || loaded !== request.model) throw lostWith ?? new ApiError({ status: 500, message: `Embedding model ${request.model} is not loaded.` });
    const vectors = embedWithWllama(wllama, request, signal);
    return hosted ? hosted.race(vectors) : vectors;
  }

  return {
    load,
    generate,
    unload,
    embed,
    // One model per engine (one per record): a chat model or an embedding model, in its own slot.
    get loadedModel() {
      return embedding ? null : loaded;
    },
    get loadedEmbeddingModel() {
      return embedding ? loaded : null;
    },
    cpuThreads: () => threads,
    // models.status(id).chat_template: the family's prompt, or who renders the GGUF's own template (gguf-prompt.ts).
    chatTemplate: async () => (chatml ? { renderer: `family:${chatml.family}` as const } : ((await ggufPrompts?.report()) ?? null)),
    requiresGpu: false,
    oneAtATime: "wllama engine: one sequence at a time (llama.cpp's parallel slots are not used yet)",
  };
}
