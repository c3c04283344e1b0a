/**
 * The one place `@wllama/wllama` is loaded: on first use of a GGUF model, so
 * pages that never run one never load it. An app's bundler resolves the
 * literal `import()` below; where it cannot load, the request fails with a
 * 503 that says what to install.
 */
import { ApiError } from "../../protocol/api-error.js";
import type { WllamaModule } from "./wllama-api.js";

export async function importWllama(): Promise<WllamaModule> {
  try {
    // wllama-api.ts types the parts we use.
    // The ESM build by its path: the package's `main` (index.js) is missing from its files, so webpack
    // and Next.js fall back to its TypeScript sources and fail; every bundler resolves this one.
    return (await import("@wllama/wllama/esm/index.js")) as WllamaModule;
  } catch (error) {
    throw new ApiError({
      status: 503,
      code: "wllama_unavailable",
      message:
        `@wllama/wllama could not be loaded (${error instanceof Error ? error.message : String(error)}). ` +
        "GGUF models (records with engine: { kind: \"wllama\" }) run on it: @wllama/wllama 3.8.1 is a dependency of webgpu-openai: the app's bundler must resolve @wllama/wllama/esm/index.js (installed with it).",
    });
  }
}
