/**
 * A page's own worker using the Prompt API: Chrome exposes `LanguageModel`
 * only in windows, so a worker installs the polyfill (its client's pipeline
 * runs right here, in this worker) and runs the explainer's examples.
 */
import { createClient } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { createPromptApi, installPromptApi } from "../../../src/prompt-api/index.js";
import { EXAMPLE_REPLIES, MODEL, TINY, runExplainerExamples } from "./prompt-api-examples.js";

self.onmessage = async () => {
  const hadNative = typeof (globalThis as { LanguageModel?: unknown }).LanguageModel;
  const client = createClient({ worker: false, engine: createScriptedEngine({ replies: EXAMPLE_REPLIES }), models: [TINY] });
  const installed = installPromptApi({ client, model: MODEL });
  try {
    const results = await runExplainerExamples(createPromptApi({ client, model: TINY.model_id }));
    self.postMessage({ ok: true, installed: installed.installed, results: { ...results, hadNative } });
  } catch (error) {
    self.postMessage({ ok: false, error: `${(error as Error).name}: ${(error as Error).message}` });
  }
};
