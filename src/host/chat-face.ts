/**
 * The Chat Completions face (`chat.completions.create`, `POST
 * /chat/completions`) on the pipeline core: validation, then n generations
 * into ChoiceBuilders (one completion) or one streamed into chunks.
 */
import { ApiError } from "../protocol/api-error.js";
import { validateRequest, type NormalizedRequest } from "../protocol/validate.js";
import { ChoiceBuilder } from "../protocol/choice-builder.js";
import { newCompletionId } from "../protocol/ids.js";
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta, CustomToolCall, FinishReason, TokenLogprob, ToolCall, Usage } from "../protocol/types.js";
import { customCallArguments } from "../protocol/custom-tools.js";
import type { GenerationOutput } from "./generation-output.js";
import { addCompletionDetails } from "./decode-report.js";
import { generateAll } from "./parallel-choices.js";
import { streamInto, type ChunkSink, type PipelineCore, type RequestOptions } from "./pipeline-core.js";

export class ChatCompletionsFace {
  constructor(private readonly core: PipelineCore) {}

  async create(body: unknown, options: RequestOptions = {}): Promise<ChatCompletion> {
    const request = { ...validateRequest(body), client: options.client };
    if (request.stream) {
      throw new ApiError({ status: 400, param: "stream", message: "createChatCompletion returns one completion; use streamChatCompletion for `stream: true`." });
    }
    return this.core.withSlot(request, options.signal, async (prepared, signal) => {
      const builders: ChoiceBuilder[] = [];
      const finishes: FinishReason[] = [];
      let usage: Usage | null = null;
      // n choices share the engine's forward passes where it batches.
      const together = ((await this.core.engineFor(prepared.record)).batchRows ?? 1) > 1;
      const results = await generateAll(request.n, together, signal, async (index, choiceSignal) => {
        const builder = new ChoiceBuilder(index, () => prepared.family.newToolCallId());
        return { builder, result: await this.core.generate(prepared, choiceOutput(builder, () => undefined), choiceSignal) };
      });
      for (const { builder, result } of results) {
        builders.push(builder);
        finishes.push(builder.finishReason(result.finish, result.cutCall));
        // The n choices answer one prompt: it counts once.
        usage = addUsage(usage, result.usage, usage !== null);
      }
      const completion: ChatCompletion = {
        id: newCompletionId(),
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: builders.map((builder, index) => ({
          index,
          message: builder.message(),
          finish_reason: finishes[index],
          logprobs: request.topLogprobs === undefined ? null : { content: builder.collectedLogprobs(), refusal: null },
        })),
        usage: usage as Usage,
        x_webgpu: prepared.stats,
      };
      return completion;
    });
  }

  /**
   * Starts a streamed completion. Resolves once generation has started (errors
   * before that reject: bad request, unknown model, queue full, load failure,
   * prompt too long); from then on chunks go to `sink`, which ends or fails.
   */
  stream(body: unknown, sink: ChunkSink, options: RequestOptions = {}): Promise<void> {
    let request: NormalizedRequest;
    try {
      request = { ...validateRequest(body), client: options.client };
    } catch (error) {
      return Promise.reject(error);
    }
    if (!request.stream) request = { ...request, stream: true };
    return streamInto(sink, (start) =>
      this.core.withSlot(request, options.signal, async (prepared, signal) => {
        const id = newCompletionId();
        const created = Math.floor(Date.now() / 1000);
        const chunk = (delta: ChunkDelta, finish: FinishReason | null = null, logprobs: ChatCompletionChunk["choices"][0]["logprobs"] = null): ChatCompletionChunk => ({
          id,
          object: "chat.completion.chunk",
          created,
          model: request.model,
          choices: [{ index: 0, delta, finish_reason: finish, logprobs }],
          ...(request.includeUsage ? { usage: null } : {}),
        });
        const builder = new ChoiceBuilder(0, () => prepared.family.newToolCallId());
        const wantLogprobs = request.topLogprobs !== undefined;
        const result = await this.core.generate(prepared, choiceOutput(builder, (deltas, logprobs) => {
          start();
          const chunks = deltas.map((delta, i) => chunk(delta, null, wantLogprobs && i === 0 && logprobs ? { content: logprobs, refusal: null } : null));
          if (chunks.length > 0) sink.write(chunks);
        }), signal);
        start();
        const tail: ChatCompletionChunk[] = [];
        const opening = builder.openingDelta();
        if (opening) tail.push(chunk(opening));
        tail.push(chunk({}, builder.finishReason(result.finish, result.cutCall)));
        if (request.includeUsage) {
          tail.push({ id, object: "chat.completion.chunk", created, model: request.model, choices: [], usage: result.usage, x_webgpu: prepared.stats });
        }
        sink.write(tail);
      }),
    );
  }
}

/** The chat face's output (generation-output.ts): a generation's events become chunk deltas of one choice. */
function choiceOutput(builder: ChoiceBuilder, emit: (deltas: ChunkDelta[], logprobs: TokenLogprob[] | undefined) => void): GenerationOutput {
  return {
    write(events, logprobs) {
      builder.addLogprobs(logprobs);
      emit(builder.deltas(events), logprobs);
    },
    reply() {
      const message = builder.message();
      return { content: message.content ?? "", toolCalls: (message.tool_calls ?? []).map(asSentBack), reasoning: message.reasoning_content ?? "", lastReasoningDelta: builder.lastReasoningFragment() };
    },
  };
}

/** A call as validation normalizes it when the app sends it back: a custom call as the function call it was rendered as. */
function asSentBack(call: ToolCall | CustomToolCall): ToolCall {
  return call.type === "custom" ? { id: call.id, type: "function", function: { name: call.custom.name, arguments: customCallArguments(call.custom.input) } } : call;
}

/**
 * The usage of several generations in one response. `samePrompt`: `next` is
 * another choice of a prompt already counted (`n` > 1): as the hosted API
 * counts, its prompt is counted once (the first choice's prompt and cached
 * tokens), its completion tokens are added.
 */
export function addUsage(total: Usage | null, next: Usage, samePrompt = false): Usage {
  if (!total) return next;
  const prompt = samePrompt ? total.prompt_tokens : total.prompt_tokens + next.prompt_tokens;
  const completion = total.completion_tokens + next.completion_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: total.prompt_tokens_details.cached_tokens + (samePrompt ? 0 : next.prompt_tokens_details.cached_tokens) },
    completion_tokens_details: addCompletionDetails(total.completion_tokens_details, next.completion_tokens_details),
  };
}
