/**
 * The legacy Completions face (`completions.create`, `POST /completions`) on
 * the pipeline core: the prompt goes to the engine raw (no chat template,
 * `EngineRequest.rawPrompt`: web-llm's completion API), for base models and
 * apps that template their own prompts. Each prompt gets `n` choices,
 * generated in turn in one queue slot; choice `i` of prompt `p` has index
 * `p * n + i`, as on the hosted API.
 */
import { generateAll } from "./parallel-choices.js";
import { ApiError } from "../protocol/api-error.js";
import { randomId } from "../protocol/ids.js";
import { joinLogprobs } from "../protocol/completion-logprobs.js";
import type { Completion, CompletionChoice, CompletionChunk, CompletionLogprobs } from "../protocol/completions-types.js";
import type { Usage, WebGpuStats } from "../protocol/types.js";
import { validateCompletionRequest, type NormalizedCompletionRequest } from "../protocol/validate-completions.js";
import type { EngineRequest } from "../engine/types.js";
import { contextWindowOf, type ModelRecord } from "../models/record.js";
import { isEmbeddingRecord, notAChatModel } from "../models/embedding.js";
import { addUsage } from "./chat-face.js";
import { newStats } from "./prepare-request.js";
import { runRawGeneration, type RawGeneration } from "./raw-generation.js";
import { streamInto, type ChunkSink, type PipelineCore, type RequestOptions } from "./pipeline-core.js";

export const newTextCompletionId = () => `cmpl-${randomId(24)}`;

/** One generation of one prompt, in the request's slot. */
type Generate = (prompt: number, write: (text: string, logprobs: CompletionLogprobs | null) => void, signal?: AbortSignal) => Promise<RawGeneration>;

/** The request's slot: its signal, and whether its generations run together (the engine batches). */
interface Slot {
  signal: AbortSignal;
  together: boolean;
}

export class CompletionsFace {
  constructor(private readonly core: PipelineCore) {}

  async create(body: unknown, options: RequestOptions = {}): Promise<Completion> {
    const request = validateCompletionRequest(body);
    if (request.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createCompletion returns one completion; use streamCompletion for `stream: true`." });
    }
    return this.inSlot(request, options.signal, async (generate, stats, slot) => {
      const choices: CompletionChoice[] = [];
      let usage: Usage | null = null;
      // Every prompt's n choices, index p × n + i; together where the engine batches.
      const results = await generateAll(request.prompts.length * request.n, slot.together, slot.signal, async (index, signal) => {
        const parts: Array<CompletionLogprobs | null> = [];
        const result = await generate(Math.floor(index / request.n), (_text, logprobs) => parts.push(logprobs), signal);
        return { parts, result };
      });
      for (const [index, { parts, result }] of results.entries()) {
        const prompt = request.prompts[Math.floor(index / request.n)];
        choices.push({
          index,
          text: (request.echo ? prompt : "") + result.text,
          logprobs: request.logprobs === undefined ? null : joinLogprobs(parts),
          finish_reason: result.finish,
        });
        // Each prompt counts once, however many choices it has.
        usage = addUsage(usage, result.usage, index % request.n !== 0);
      }
      return { id: newTextCompletionId(), object: "text_completion", created: Math.floor(Date.now() / 1000), model: request.model, choices, usage: usage as Usage, x_webgpu: stats };
    });
  }

  /**
   * Starts a streamed completion. Resolves once generation has started (errors
   * before that reject, as chat's do); from then on chunks go to `sink`: each
   * choice's text as it comes (after the prompt, with `echo`), then a chunk
   * with its `finish_reason`; with `stream_options.include_usage`, a last
   * chunk with no choices carries the usage.
   */
  stream(body: unknown, sink: ChunkSink<CompletionChunk>, options: RequestOptions = {}): Promise<void> {
    let request: NormalizedCompletionRequest;
    try {
      request = validateCompletionRequest(body);
    } catch (error) {
      return Promise.reject(error);
    }
    const id = newTextCompletionId();
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: CompletionChoice[]): CompletionChunk => ({ id, object: "text_completion", created, model: request.model, choices, ...(request.includeUsage ? { usage: null } : {}) });
    return streamInto(sink, (start) =>
      this.inSlot(request, options.signal, async (generate, stats) => {
        let usage: Usage | null = null;
        for (const [p, prompt] of request.prompts.entries()) {
          for (let i = 0; i < request.n; i++) {
            const index = p * request.n + i;
            if (request.echo) sink.write([chunk([{ index, text: prompt, logprobs: null, finish_reason: null }])]);
            const result = await generate(p, (text, logprobs) => {
              start();
              sink.write([chunk([{ index, text, logprobs: request.logprobs === undefined ? null : logprobs, finish_reason: null }])]);
            });
            start();
            sink.write([chunk([{ index, text: "", logprobs: null, finish_reason: result.finish }])]);
            usage = addUsage(usage, result.usage, i > 0);
          }
        }
        if (request.includeUsage) sink.write([{ id, object: "text_completion", created, model: request.model, choices: [], usage, x_webgpu: stats }]);
      }),
    );
  }

  /** The request's model resolved and checked, then its queue slot with the model loaded; `generate` runs one prompt. */
  private async inSlot<T>(request: NormalizedCompletionRequest, signal: AbortSignal | undefined, work: (generate: Generate, stats: WebGpuStats, slot: Slot) => Promise<T>): Promise<T> {
    const arrived = performance.now();
    const record = await this.core.resolve(request.model);
    if (isEmbeddingRecord(record)) throw notAChatModel(record);
    await this.core.checkDevice(record, undefined);
    return this.core.inSlot(record, signal, async (slotSignal, started) => {
      const engine = await this.core.engineFor(record);
      const stats = newStats({ arrived, started });
      const generate: Generate = (p, write, signal = slotSignal) => {
        const prompt = request.prompts[p];
        const output = { write, ...(request.logprobs !== undefined ? { logprobs: { base: prompt.length, top: request.logprobs } } : {}) };
        return runRawGeneration(engine, engineRequest(request, record, prompt), stats, started, output, signal, this.core.tally).catch((error) => {
          throw promptError(error, request, p);
        });
      };
      return work(generate, stats, { signal: slotSignal, together: (engine.batchRows ?? 1) > 1 });
    }, { generation: true });
  }
}

function engineRequest(request: NormalizedCompletionRequest, record: ModelRecord, prompt: string): EngineRequest {
  const window = contextWindowOf(record);
  return {
    model: record.model_id,
    messages: [],
    rawPrompt: prompt,
    sampling: {
      temperature: request.temperature,
      top_p: request.top_p,
      presence_penalty: request.presence_penalty,
      frequency_penalty: request.frequency_penalty,
      logit_bias: request.logit_bias,
      seed: request.seed,
      stop: request.stop,
      max_tokens: Math.min(request.maxTokens, window),
    },
    thinking: { enabled: false },
    continueFinalMessage: false,
    topLogprobs: request.logprobs,
    ...(request.cacheKey !== undefined ? { promptCacheKey: request.cacheKey } : {}),
  };
}

/** An engine error about the prompt (too long, too large) names `prompt` (or `prompt[i]`), not chat's `messages`. */
function promptError(error: unknown, request: NormalizedCompletionRequest, p: number): unknown {
  if (!(error instanceof ApiError) || (error.param !== "messages" && error.param !== "prompt")) return error;
  const param = request.prompts.length > 1 ? `prompt[${p}]` : "prompt";
  return new ApiError({ status: error.status, type: error.type, code: error.code, param, message: error.message.replace(/ Shorten the conversation\.$/, " Shorten the prompt."), retryAfterMs: error.retryAfterMs });
}
