/**
 * Every family this library knows, as data: output format, reasoning shape,
 * capabilities. The prompt side of each format lives in its own module
 * (styles/); `define.ts` assembles a Family from a spec and a style.
 */
import type { ReasoningShape } from "./types.js";

const think = (over: Partial<ReasoningShape>): ReasoningShape => ({
  open: "<think>",
  close: "</think>",
  defaultOn: true,
  promptOpened: false,
  gap: "\n\n",
  switchable: true,
  ...over,
});

/** The Qwen templates' "thinking off": an empty think block. */
const EMPTY_THINK = "<think>\n\n</think>\n\n";
/** Qwen3 hybrid thinking: the model writes `<think>…</think>`; off = the template's empty block. */
export const QWEN3_REASONING = think({ offPrefill: EMPTY_THINK });
/** Qwen3.5: the conversation template opens `<think>\n`; the model writes only `</think>`. */
export const QWEN35_REASONING = think({ promptOpened: true, offPrefill: EMPTY_THINK });
/**
 * DeepSeek-R1 distills always think. Their official template opens `<think>\n`
 * in the generation prompt, so they were trained to write only `</think>`;
 * web-llm's `deepseek_r1_*` conversation templates do not open it, and its chat
 * API cannot append to the generation prompt (a changed assistant role prefix
 * would also reach every earlier turn). So the output is read as vLLM's R1
 * parser reads it: it starts inside the block whether or not the model writes
 * `<think>` (an opener it writes is accepted), everything before `</think>` is
 * reasoning, and a `</think>` never reaches content.
 */
export const R1_REASONING = think({ switchable: false, promptOpened: true });
/** Ministral-3-Reasoning: `[THINK]…[/THINK]`, asked for by its default system prompt. */
export const MINISTRAL_REASONING: ReasoningShape = { open: "[THINK]", close: "[/THINK]", defaultOn: true, promptOpened: false, gap: "", switchable: true };
/** Gemma 4: `<|think|>` in the system turn turns it on; output `<|channel>thought\n…<channel|>`. */
export const GEMMA4_REASONING: ReasoningShape = { open: "<|channel>thought", close: "<channel|>", defaultOn: false, promptOpened: false, gap: "", switchable: true };
