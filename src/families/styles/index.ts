/** The prompt and grammar style of each output format. */
export { qwen, qwen3, hermes, prompted, deepseek } from "./hermes.js";
export { qwen35 } from "./qwen-xml.js";
export { llama31, pythonic } from "./llama.js";
export { mistral, ministral, ministralReasoning } from "./mistral.js";
export { phi4 } from "./phi4.js";
export { gemma4 } from "./gemma4.js";
export { smollm } from "./smollm.js";
