/**
 * EngineRequest → the request bodies web-llm's chat and completion APIs take.
 * Pure: tested in Node.
 *
 * - Sampling fields web-llm knows are copied; unset ones stay unset so the
 *   model's own defaults (mlc-chat-config.json) apply, as in web-llm.
 * - `top_k`, `min_p`, `top_logprobs` above 5 and the reasoning budget are not
 *   web-llm's: the LogitProcessor does them (webllm-logits.ts); web-llm gets at
 *   most 5 alternatives.
 * - JSON in a constraint has the canonical separators only (responseFormatFor).
 * - A structural tag on a web-llm without them (0.2.79 ignores it silently)
 *   is sent as the same constraint in EBNF (`{type: "grammar"}`); one with no
 *   EBNF form (`tool_choice: "auto"`) is left out: the request runs
 *   unconstrained and the parser still reads the calls.
 * - `enable_thinking: false` only for Qwen3-style templates, where web-llm's
 *   empty `<think>\n\n</think>\n\n` block is the model's own "thinking off"
 *   form; on other templates it would inject junk.
 */
import type { EngineMessage, EngineRequest, EngineResponseFormat } from "../types.js";
import { jsonSchemaToEbnf } from "../../grammar/json-schema-ebnf.js";
import { structuralTagToEbnf, withCanonicalJson } from "../../grammar/structural-tag-ebnf.js";
import { withGrammarParam } from "../../protocol/grammar-refusal.js";

/** What web-llm 0.2.86 writes into the reply it streams and stores when a Qwen3-style request turns thinking off (the template's empty block). */
export const WEBLLM_THINKING_OFF = "<think>\n\n</think>\n\n";

/** web-llm validates `top_logprobs` in 0..5. */
export const WEBLLM_MAX_TOP_LOGPROBS = 5;

/** Whether web-llm's `extra_body.enable_thinking` is the right switch for this model (Qwen3 and Qwen3.5 templates). */
export function usesEnableThinking(modelId: string, family?: string): boolean {
  return /^qwen3/i.test(modelId) || /^qwen3/i.test(family ?? "");
}

/** Whether the request needs the worker's LogitProcessor. */
export function needsLogitProcessor(request: EngineRequest): boolean {
  return (
    request.sampling.top_k !== undefined ||
    request.sampling.min_p !== undefined ||
    (request.topLogprobs ?? 0) > WEBLLM_MAX_TOP_LOGPROBS ||
    (request.thinking.enabled && request.thinking.budgetTokens !== undefined && request.thinking.endMarker !== undefined)
  );
}

function samplingFields(request: EngineRequest): Record<string, unknown> {
  const s = request.sampling;
  const out: Record<string, unknown> = { max_tokens: s.max_tokens };
  for (const key of ["temperature", "top_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "seed"] as const) {
    if (s[key] !== undefined) out[key] = s[key];
  }
  if (s.logit_bias && Object.keys(s.logit_bias).length > 0) out.logit_bias = s.logit_bias;
  if (s.stop.length > 0) out.stop = s.stop;
  if (request.topLogprobs !== undefined) {
    out.logprobs = true;
    // web-llm records logprobs only when top_logprobs ≥ 1; the sampled token's own logprob is wanted even for 0.
    out.top_logprobs = Math.min(Math.max(request.topLogprobs, 1), WEBLLM_MAX_TOP_LOGPROBS);
  }
  return out;
}

/** The streamed `engine.chat.completions.create` body for a request. */
export function toChatRequest(request: EngineRequest, options: { enableThinkingSwitch: boolean; structuralTags?: boolean }): Record<string, unknown> {
  const body: Record<string, unknown> = {
    messages: request.messages.map((m) => ({ role: m.role, content: webLlmContent(m.content) })),
    stream: true,
    stream_options: { include_usage: true },
    ...samplingFields(request),
  };
  const format = responseFormatFor(request.responseFormat, options.structuralTags ?? true);
  if (format) body.response_format = format;
  if (options.enableThinkingSwitch && !request.thinking.enabled) body.extra_body = { enable_thinking: false };
  return body;
}

/**
 * A message's content as web-llm 0.2.86 takes it (`postInitAndCheckFields`,
 * `decodeAudioInput`): images as `{type: "image_url", image_url: {url}}` (a
 * data URL, no `detail`), audio as `{type: "input_audio", input_audio}` in
 * one of its two forms, base64 WAV or `{data: Float32Array, format:
 * "pcm_f32", sample_rate}` (the host's measurement stays out). web-llm takes
 * at most one text part per message: several are joined, in the place of
 * the first.
 */
export function webLlmContent(content: EngineMessage["content"]): string | Array<Record<string, unknown>> {
  if (typeof content === "string") return content;
  const texts = content.filter((p) => p.type === "text").map((p) => (p as { text: string }).text);
  let textPlaced = false;
  const out: Array<Record<string, unknown>> = [];
  for (const part of content) {
    if (part.type === "text") {
      if (!textPlaced) out.push({ type: "text", text: texts.join("\n") });
      textPlaced = true;
    } else if (part.type === "image_url") {
      out.push({ type: "image_url", image_url: { url: part.image_url.url } });
    } else {
      out.push({ type: "input_audio", input_audio: part.input_audio });
    }
  }
  return out;
}

/**
 * The response format in the dialect of this web-llm, with JSON bounded to
 * its canonical separators (issue 20, item 5: xgrammar's JSON lets a weak
 * model write whitespace until max_tokens): a JSON schema (`json_schema`,
 * `json_object` output) goes as an EBNF grammar where our compiler expresses
 * it exactly; structural tags become EBNF where web-llm has none (0.2.79),
 * and keep their tags with bounded JSON contents where it has them (0.2.86).
 */
export function responseFormatFor(format: EngineResponseFormat | undefined, structuralTags: boolean): EngineResponseFormat | undefined {
  // Each schema was checked against the size bound at validation; all of a request's tools together may still pass it: a 400.
  return withGrammarParam(format?.type === "structural_tag" ? "tools" : "response_format", () => compiledFormat(format, structuralTags));
}

function compiledFormat(format: EngineResponseFormat | undefined, structuralTags: boolean): EngineResponseFormat | undefined {
  if (!format) return format;
  if (format.type === "json_object") {
    // Compiled at validation already (the size bound): taken from there by the schema's text.
    const grammar = jsonSchemaToEbnf(JSON.parse(format.schema) as Record<string, unknown>, format.schema);
    return grammar === undefined ? format : { type: "grammar", grammar };
  }
  if (format.type !== "structural_tag") return format;
  if (structuralTags) return { type: "structural_tag", structural_tag: withCanonicalJson(format.structural_tag) };
  const grammar = structuralTagToEbnf(format.structural_tag);
  return grammar === undefined ? undefined : { type: "grammar", grammar };
}

/** The streamed `engine.completions.create` body that continues a rendered prompt. */
export function toCompletionRequest(request: EngineRequest, prompt: string): Record<string, unknown> {
  return { prompt, stream: true, stream_options: { include_usage: true }, ...samplingFields(request) };
}

/** The conversation-template fields of an mlc-chat-config.json that rendering reads. */
export interface ConvTemplate {
  system_template: string;
  system_message: string;
  roles: Record<string, string>;
  role_templates?: Record<string, string>;
  seps: string[];
  role_content_sep?: string;
  add_role_after_system_message?: boolean;
  render_empty_system_message?: boolean;
}

const PLACEHOLDER: Record<string, string> = { user: "{user_message}", assistant: "{assistant_message}", tool: "{tool_message}" };

/**
 * Renders messages ending with an assistant message as one prompt that the
 * model continues, the way web-llm's Conversation renders a chat (mlc
 * conv_template: system_template, role strings, role_templates, separators
 * alternating by message index) but with the final assistant message left
 * open: no separator after it. web-llm refuses such a chat request, so the
 * adapter sends this text to its completion API.
 */
export function renderContinuationPrompt(template: ConvTemplate, messages: EngineMessage[]): string {
  if (template.seps.length === 0) throw new Error("The conversation template has no separators.");
  let system = template.system_message;
  let rest = messages;
  if (messages[0]?.role === "system") {
    system = textOf(messages[0]);
    rest = messages.slice(1);
  }
  const sysText = system === "" && template.render_empty_system_message === false ? "" : template.system_template.replace("{system_message}", system);
  const contentSep = template.role_content_sep ?? ": ";
  let out = sysText;
  rest.forEach((m, i) => {
    const roleStr = template.roles[m.role];
    if (roleStr === undefined) throw new Error(`Role is not supported: ${m.role}`);
    const text = textOf(m);
    const body = template.role_templates?.[m.role]?.replace(PLACEHOLDER[m.role] ?? "", text).replace("{function_string}", "") ?? text;
    const prefix = template.add_role_after_system_message === false && sysText !== "" && i === 0 ? "" : roleStr + contentSep;
    const open = i === rest.length - 1 && m.role === "assistant";
    out += prefix + body + (open ? "" : template.seps[i % template.seps.length]);
  });
  return out;
}

function textOf(message: EngineMessage): string {
  return typeof message.content === "string" ? message.content : message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}
