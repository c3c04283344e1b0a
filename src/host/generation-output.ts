/**
 * Where one generation's parser events go: the contract between the
 * generation loop (generation-loop.ts, run by the pipeline's `generate`:
 * engine → stop guard → family parser), which is the same for every protocol
 * face, and each face's output, which differs: the chat face's ChoiceBuilder
 * (chunk deltas, the assistant message; chat-face.ts) or the Responses output
 * builder (output items, semantic stream events; responses-run.ts). Types only.
 */
import type { ParseEvent } from "../parsers/types.js";
import type { TokenLogprob, ToolCall, Usage } from "../protocol/types.js";
import type { DecodeCounts } from "./decode-report.js";

/** Declared beside the engine's events (engine/types.ts), where the store that journals it can name it too; re-exported here as before. */
export type { GeneratedChunk } from "../engine/types.js";
import type { GeneratedChunk } from "../engine/types.js";

export interface GenerationOutput {
  /** One step's parser events (possibly none) and that step's logprobs. */
  write(events: ParseEvent[], logprobs: TokenLogprob[] | undefined): void;
  /** Each chunk the engine produced, before its events are written (only an output that journals them has it). */
  generated?(chunk: GeneratedChunk): void;
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
  /** Set when the reply was continued from a journaled start (a resumed response). */
  continued?: ContinuedReply;
}

/** A reply continued after its worker stopped: how much of it was there before, and what the engine prefilled to go on. */
export interface ContinuedReply {
  /** Tokens of the reply generated before (prefilled again, not decoded again). */
  reply_tokens: number;
  /** Tokens prefilled to continue: the prompt and the reply so far, less what the KV cache still held. */
  prefilled_tokens: number;
}

export interface SentBackReply {
  content: string;
  toolCalls: ToolCall[];
  reasoning: string;
  /** Chat: the last streamed delta's `reasoning_content` (what the openai SDK's stream helpers keep of the reasoning). */
  lastReasoningDelta?: string;
}
