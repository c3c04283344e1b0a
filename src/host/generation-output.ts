/**
 * Where one generation's parser events go. The generation loop
 * (EngineHost.generate: engine → stop guard → family parser) is the same for
 * every protocol face; only this output differs: the chat ChoiceBuilder
 * (chunk deltas, the assistant message) or the Responses output builder
 * (output items, semantic stream events).
 */
import type { ParseEvent } from "../parsers/types.js";
import type { ChunkDelta, TokenLogprob, ToolCall, Usage } from "../protocol/types.js";
import type { ChoiceBuilder } from "../protocol/choice-builder.js";
import type { DecodeCounts } from "./decode-report.js";

export interface GenerationOutput {
  /** One step's parser events (possibly none) and that step's logprobs. */
  write(events: ParseEvent[], logprobs: TokenLogprob[] | undefined): void;
  /** The reply as an app sends it back (visible content, calls with ids, reasoning): what the KV-reuse memory keys and checks. */
  reply(): SentBackReply;
}

/** How a generation ended, and its token counts. */
export interface GenerationResult {
  finish: "stop" | "length" | "abort";
  /** The output ended inside a call (max_tokens, a stop string, end of output): the call is out with the arguments it had. */
  cutCall: boolean;
  usage: Usage;
  /** Forward passes and speculative drafts of this generation. */
  decode: DecodeCounts;
}

export interface SentBackReply {
  content: string;
  toolCalls: ToolCall[];
  reasoning: string;
  /** Chat: the last streamed delta's `reasoning_content` (what the openai SDK's stream helpers keep of the reasoning). */
  lastReasoningDelta?: string;
}

/** The chat face: events become chunk deltas of one choice. */
export function choiceOutput(builder: ChoiceBuilder, emit: (deltas: ChunkDelta[], logprobs: TokenLogprob[] | undefined) => void): GenerationOutput {
  return {
    write(events, logprobs) {
      builder.addLogprobs(logprobs);
      emit(builder.deltas(events), logprobs);
    },
    reply() {
      const message = builder.message();
      return { content: message.content ?? "", toolCalls: message.tool_calls ?? [], reasoning: message.reasoning_content ?? "", lastReasoningDelta: builder.lastReasoningFragment() };
    },
  };
}
