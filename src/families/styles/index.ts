/** The prompt and grammar style of each output format. */
export { qwen, qwen3, hermes, prompted, deepseek } from "./hermes.js";
import { prompted } from "./hermes.js";
// Placeholders until their modules land: the prompted format.
export const qwen35 = prompted;
export const llama31 = prompted;
export const pythonic = prompted;
export const mistral = prompted;
export const ministral = prompted;
export const ministralReasoning = prompted;
export const phi4 = prompted;
export const gemma4 = prompted;
export const smollm = prompted;
