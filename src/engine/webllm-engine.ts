/**
 * The real engine: web-llm's MLCEngine, created in this (worker) thread.
 * (Adapter under construction: see issue 2 item 5.)
 */
import { ApiError } from "../protocol/api-error.js";
import type { Engine } from "./types.js";

export function createWebLlmEngine(): Engine & { requiresGpu: true } {
  return {
    requiresGpu: true,
    loadedModel: null,
    async load() {
      throw new ApiError({ status: 503, message: "The web-llm engine adapter is not built yet." });
    },
    // eslint-disable-next-line require-yield
    async *generate() {
      throw new ApiError({ status: 503, message: "The web-llm engine adapter is not built yet." });
    },
    async unload() {},
  };
}
