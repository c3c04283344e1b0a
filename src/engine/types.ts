/**
 * The engine seam: everything above it is OpenAI logic and is tested without a
 * GPU; below it sit the engine kinds of the registry (engine/registry.ts):
 * web-llm (engine/webllm/), the scripted engine (engine/scripted.ts), and any
 * other registered. An engine takes prompt messages already shaped for the
 * model's family (or a raw prompt, `rawPrompt`) and yields raw text deltas,
 * then one `done` event; its kind says what it can do (`EngineCapabilities`).
 */
import type { AudioFormat, ImagePart, PcmAudio, TextPart, TokenLogprob } from "../protocol/types.js";
import type { EngineResponseFormat } from "../protocol/normalized.js";

/** The response-format forms are the normalized request's (protocol/normalized.ts): the engine takes them as validation made them. */
export type { EngineResponseFormat };
import type { ModelRecord } from "../models/record.js";
import type { PromptCacheSettings } from "./prompt-cache/config.js";
import type { BatchCounters } from "./batching/counters.js";
import type { batchingSettings } from "./batching/options.js";

/** What the host measured of one audio input before it reached the engine. */
export interface EngineAudioInfo {
  /** The container or form the app sent. */
  source: AudioFormat | "pcm_f32";
  /** Mono samples at `sampleRate` (WAV: counted from its header; web-llm decodes it). */
  samples: number;
  sampleRate: number;
  /** Channels of the source (mixed down to mono). */
  channels: number;
}

/**
 * Audio as it reaches the engine, in web-llm 0.2.86's `input_audio` forms:
 * WAV as sent (base64), every other container decoded to mono `pcm_f32` in
 * the worker (host/audio-input.ts). `audio` is the host's measurement; the
 * web-llm adapter leaves it out of what it sends.
 */
export interface EngineAudioPart {
  type: "input_audio";
  input_audio: { data: string; format: "wav" } | PcmAudio;
  audio: EngineAudioInfo;
}

/** A content part an engine receives. */
export type EnginePart = TextPart | ImagePart | EngineAudioPart;

export interface EngineMessage {
  role: "system" | "user" | "assistant" | "tool";
  /** Strings everywhere; parts only for user messages carrying images or audio. */
  content: string | EnginePart[];
}

export interface SamplingParams {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  logit_bias?: Record<string, number>;
  seed?: number;
  /** Strings that end the output; the output is cut before the match. */
  stop: string[];
  max_tokens: number;
}

/**
 * What an engine can do, as the host's gates ask it (engine/registry.ts
 * declares them per engine kind). Each gate asks the one it means: the URL
 * policy and the download ask `prefetch`/`ownsCache`, the adapter and fit
 * checks ask `gpu`, the queue asks `batch`.
 */
/** A cache layout the host's downloader fills: MLC's (web-llm) or a GGUF's (wllama; cache/gguf-artifacts.ts). */
export type PrefetchLayout = "mlc" | "gguf";

export interface EngineCapabilities {
  /** Runs on the user's GPU: the host probes the adapter (WebGPU, shader-f16, the fit in memory) before loading. */
  readonly gpu: boolean;
  /**
   * The cache layout the engine loads from that the host's downloader fills
   * first (src/cache/: MLC's or a GGUF's, with byte progress, resume, checks
   * and quota);
   * null: the host downloads nothing for it. An engine may still decline at
   * run time (`Engine.acceptsPrefetch`: web-llm ≤ 0.2.79 fetches for itself).
   */
  readonly prefetch: PrefetchLayout | null;
  /** The engine fetches and keeps the weights in a cache of its own: `Engine.holdsModel` says whether a model is there. */
  readonly ownsCache: boolean;
  /** The engine may decode several generations together (`Engine.batchRows`, `batchCounters`): the queue lets them share it. */
  readonly batch: boolean;
  /** The engine verifies drafts (a `prediction`, cached replies): off, the host sends `speculative: false`. */
  readonly speculative: boolean;
  /** The `responseFormat` forms the engine takes; a request needing another is refused (400) before generating. */
  readonly responseFormats: readonly EngineResponseFormat["type"][];
}

export interface ThinkingControl {
  enabled: boolean;
  /**
   * The model's family reasons and can be switched on and off: an engine whose
   * chat template has a switch for it (`enable_thinking`) sets it to `enabled`.
   */
  switchable?: boolean;
  /** Reasoning token budget; when spent the engine forces `endMarker`. */
  budgetTokens?: number;
  endMarker?: string;
}

export interface EngineRequest {
  /** Resolved catalog id, e.g. `Qwen3-0.6B-q4f32_1-MLC`. */
  model: string;
  messages: EngineMessage[];
  sampling: SamplingParams;
  responseFormat?: EngineResponseFormat;
  thinking: ThinkingControl;
  /** Continue the last (assistant) message instead of starting a new turn. */
  continueFinalMessage: boolean;
  /** Number of alternatives per token to report; undefined = no logprobs. */
  topLogprobs?: number;
  /** `prompt_cache_key` (or `user` / `safety_identifier`): the engine reuses only cached sequences (and cached replies as drafts) of this key; none: only unkeyed ones. */
  promptCacheKey?: string;
  /**
   * A raw-prompt request (`/completions`): this text is the whole prompt, tokenized as is with no
   * chat template (web-llm: `engine.completions.create`). `messages` is then empty, thinking off,
   * no `responseFormat`.
   */
  rawPrompt?: string;
  /**
   * The expected output (`prediction` of a chat request), as text: the first
   * source of speculative drafts (engine/speculative/). Engines tokenize it;
   * it never changes the output, only how many forward passes it takes.
   */
  prediction?: string;
  /** Speculative decoding (`createClient({ speculative })`); absent: on where the engine can. */
  speculative?: boolean;
  /**
   * The start of this very reply, generated before its worker stopped (a
   * background response resumed after a reload): the engine prefills it after
   * the prompt, as the reply's own beginning (not a new turn), and yields only
   * what follows. `max_tokens` counts its tokens. Set only where
   * `Engine.continuesReply` said yes.
   */
  continueReply?: string;
  /**
   * Who asked (the shared worker's tab, a client): a batching engine admits
   * rows in turns between owners. Absent: the host's one client.
   */
  owner?: string;
}

export interface EngineUsage {
  /** All prompt tokens, including those served from the KV cache. */
  promptTokens: number;
  /** Prompt tokens the engine did not prefill (already in its KV cache); the host reports them as `cached_tokens`. */
  cachedTokens: number;
  completionTokens: number;
  prefillTokensPerS: number;
  decodeTokensPerS: number;
  /** Forward passes after the prompt's prefill (decode and verify steps). Absent: one per generated token but the first. */
  decodePasses?: number;
  /** Tokens proposed by speculative drafting (all sources), and how many of them the model accepted. */
  draftTokens?: number;
  acceptedDraftTokens?: number;
  /** Of `draftTokens`, those a grammar forced (jump-forward: the only text it allows next). */
  jumpForwardTokens?: number;
  /** OpenAI's Predicted Outputs counts: prediction tokens that appeared in the output through accepted drafts, and the rest. */
  acceptedPredictionTokens?: number;
  rejectedPredictionTokens?: number;
  /** `continueReply`'s tokens: prefilled with the prompt (not in `promptTokens`), counted in `completionTokens`. */
  continuedTokens?: number;
  /**
   * Tokens the model sampled in this generation: its completion tokens (not `continuedTokens`), plus the
   * end-of-text token where the reply ended by itself. Absent: taken as one per forward pass plus the draft
   * tokens each accepted, which counts one too many where a stop string or an abort cut a verify pass's
   * accepted drafts (its own last token was never emitted).
   */
  sampledTokens?: number;
  /**
   * A batching engine (`Engine.batchRows` > 1): how many rows shared the
   * forward passes this generation took part in (`x_webgpu.batch`), and how
   * many passes that was. Absent: the engine decodes one sequence at a time.
   */
  batch?: { maxRows: number; meanRows: number; passes: number };
}

export type EngineEvent =
  | { type: "text"; text: string; logprobs?: TokenLogprob[] }
  | { type: "done"; finish: "stop" | "length" | "abort"; usage: EngineUsage };

/** One piece of a reply as the engine produced it (before the stop guard): what a background response journals, so a run resumed after its worker stopped can continue the reply (generation-loop.ts). */
export interface GeneratedChunk {
  text: string;
  logprobs?: TokenLogprob[];
}

export interface LoadProgress {
  phase: "download" | "load" | "compile";
  loadedBytes: number;
  totalBytes: number;
  /** 0..1, never decreasing across the phases of one load. */
  fraction: number;
  /** Seconds left at the current rate (download phase); null until a rate is known. */
  etaS: number | null;
  /** Download rate, bytes per second averaged since the first byte; null until known, absent outside the download phase. */
  bytesPerS?: number | null;
  file: string | null;
}

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /**
   * A web-llm hint: `chatOpts.conv_config` overrides for the family (e.g. a tool role), from the
   * web-llm kind's `loadHints` (engine/webllm/kind.ts). Other engines never get it.
   */
  convConfig?: Record<string, unknown>;
  cacheBackend?: "indexeddb" | "cache" | "opfs";
  /**
   * For a kind whose prefetch layout is "gguf": reads the files the host's
   * downloader stored for the record, as Blobs in part order (disk-backed in
   * OPFS and the Cache API), so the engine fetches nothing itself.
   */
  storedFiles?: () => Promise<Blob[]>;
  /**
   * Unload the resident model of the other kind (chat vs embedding) first:
   * the host found that both do not fit in GPU memory together.
   */
  exclusive?: boolean;
  /** Prompt caching as the client set it (`createClient({ promptCache })`); absent: the engine's own default. */
  promptCache?: PromptCacheSettings;
}

/**
 * One batch for an embedding model (no larger than the batch its library was
 * compiled for: the host splits requests). `firstIndex` is the request-wide
 * index of `input[0]`, so an engine's error names the right `input[i]`.
 */
export interface EmbedRequest {
  /** Resolved catalog id of a loaded embedding model. */
  model: string;
  /** Texts, or token ids where the engine takes them (`embedsTokenIds`). */
  input: Array<string | number[]>;
  firstIndex: number;
}

export interface EmbedResult {
  /** One vector per input, in input order. */
  embeddings: number[][];
  /** Tokens the model read (padding excluded). */
  promptTokens: number;
}

/** Thrown (or reported) by an engine whose GPU device was lost; maps to 503. */
export const DEVICE_LOST = "device_lost";

/** What a CPU engine's runtime reports of its threads once a model is loaded. */
export interface EngineCpuThreads {
  multithread: boolean;
  n_threads: number;
}

/**
 * Who renders the loaded chat model's prompts (`models.status(id).chat_template`):
 * "jinja" (the GGUF's own template, by @huggingface/jinja), "llama.cpp" (its
 * own Jinja engine, where ours cannot: `reason` is our error, shortened), or
 * "family:<name>" (the family's prompt, rendered by this library).
 */
export interface ChatTemplateReport {
  renderer: "jinja" | "llama.cpp" | `family:${string}`;
  reason?: string;
}

export interface Engine {
  /** Loads `model`; a no-op when it is already the loaded model with the same options. */
  load(model: ModelRecord, options: LoadOptions): Promise<void>;
  /** Runs one generation. Aborting `signal` stops it; the iterator then ends with `done` `abort`. */
  generate(request: EngineRequest, signal: AbortSignal): AsyncIterable<EngineEvent>;
  unload(): Promise<void>;
  /**
   * Tokens the prompt of `request` takes in the loaded model (control tokens
   * included), without generating. Optional: the host estimates without it.
   */
  countTokens?(request: EngineRequest): Promise<number>;
  /**
   * Whether this engine can continue `request`'s reply after its
   * `continueReply` exactly as the reply would have gone on when decoding is
   * greedy: the state decoding carries (penalty counts, a grammar's position,
   * a reasoning budget spent) is rebuilt from the text, or the request has
   * none (engine/continuation.ts). Absent: never (a resumed response then
   * regenerates from the start and checks what it had sent).
   */
  continuesReply?(request: EngineRequest): boolean;
  /** The id of the loaded model, if any. */
  readonly loadedModel: string | null;
  /**
   * Continuous batching: how many generations of the loaded chat model the
   * engine decodes together, each step one forward over all of them
   * (engine/batching/). The host then lets up to this many generations run at
   * once. Absent or 1: one at a time. Read at each admission: it may change
   * with the loaded model.
   */
  readonly batchRows?: number;
  /**
   * The engine may batch a model it has yet to load (web-llm, whose row cap
   * is known once the model is loaded and its rows sized to the device). The
   * host then treats generations as a batching engine's before the load: the
   * first holds the engine alone to load, and the others join once it is
   * loaded, up to `batchRows` as it is then (one at a time when the model
   * cannot batch).
   */
  readonly batchesAfterLoad?: boolean;
  /**
   * A batching engine's own engine-wide counts since it was created (forward
   * passes, tokens, rows per pass), or null when it does not batch. Absent or
   * null: the host counts each generation's own figures (`client.stats()`).
   */
  batchCounters?(): BatchCounters | null;
  /** Why this engine decodes one sequence at a time (`client.stats()`); absent where it batches. */
  readonly oneAtATime?: string;
  /**
   * How the loaded model runs on the CPU, as the engine's runtime says (wllama:
   * `isMultithread()`, `getNumThreads()`); null when nothing is loaded. Absent:
   * the engine does not run on CPU threads of its own.
   */
  cpuThreads?(): EngineCpuThreads | null;
  /** Who renders the loaded chat model's prompt; null when no chat model is loaded. Absent: the engine does not say. */
  chatTemplate?(): Promise<ChatTemplateReport | null>;
  /**
   * What this engine can do. An engine made by its kind in engine/registry.ts
   * has the kind's; one an app passes as the host's engine
   * (`createClient({ engine })`) may declare its own here, and without them is
   * read from `requiresGpu`.
   */
  readonly capabilities?: EngineCapabilities;
  /** Runs on the user's GPU, as a web-llm engine does (the shorthand `capabilities` replace: true reads as web-llm's). */
  readonly requiresGpu?: boolean;
  /**
   * Whether the engine loads from the cache layout our downloader fills (src/cache/). Absent on a
   * GPU engine means yes; web-llm ≤ 0.2.79 reads another layout and fetches for itself.
   */
  acceptsPrefetch?(): Promise<boolean>;
  /**
   * For an engine that fetches for itself (`acceptsPrefetch` false): whether
   * its own cache holds `model` whole, so loading it downloads nothing (what
   * resuming a response checks: it never downloads).
   */
  holdsModel?(model: ModelRecord, cacheBackend?: LoadOptions["cacheBackend"]): Promise<boolean>;

  // ── embeddings (optional capability) ──
  // An engine that embeds holds at most one chat model and one embedding model at once: loading
  // an embedding record (model_type 1) replaces only the embedding model, loading a chat record
  // only the chat model, so chat and embedding requests never evict each other.
  /** Embeds one batch with the loaded embedding model `request.model`. Abort rejects with an AbortError. */
  embed?(request: EmbedRequest, signal: AbortSignal): Promise<EmbedResult>;
  /**
   * Refuses (400 naming `input[i]`) any input the loaded embedding model `request.model` cannot
   * read (too long for its window, a type it does not take) without embedding anything. The host
   * calls it with all of a request's inputs before the first batch, so a request that will fail
   * costs no GPU time; `embed` still refuses on its own for other callers.
   */
  checkEmbedInputs?(request: EmbedRequest): void | Promise<void>;
  /** The id of the loaded embedding model, if any. */
  readonly loadedEmbeddingModel?: string | null;
  /** Whether `embed` takes token-id arrays as well as texts. */
  readonly embedsTokenIds?: boolean;
}

/** Every response-format form (what web-llm's xgrammar and the scripted engine take). */
export const ALL_RESPONSE_FORMATS: readonly EngineResponseFormat["type"][] = ["json_object", "structural_tag", "grammar"];

/** What a host's options say to the engines it makes. */
export interface EngineSettings {
  promptCache: PromptCacheSettings;
  /** Continuous batching as the client asked for it; absent: off. */
  batching?: NonNullable<ReturnType<typeof batchingSettings>>;
}

/** What of a model family (families/types.ts) an engine may read at load. */
export interface EngineFamilyHints {
  /** web-llm's `conv_config` for the family (a tool role). */
  readonly convConfig?: Record<string, unknown>;
}

/** One engine kind of the registry (engine/registry.ts): what serves the records whose `engine.kind` names it. */
export interface EngineKind {
  /** The `engine.kind` of the records it serves. */
  readonly kind: string;
  readonly capabilities: EngineCapabilities;
  /**
   * `host`: one engine serves every record of the kind (it keeps one chat and
   * one embedding model resident, and loads another on demand); `record`:
   * each record gets its own engine, made from the record's `engine` settings.
   */
  readonly scope: "host" | "record";
  /** Makes the engine (for `record` when the scope is `record`; for the first record of the kind otherwise). */
  create(record: ModelRecord, settings: EngineSettings): Engine | Promise<Engine>;
  /**
   * The engine-specific load options a chat model's family asks of this engine
   * (web-llm: the family's `conv_config`). The family is typed by what engines
   * read of it, so the seam does not import families/.
   */
  loadHints?(family: EngineFamilyHints): Partial<LoadOptions>;
  /** The records this kind brings to every catalog (web-llm: its prebuilt list), loaded when the whole catalog is first asked for. */
  catalog?(): Promise<ModelRecord[]>;
}
