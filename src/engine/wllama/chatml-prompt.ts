/**
 * Prompts for GGUF models of a known ChatML family, rendered by us rather
 * than by the GGUF's own chat template, so the model reads what the web-llm
 * path gives it: the messages as the family shaped them (its tool text in the
 * system turn, its call and result formats) in web-llm's ChatML conversation
 * template, and, with thinking off, the empty think block web-llm's
 * `enable_thinking: false` inserts (Qwen3). The text goes to llama.cpp as a
 * raw completion; llama.cpp tokenizes the ChatML markers as its special
 * tokens, and its counts stay the usage.
 *
 * Which records: those whose `record.family` names a ChatML family. Any other
 * record (no family, or another template) keeps the GGUF's own template,
 * rendered by @huggingface/jinja (gguf-template.ts). The seam does not import families/, so the names are
 * listed here (families/families.ts defines them).
 */
import type { ModelRecord } from "../../models/record.js";
import type { EngineRequest } from "../types.js";
import { textOf } from "./wllama-request.js";

/** Families whose web-llm conversation template is plain ChatML. */
const CHATML_FAMILIES = new Set(["qwen2.5", "qwen3", "hermes"]);

/** What Qwen3's template appends to the generation prompt when thinking is off (families/reasoning-shapes.ts EMPTY_THINK). */
const QWEN3_THINKING_OFF = "<think>\n\n</think>\n\n";

export interface ChatmlShape {
  family: string;
  /** Appended after the assistant header when the request turns thinking off. */
  thinkingOffPrefill?: string;
}

/** The ChatML shape for `record`, or undefined where the GGUF's own template renders its prompts. */
export function chatmlShapeOf(record: Pick<ModelRecord, "family">): ChatmlShape | undefined {
  const family = record.family;
  if (family === undefined || !CHATML_FAMILIES.has(family)) return undefined;
  return family === "qwen3" ? { family, thinkingOffPrefill: QWEN3_THINKING_OFF } : { family };
}

/**
 * The whole prompt: every shaped message as a ChatML turn, then the assistant's header (and the
 * thinking-off block). Continuing a final assistant message (`continueFinalMessage`) leaves that
 * turn open instead, its text last, as web-llm's continuation prompt does; llama.cpp completes it.
 */
export function chatmlPrompt(request: EngineRequest, shape: ChatmlShape): string {
  const last = request.messages.length - 1;
  const open = (i: number) => request.continueFinalMessage && i === last;
  const turns = request.messages.map((m, i) => `<|im_start|>${m.role}\n${textOf(m.content)}${open(i) ? "" : "<|im_end|>\n"}`).join("");
  if (request.continueFinalMessage) return turns;
  const prefill = !request.thinking.enabled && shape.thinkingOffPrefill !== undefined ? shape.thinkingOffPrefill : "";
  return `${turns}<|im_start|>assistant\n${prefill}`;
}
