/**
 * The Prompt API's shapes (webmachinelearning/prompt-api's IDL), declared
 * here so this package's types stand alone; they match
 * `@types/dom-chromium-ai`, and code typed with it compiles against ours.
 */
import type { Usage, WebGpuStats } from "../protocol/types.js";

export type Availability = "unavailable" | "downloadable" | "downloading" | "available";
export type LanguageModelMessageRole = "system" | "user" | "assistant";
/** `tool-call` / `tool-response` appear in the explainer's tool example; they are accepted and always supported. */
export type LanguageModelMessageType = "text" | "image" | "audio";
export type LanguageModelSamplingMode = "most-predictable" | "predictable" | "balanced" | "creative" | "most-creative";
export type LanguageModelMessageValue = string | Blob | ArrayBuffer | ArrayBufferView | ImageBitmapSourceLike | AudioBufferLike;

/** ImageBitmapSource, structurally: anything `createImageBitmap` takes (ImageData, ImageBitmap, canvases, elements, VideoFrame). */
export type ImageBitmapSourceLike = object;
/** Web Audio's AudioBuffer, structurally (it does not exist in workers' type libraries). */
export interface AudioBufferLike {
  readonly sampleRate: number;
  readonly numberOfChannels: number;
  readonly length: number;
  getChannelData(channel: number): Float32Array;
}

export interface LanguageModelMessageContent {
  type: LanguageModelMessageType;
  value: LanguageModelMessageValue;
}

export interface LanguageModelMessage {
  role: LanguageModelMessageRole;
  content: string | LanguageModelMessageContent[];
  /** Only on a final assistant message of prompt()/promptStreaming(): the reply continues it. */
  prefix?: boolean;
}

export type LanguageModelPrompt = string | LanguageModelMessage[];

export interface LanguageModelExpected {
  type: LanguageModelMessageType | "tool-call" | "tool-response";
  languages?: string[];
}

export interface LanguageModelTool {
  name: string;
  description: string;
  inputSchema: object;
  /** Called with the arguments the model gave (an object); its string result goes back to the model. */
  execute: (...args: any[]) => Promise<string>;
}

export interface LanguageModelCreateCoreOptions {
  expectedInputs?: LanguageModelExpected[];
  expectedOutputs?: LanguageModelExpected[];
  tools?: LanguageModelTool[];
  samplingMode?: LanguageModelSamplingMode;
  /** Legacy (extension contexts in Chrome): exclusive with samplingMode. */
  topK?: number;
  /** Legacy (extension contexts in Chrome): exclusive with samplingMode. */
  temperature?: number;
}

export interface CreateMonitor extends EventTarget {
  ondownloadprogress: ((this: CreateMonitor, event: ProgressEvent) => unknown) | null;
}

export interface LanguageModelCreateOptions extends LanguageModelCreateCoreOptions {
  signal?: AbortSignal;
  monitor?: (monitor: CreateMonitor) => void;
  initialPrompts?: LanguageModelMessage[];
}

export interface LanguageModelPromptOptions {
  /** A JSON schema object, or a RegExp the whole reply must match. */
  responseConstraint?: Record<string, unknown> | RegExp;
  omitResponseConstraintInput?: boolean;
  signal?: AbortSignal;
}

export interface LanguageModelAppendOptions {
  signal?: AbortSignal;
}

export interface LanguageModelCloneOptions {
  signal?: AbortSignal;
}

export interface LanguageModelParams {
  readonly defaultTopK: number;
  readonly maxTopK: number;
  readonly defaultTemperature: number;
  readonly maxTemperature: number;
}

/** A session, as `LanguageModel.create()` returns it. */
export interface LanguageModelSession extends EventTarget {
  prompt(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<string>;
  promptStreaming(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): ReadableStream<string>;
  append(input: LanguageModelPrompt, options?: LanguageModelAppendOptions): Promise<undefined>;
  measureContextUsage(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<number>;
  measureInputUsage(input: LanguageModelPrompt, options?: LanguageModelPromptOptions): Promise<number>;
  readonly contextUsage: number;
  readonly inputUsage: number;
  readonly contextWindow: number;
  readonly inputQuota: number;
  oncontextoverflow: ((event: Event) => unknown) | null;
  onquotaoverflow: ((event: Event) => unknown) | null;
  readonly topK: number;
  readonly temperature: number;
  readonly samplingMode: LanguageModelSamplingMode | undefined;
  clone(options?: LanguageModelCloneOptions): Promise<LanguageModelSession>;
  destroy(): undefined;
  /** Extension: the `usage` and `x_webgpu` of the session's last model request (e.g. what the prompt cache served), null before one. */
  readonly lastReport: { usage: Usage | null; stats: WebGpuStats | null } | null;
}

/** The class `createPromptApi` returns: `LanguageModel` with its statics. */
export interface LanguageModelClass {
  new (...args: never[]): LanguageModelSession;
  prototype: LanguageModelSession;
  create(options?: LanguageModelCreateOptions): Promise<LanguageModelSession>;
  availability(options?: LanguageModelCreateCoreOptions): Promise<Availability>;
  params(): Promise<LanguageModelParams>;
}
