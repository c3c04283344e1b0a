/**
 * The llama.cpp engine (`@wllama/wllama`) as a registered kind: records with
 * `engine: { kind: "wllama", wasm }` whose `model` is a GGUF URL. Each record
 * gets its own engine (its settings live in the record). It needs no GPU,
 * loads its GGUF from our cache, which the host's downloader fills first
 * (prefetch "gguf": cache/gguf-artifacts.ts; the record's URLs pass the URL
 * policy, `client.cache` lists and deletes it), decodes one sequence at a
 * time, and takes no constrained response format yet (issue 37: GBNF from our grammar
 * IR is not built). The engine module loads on first use.
 */
import type { EngineKind } from "../types.js";
import type { WllamaRecordEngine } from "../../models/record.js";

export const WLLAMA_ENGINE_KIND: EngineKind = {
  kind: "wllama",
  capabilities: { gpu: false, prefetch: "gguf", ownsCache: false, batch: false, speculative: false, responseFormats: [] },
  scope: "record",
  create: async (record) => {
    const { createWllamaEngine } = await import("./wllama-engine.js");
    return createWllamaEngine(record.engine as WllamaRecordEngine);
  },
};
