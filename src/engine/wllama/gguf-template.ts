/**
 * Prompts for GGUF models of no ChatML family: the GGUF's own chat template
 * (`tokenizer.chat_template`) rendered by `@huggingface/jinja` (the Jinja
 * engine transformers.js renders Hugging Face templates with), so the prompt
 * is ours and goes to llama.cpp as a raw completion, as chatml-prompt.ts's does.
 *
 * The variables are those llama.cpp (llama-server in wllama 3.8.1) gives the
 * same template, so the prompt is the one it would render: `messages` (the
 * family's shaped turns, `tool` ones included, as role and text),
 * `add_generation_prompt`, `bos_token`/`eos_token` where the GGUF names them,
 * and `enable_thinking` (the request's, for a family whose thinking can be
 * switched; else `false`, llama-server's default when told nothing). Tool
 * definitions are not handed as `tools`: the family has already written them
 * into the messages (families/shape.ts), and llama.cpp did not get them either.
 *
 * Continuing a final assistant message follows llama-server's
 * `prefill_assistant`: the turns before it with the generation prompt, then the
 * message's text, left open; where the generation prompt opens a think block,
 * the block is closed first (`<think></think>`: a prefilled reply is content,
 * not reasoning; measured on the real engine, prefill-echo.ts). An empty final
 * message is a new turn.
 *
 * Pure: the engine hands in the Jinja module (loaded lazily) and the GGUF's
 * tokens; a template this Jinja cannot parse or render throws
 * TemplateUnsupported, and the engine falls back to llama.cpp's rendering.
 */
import type { EngineRequest } from "../types.js";
import { textOf } from "./wllama-request.js";

/** The part of `@huggingface/jinja` used here. */
export interface JinjaModule {
  Template: new (source: string) => { render(variables: Record<string, unknown>): string };
}

/** The GGUF's special tokens as the template sees them (llama.cpp: the token's text, special tokens rendered). */
export interface TemplateTokens {
  bos?: string;
  eos?: string;
  /** The vocabulary adds BOS itself when tokenizing (`tokenizer.ggml.add_bos_token`): a rendered leading BOS is dropped, as llama.cpp does. */
  addBos: boolean;
}

/** This template cannot be rendered by our Jinja: the engine lets llama.cpp render it. `message` says why. */
export class TemplateUnsupported extends Error {}

/** The opener of a think block a generation prompt may end with (DeepSeek-R1, Qwen3-Thinking). */
const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";

export interface GgufTemplate {
  /** The whole prompt for `request`'s messages. Throws TemplateUnsupported where the template fails to render. */
  render(request: EngineRequest): string;
}

/** Parses `source` once; TemplateUnsupported where our Jinja cannot parse it. */
export function compileGgufTemplate(jinja: JinjaModule, source: string, tokens: TemplateTokens): GgufTemplate {
  let template: InstanceType<JinjaModule["Template"]>;
  try {
    template = new jinja.Template(source);
  } catch (error) {
    throw new TemplateUnsupported(`@huggingface/jinja cannot parse the GGUF's chat template: ${messageOf(error)}`);
  }
  if (/\b(bos|eos)_token\b/.test(source) && (tokens.bos === undefined || tokens.eos === undefined)) {
    // Rendering it without them would give a prompt other than llama.cpp's.
    throw new TemplateUnsupported("the GGUF's chat template uses bos_token/eos_token, whose text is not known here");
  }

  function renderTurns(messages: Array<{ role: string; content: string }>, enableThinking: boolean): string {
    const variables: Record<string, unknown> = { messages, add_generation_prompt: true, enable_thinking: enableThinking };
    if (tokens.bos !== undefined) variables.bos_token = tokens.bos;
    if (tokens.eos !== undefined) variables.eos_token = tokens.eos;
    let text: string;
    try {
      text = template.render(variables);
    } catch (error) {
      throw new TemplateUnsupported(`@huggingface/jinja cannot render the GGUF's chat template: ${messageOf(error)}`);
    }
    // llama.cpp tokenizes the prompt adding BOS itself: a template's own leading BOS would be a second one.
    return tokens.addBos && tokens.bos && text.startsWith(tokens.bos) ? text.slice(tokens.bos.length) : text;
  }

  return {
    render(request) {
      const messages = request.messages.map((m) => ({ role: m.role, content: textOf(m.content) }));
      const last = messages.at(-1);
      const continued = request.continueFinalMessage && last?.role === "assistant" ? messages.pop()!.content : undefined;
      // llama-server's own default is false; only a switchable family's request says otherwise.
      const enableThinking = request.thinking.switchable ? request.thinking.enabled : false;
      const prompt = renderTurns(messages, enableThinking);
      if (!continued) return prompt;
      const open = prompt.trimEnd();
      return (open.endsWith(THINK_OPEN) ? `${open}${THINK_CLOSE}` : prompt) + continued;
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
