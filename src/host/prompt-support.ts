/**
 * Two questions the Prompt API (src/prompt-api/) asks the host that no OpenAI
 * endpoint answers: how many tokens a conversation takes in the model
 * (`measureContextUsage`, `contextUsage`), and whether a model can serve here
 * and now (`LanguageModel.availability()`: the GPU probe, the model's fit, the
 * weight cache). Both run on the pipeline's own pieces, passed in by the host.
 */
import { ApiError } from "../protocol/api-error.js";
import { validateRequest, type NormalizedRequest } from "../protocol/validate.js";
import type { ChatTemplateReport, Engine, EngineCapabilities, EngineRequest } from "../engine/types.js";
import { fetchesWeights } from "../engine/registry.js";
import type { ModelRecord } from "../models/record.js";
import { isEmbeddingRecord } from "../models/embedding.js";
import { countWebLlmPromptTokens } from "../engine/webllm/webllm-count.js";
import { wllamaThreads, type EngineChoice } from "./engine-choice.js";

/** `client.tokens.count(body)`: the prompt tokens of a chat request, without generating. */
export interface TokenCount {
  object: "tokens.count";
  model: string;
  input_tokens: number;
}

/** `client.models.status(id)`: `downloadable` means the weights are not (completely) in the cache. */
export interface ModelStatus {
  id: string;
  status: "available" | "downloadable" | "unavailable";
  /** Why `unavailable` (no WebGPU, does not fit, unknown model). */
  reason?: string;
  /**
   * Which engine runs the model and why (host/engine-choice.ts), given
   * under `engine: "auto"` and for records that name their engine kind (a
   * GGUF); absent for a web-llm record without "auto" (web-llm runs it).
   * With "auto", `model` is the record's fallback where the GPU cannot
   * serve it. For wllama, `threads` ("multi" only where the page is
   * cross-origin isolated), `n_threads` and `threads_source`: "wllama" once the
   * model is loaded (what wllama reports), "planned" before (what the load asks).
   */
  engine?: { kind: string; model: string; reason: string; threads?: "multi" | "single"; n_threads?: number; threads_source?: "wllama" | "planned" };
  /**
   * Who renders the prompt, once the model (with "auto", the one that serves)
   * is loaded, for engines that say (wllama): "jinja" (the GGUF's own template
   * by @huggingface/jinja), "llama.cpp" with `reason` (ours could not parse or
   * render it: llama.cpp's own Jinja engine renders it), or "family:<name>".
   */
  chat_template?: ChatTemplateReport;
}

export interface PromptSupportContext {
  /** The chat pipeline up to the prompt shaped for the model, in a queue slot with the model loaded. */
  shaped<T>(request: NormalizedRequest, signal: AbortSignal | undefined, work: (engineRequest: EngineRequest, engine: Engine) => Promise<T>): Promise<T>;
  resolve(model: string): Promise<ModelRecord>;
  chooseEngine(model: string): Promise<EngineChoice>;
  /** `engine: "auto"` was asked for. */
  auto: boolean;
  engineFor(record: ModelRecord): Promise<Engine>;
  /** The engines started so far (a loaded wllama reports its threads). */
  engines(): Engine[];
  capabilitiesOf(record: ModelRecord): Promise<EngineCapabilities>;
  /** Throws (503) when this adapter cannot serve the record. */
  checkDevice(record: ModelRecord): Promise<void>;
  /** Whether every file of the record is in the weight cache. */
  cached(record: ModelRecord): Promise<boolean>;
}

export async function countTokens(context: PromptSupportContext, body: unknown, signal?: AbortSignal): Promise<TokenCount> {
  const request = validateRequest(body);
  if (request.stream) throw new ApiError({ status: 400, param: "stream", message: "Counting tokens generates nothing: leave `stream` out." });
  const tokens = await context.shaped(request, signal, async (engineRequest, engine) =>
    engine.countTokens ? engine.countTokens(engineRequest) : countWebLlmPromptTokens(undefined, engineRequest),
  );
  return { object: "tokens.count", model: request.model, input_tokens: tokens };
}

export async function modelStatus(context: PromptSupportContext, id: string): Promise<ModelStatus> {
  let choice: EngineChoice;
  try {
    choice = await context.chooseEngine(id);
  } catch (error) {
    return { id, status: "unavailable", reason: ApiError.from(error).message };
  }
  const { status, reason } = await statusOf(context, choice.record);
  const template = await chatTemplateOf(context, choice.record);
  const base = { id: choice.requested.model_id, status, ...(reason !== undefined ? { reason } : {}), ...(template ? { chat_template: template } : {}) };
  // Said where there is something to say: a choice was made ("auto"), or a record names its own engine kind.
  if (!context.auto && choice.requested.engine === undefined) return base;
  const engine = { kind: choice.engine, model: choice.record.model_id, reason: choice.reason, ...(choice.engine === "wllama" ? wllamaStatus(context.engines(), choice.record) : {}) };
  return { ...base, engine };
}

function wllamaStatus(engines: Engine[], record: ModelRecord): { threads: "multi" | "single"; n_threads: number; threads_source: "wllama" | "planned" } {
  // A record's `engine.threads` that is not a whole number is refused by the load (400); the plan reads it as absent.
  const asked = (record.engine as { threads?: unknown } | undefined)?.threads;
  const report = wllamaThreads(engines, record.model_id, typeof asked === "number" && Number.isInteger(asked) && asked >= 1 ? asked : undefined);
  return { threads: report.threads, n_threads: report.n_threads, threads_source: report.source };
}

/** The loaded engine's report of who renders `record`'s prompt; undefined before the load or where the engine does not say. */
async function chatTemplateOf(context: PromptSupportContext, record: ModelRecord): Promise<ChatTemplateReport | undefined> {
  if (isEmbeddingRecord(record)) return undefined;
  const engine = await context.engineFor(record).catch(() => undefined);
  if (engine?.loadedModel !== record.model_id || !engine.chatTemplate) return undefined;
  return (await engine.chatTemplate()) ?? undefined;
}

async function statusOf(context: PromptSupportContext, record: ModelRecord): Promise<Omit<ModelStatus, "engine">> {
  const modelId = record.model_id;
  if (isEmbeddingRecord(record)) return { id: modelId, status: "unavailable", reason: `${modelId} is an embedding model, not a chat model.` };
  const engine = await context.engineFor(record);
  const capabilities = await context.capabilitiesOf(record);
  // Loaded, or nothing to check and nothing to fetch (the scripted engine): available now.
  if (engine.loadedModel === modelId || (!capabilities.gpu && !fetchesWeights(capabilities))) return { id: modelId, status: "available" };
  try {
    await context.checkDevice(record);
  } catch (error) {
    return { id: modelId, status: "unavailable", reason: ApiError.from(error).message };
  }
  return { id: modelId, status: (await context.cached(record).catch(() => false)) ? "available" : "downloadable" };
}
