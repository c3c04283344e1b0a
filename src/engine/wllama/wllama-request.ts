/**
 * An EngineRequest as wllama's (llama-server's) OpenAI-compatible calls take
 * it: a raw prompt as is (ours: chatml-prompt.ts, gguf-template.ts), or, where
 * our Jinja cannot render the GGUF's own chat template, chat messages for
 * llama.cpp's Jinja engine to render; sampling mapped field by field.
 *
 * What the engine does not do yet is refused here with a 400 naming the
 * parameter, before anything runs, instead of being ignored: image/audio parts.
 */
import { ApiError, invalidParam } from "../../protocol/api-error.js";
import type { EngineMessage, EngineRequest } from "../types.js";
import type { WllamaChatLogprobs, WllamaChatParsing, WllamaMessage, WllamaRawLogprobs, WllamaSampling } from "./wllama-api.js";
import { GrammarError } from "../../grammar/ir.js";
import { ebnfToGbnf } from "./gbnf.js";

/** The request's grammar as GBNF; what GBNF cannot say is a 400 naming the grammar. */
function gbnfOf(ebnf: string): string {
  try {
    return ebnfToGbnf(ebnf);
  } catch (error) {
    if (!(error instanceof GrammarError)) throw error;
    throw new ApiError({ status: 400, code: "unsupported_grammar", param: "response_format", message: `This grammar cannot be given to llama.cpp (the wllama engine): ${error.message}.` });
  }
}

function notYet(param: string, what: string): ApiError {
  return new ApiError({
    status: 400,
    code: "unsupported_on_engine",
    param,
    message: `${what} is not supported yet on GGUF models (the wllama engine); use a web-llm model for it.`,
  });
}

/**
 * Refuses (400) what the wllama engine does not do yet; see the file's
 * opening comment. `vocabSize`: the loaded model's vocabulary (llama.cpp's
 * `n_vocab`), which `logit_bias` ids must fall inside.
 */
export function checkWllamaRequest(request: EngineRequest, vocabSize?: number): void {
  const format = request.responseFormat;
  // The host gives this engine grammars only (its capabilities); anything else is a host bug, said plainly.
  if (format && format.type !== "grammar") throw notYet(format.type === "structural_tag" ? "tool_choice" : "response_format", `A ${format.type} response format`);
  for (const [i, m] of request.messages.entries()) {
    if (typeof m.content !== "string" && m.content.some((part) => part.type !== "text")) throw notYet(`messages[${i}].content`, "Image and audio input");
  }
  const outside = vocabSize === undefined ? undefined : Object.keys(request.sampling.logit_bias ?? {}).find((id) => Number(id) >= vocabSize);
  if (outside !== undefined) {
    throw invalidParam("logit_bias", `\`logit_bias\` names token ${outside}, outside ${request.model}'s vocabulary (token ids 0 to ${vocabSize! - 1}).`);
  }
}

/** A message's text (its text parts joined): what both of this engine's prompt paths send. */
export function textOf(content: EngineMessage["content"]): string {
  return typeof content === "string" ? content : content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/**
 * The messages for `createChatCompletion`: the shaped turns, `tool` ones included, for the GGUF's
 * template to render. A final assistant message llama-server continues itself (prefill-echo.ts);
 * continuing an empty one is the template's own generation prompt, so it is left out.
 */
export function wllamaMessages(request: EngineRequest): WllamaMessage[] {
  const messages = request.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
  if (request.continueFinalMessage && messages.at(-1)?.role === "assistant" && messages.at(-1)?.content === "") messages.pop();
  return messages;
}

/** The text llama-server echoes before its continuation of the final assistant message; undefined where nothing is continued. */
export function continuedText(messages: WllamaMessage[], request: EngineRequest): string | undefined {
  const last = messages.at(-1);
  return request.continueFinalMessage && last?.role === "assistant" ? last.content : undefined;
}

/**
 * The reply's text as the model wrote it, for our parsers (the family's
 * reasoning and tool-call parsing, as on web-llm). llama-server's default
 * `reasoning_format` moves a reasoning template's think block out of
 * `delta.content` into `reasoning_content` (all of it where the template's
 * generation prompt opens `<think>`, as DeepSeek-R1's and Qwen3-Thinking's do),
 * which the engine does not read: the reasoning would be lost. With `"none"`
 * the text stays in `content`; where the template opened the block,
 * llama-server starts the text with that opener (`<think>\n`), which the
 * reasoning parsers of such families accept.
 */
export const RAW_CHAT_TEXT: WllamaChatParsing = { reasoning_format: "none" };

/**
 * A reasoning family that can be switched, on a GGUF template llama.cpp renders
 * (the fallback; gguf-template.ts passes the same): it renders it with
 * `enable_thinking` as the request has it. It must be said both ways: llama-server in wllama 3.8.1 renders with
 * `enable_thinking: false` when told nothing (measured: a Qwen3-style switch
 * closed an empty think block), so a thinking request would not think. A
 * template without the switch ignores it; a record of no known family gets
 * llama.cpp's default.
 */
export function templateSwitches(request: EngineRequest): { chat_template_kwargs?: { enable_thinking: boolean } } {
  return request.thinking.switchable ? { chat_template_kwargs: { enable_thinking: request.thinking.enabled } } : {};
}

/**
 * Sampling as llama-server reads it. `repetition_penalty` is its
 * `repeat_penalty`; `stop` ends generation inside llama.cpp (the host's stop
 * guard still cuts what reaches the app). The slot keeps its prompt cache on,
 * so `cache_n` reports the prefix it reused.
 */
export function wllamaSampling(request: EngineRequest, signal: AbortSignal): WllamaSampling {
  const s = request.sampling;
  const out: WllamaSampling = { max_tokens: s.max_tokens, abortSignal: signal, cache_prompt: true };
  if (s.temperature !== undefined) out.temperature = s.temperature;
  if (s.top_p !== undefined) out.top_p = s.top_p;
  if (s.top_k !== undefined) out.top_k = s.top_k;
  if (s.min_p !== undefined) out.min_p = s.min_p;
  if (s.seed !== undefined) out.seed = s.seed;
  if (s.presence_penalty !== undefined) out.presence_penalty = s.presence_penalty;
  if (s.frequency_penalty !== undefined) out.frequency_penalty = s.frequency_penalty;
  if (s.repetition_penalty !== undefined) out.repeat_penalty = s.repetition_penalty;
  if (s.stop.length > 0) out.stop = [...s.stop];
  if (s.logit_bias && Object.keys(s.logit_bias).length > 0) out.logit_bias = { ...s.logit_bias };
  if (request.responseFormat?.type === "grammar") out.grammar = gbnfOf(request.responseFormat.grammar);
  return out;
}

/**
 * How many alternatives to ask llama.cpp for (`n_probs`): at least 1, since
 * with 0 it reports no probabilities at all, not even the sampled token's;
 * the engine keeps `topLogprobs` of them. Undefined: no logprobs.
 */
function probsWanted(request: EngineRequest): number | undefined {
  return request.topLogprobs === undefined ? undefined : Math.max(request.topLogprobs, 1);
}

/** Logprobs for `createChatCompletion` (llama-server: `logprobs: true`, `top_logprobs` → `n_probs`). */
export function chatLogprobs(request: EngineRequest): WllamaChatLogprobs {
  const n = probsWanted(request);
  return n === undefined ? {} : { logprobs: true, top_logprobs: n };
}

/** Logprobs for `createCompletion` (llama-server: `logprobs` is the number of alternatives, `n_probs`). */
export function rawLogprobs(request: EngineRequest): WllamaRawLogprobs {
  const n = probsWanted(request);
  return n === undefined ? {} : { logprobs: n };
}
