/**
 * The generation loop every chat-shaped face shares: engine → stop guard →
 * the family's parser → the face's output (GenerationOutput), then usage, the
 * request's stats, and the reply's raw text remembered for the next turn.
 * A resumed reply (`prepared.resumeFrom`) replays its journaled start through
 * the same steps and has the engine continue after it, where the engine can.
 */
import { abortError } from "../protocol/api-error.js";
import type { Engine, EngineUsage } from "../engine/types.js";
import type { GeneratedChunk, GenerationOutput, GenerationResult, SentBackReply } from "./generation-output.js";
import type { Prepared } from "./prepare-request.js";
import { ConversationMemory } from "./conversation-memory.js";
import { StopGuard } from "./stop-guard.js";
import { addDecodeCounts, cachedOfFed, decodeCounts, predictionDetails, type DecodeCounts } from "./decode-report.js";
import type { WebGpuStats } from "../protocol/types.js";
import type { GenerationTally } from "./generation-tally.js";

/** Runs one choice through the engine and the family's parser; its events go to `output` (chat or Responses); `tally` counts it engine-wide. */
export async function runGeneration(engine: Engine, prepared: Prepared, output: GenerationOutput, signal: AbortSignal, memory: ConversationMemory, tally: GenerationTally): Promise<GenerationResult> {
  const parser = prepared.family.createParser(prepared.context);
  const guard = new StopGuard(prepared.engineRequest.sampling.stop);
  let raw = "";
  let reasoningTokens = 0;
  let engineUsage: EngineUsage | null = null;
  let finish: "stop" | "length" | "abort" = "stop";
  let first = true;
  const step = (chunk: GeneratedChunk) => {
    const text = guard.push(chunk.text);
    raw += text;
    const events = parser.push(text);
    if (parser.inReasoning) reasoningTokens++;
    output.write(events, chunk.logprobs);
  };
  let engineRequest = prepared.engineRequest;
  // A resumed reply: its journaled start goes through the same guard and parser (the same events again: the
  // face's run checks them against those sent and sends none twice), then the engine continues after it.
  const resumeFrom = prepared.resumeFrom ?? [];
  const continued = { ...engineRequest, continueReply: resumeFrom.map((chunk) => chunk.text).join("") };
  const continuing = resumeFrom.length > 0 && engine.continuesReply?.(continued) === true;
  // Regenerated from the start instead: its first chunks are the journaled ones again, not journaled twice.
  let journaledAlready = continuing ? 0 : resumeFrom.length;
  if (continuing) {
    for (const chunk of resumeFrom) step(chunk);
    engineRequest = continued;
  }
  for await (const event of engine.generate(engineRequest, signal)) {
    if (event.type === "done") {
      engineUsage = event.usage;
      finish = event.finish;
      // Counted even when aborted: its passes ran.
      tally.count(engine, event.usage);
      break;
    }
    if (first) {
      first = false;
      prepared.stats.ttft_ms = Math.round(performance.now() - prepared.started);
    }
    const chunk: GeneratedChunk = event.logprobs ? { text: event.text, logprobs: event.logprobs } : { text: event.text };
    if (journaledAlready > 0) journaledAlready--;
    else output.generated?.(chunk);
    step(chunk);
  }
  const held = guard.finish();
  raw += held;
  output.write([...parser.push(held), ...parser.finish()], undefined);
  if (finish === "abort" && signal.aborted) throw abortError();
  const { usage, decode } = recordUsage(prepared.stats, engineUsage);
  const continuedTokens = continuing ? usage.continuedTokens ?? 0 : 0;
  const fed = usage.promptTokens + continuedTokens;
  const cachedFed = cachedOfFed(fed, usage.cachedTokens);
  const cached = Math.min(cachedFed, usage.promptTokens);
  prepared.stats.prefill_tokens += fed - cachedFed;
  // A cut call's raw text is not what the app sends back (its arguments were closed): nothing to remember.
  if (finish === "stop" && !parser.cutCall) rememberReply(memory, prepared, output.reply(), raw);
  return {
    finish,
    cutCall: parser.cutCall,
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.promptTokens + usage.completionTokens,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, usage.completionTokens), ...predictionDetails(usage, prepared.request.prediction !== undefined) },
    },
    decode,
    ...(continuing ? { continued: { reply_tokens: continuedTokens, prefilled_tokens: fed - cachedFed } } : {}),
  };
}

function rememberReply(memory: ConversationMemory, prepared: Prepared, reply: SentBackReply, raw: string): void {
  const messages = prepared.request.messages;
  const key = ConversationMemory.keyOf(prepared.record.model_id, reply, messages[messages.length - 1], prepared.request.cacheKey, prepared.request.client);
  // Copied, not referenced: the reply's call objects are handed to the app, which may edit them in place before sending them back.
  const calls = reply.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  // Only a streamed reply can come back as its last reasoning fragment (the SDK stream helpers' artifact).
  const lastReasoningDelta = prepared.request.stream && reply.lastReasoningDelta ? { lastReasoningDelta: reply.lastReasoningDelta } : {};
  memory.remember(key, { raw, calls, reasoning: reply.reasoning, ...lastReasoningDelta });
}

/** A speed to three significant figures: on a CPU-emulated GPU a decode is ~0.05 tokens/s, which one decimal made 0. */
const speed = (n: number) => Number(n.toPrecision(3));

/** The engine's usage (zeros when it reported none), with its speeds and decode counts recorded in the request's stats (chat-shaped and raw generations alike). */
export function recordUsage(stats: WebGpuStats, reported: EngineUsage | null): { usage: EngineUsage; decode: DecodeCounts } {
  const usage = reported ?? { promptTokens: 0, cachedTokens: 0, completionTokens: 0, prefillTokensPerS: 0, decodeTokensPerS: 0 };
  stats.prefill_tokens_per_s = speed(usage.prefillTokensPerS);
  stats.decode_tokens_per_s = speed(usage.decodeTokensPerS);
  const decode = decodeCounts(usage);
  addDecodeCounts(stats, decode);
  return { usage, decode };
}
