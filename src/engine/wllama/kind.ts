/**
 * The llama.cpp engine (`@wllama/wllama`) as a registered kind: records with
 * `engine: { kind: "wllama", wasm }` whose `model` is a GGUF URL. Each record
 * gets its own engine (its settings live in the record). It needs no GPU,
 * loads its GGUF from our cache, which the host's downloader fills first
 * (prefetch "gguf": cache/gguf-artifacts.ts; the record's URLs pass the URL
 * policy, `client.cache` lists and deletes it), decodes one sequence at a
 * time, and takes constrained output as a grammar only: the host compiles a
 * JSON schema or a forced tool call's structural tag to our EBNF
 * (host/engine-format.ts), and gbnf.ts writes it as llama.cpp's GBNF. An
 * embedding record (model_type 1) gets an engine that embeds (wllama-embed.ts).
 * Its catalog has one default GGUF (wllama-catalog.ts).
 * The engine module loads on first use.
 */
import type { EngineKind } from "../types.js";
import type { WllamaRecordEngine } from "../../models/record.js";
import { isEmbeddingRecord } from "../../models/embedding.js";
import { wllamaCatalog } from "./wllama-catalog.js";

export const WLLAMA_ENGINE_KIND: EngineKind = {
  kind: "wllama",
  capabilities: { gpu: false, prefetch: "gguf", ownsCache: false, batch: false, speculative: false, responseFormats: ["grammar"] },
  scope: "record",
  catalog: async () => wllamaCatalog(),
  create: async (record) => {
    const { createWllamaEngine } = await import("./wllama-engine.js");
    return createWllamaEngine(record.engine as WllamaRecordEngine, isEmbeddingRecord(record));
  },
};
