/**
 * web-llm as an engine kind of the registry (engine/registry.ts): the kind of
 * every record that names no other. One engine serves them all (a chat and an
 * embedding model resident at once); it is loaded on first use, with web-llm.
 */
import { loadModule } from "../../lazy-imports.js";
import { ALL_RESPONSE_FORMATS, type EngineKind } from "../types.js";
import { loadPrebuiltRecords } from "./prebuilt.js";

export const WEBLLM_ENGINE_KIND: EngineKind = {
  kind: "webllm",
  capabilities: {
    gpu: true,
    // Our downloader fills web-llm's cache first (byte progress, resume, checks, quota); a web-llm
    // that reads another layout (≤ 0.2.79) says so through `acceptsPrefetch` and fetches for itself.
    prefetch: "mlc",
    ownsCache: false,
    batch: true,
    speculative: true,
    responseFormats: ALL_RESPONSE_FORMATS,
  },
  scope: "host",
  async create(_record, settings) {
    const { createWebLlmEngine } = await loadModule("webllmEngine", () => import("./webllm-engine.js"));
    return createWebLlmEngine({ promptCache: settings.promptCache, ...(settings.batching ? { batching: settings.batching } : {}) });
  },
  loadHints: (family) => (family.convConfig ? { convConfig: family.convConfig } : {}),
  catalog: loadPrebuiltRecords,
};
