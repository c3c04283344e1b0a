/**
 * The one place web-llm is loaded (on first use, its `import()` below, with
 * lazy-imports.ts as the override slot:
 * nothing loads it until a web-llm model or the prebuilt catalog is needed;
 * the `webgpu-openai/static` entry provides it statically instead).
 *
 * Where it cannot load — typically a page with no bundler, whose worker has
 * no import map for the bare `@mlc-ai/web-llm` — the request fails with a 503
 * that says so, instead of a bare TypeError.
 */
import { ApiError } from "../../protocol/api-error.js";
import { loadModule } from "../../lazy-imports.js";

export async function importWebLlm(): Promise<typeof import("@mlc-ai/web-llm")> {
  try {
    return await loadModule("webllm", () => import("@mlc-ai/web-llm"));
  } catch (error) {
    throw new ApiError({
      status: 503,
      code: "webllm_unavailable",
      message:
        `@mlc-ai/web-llm could not be loaded (${error instanceof Error ? error.message : String(error)}). ` +
        "It is a dependency of webgpu-openai, imported by the engine worker when a web-llm model is first used: a bundler resolves it; " +
        "a page without a bundler must serve the worker from a CDN that rewrites bare imports, or host the worker with a bundler " +
        "(README: \"Using it in your app\"). Scripted model records work without it.",
    });
  }
}
