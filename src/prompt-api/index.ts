/**
 * `webgpu-openai/prompt-api`: Chrome's Prompt API (`LanguageModel`) on every
 * browser with WebGPU, in windows and workers, backed by this library's
 * pipeline. See docs/prompt-api.md.
 */
export { createPromptApi, installPromptApi } from "./language-model.js";
export type { PromptApiOptions, InstalledPromptApi } from "./language-model.js";
export type { PromptSession } from "./session.js";
export type * from "./types.js";
