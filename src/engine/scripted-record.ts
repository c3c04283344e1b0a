/**
 * The engine for a catalog record that names the scripted engine
 * (`record.engine.kind === "scripted"`): a catalog entry, loaded from JSON like
 * any other, that a UI can be developed and tested against with no download
 * and no GPU.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ScriptedRecordEngine } from "../models/record.js";
import { createScriptedEngine, type ScriptedEngine } from "./scripted.js";
import { isEmbeddingRecord } from "../models/embedding.js";
import { ALL_RESPONSE_FORMATS, type EngineKind } from "./types.js";

/**
 * Replays the record's replies in order and starts over after the last: a
 * catalog entry serves any number of requests, unlike a test's engine, which
 * runs out on purpose.
 */
export function createRecordEngine(modelId: string, spec: ScriptedRecordEngine, embedding = false): ScriptedEngine {
  // An embedding record embeds with the scripted default (hashed bag of words) and needs no replies.
  const replies = embedding && !(Array.isArray(spec.replies) && spec.replies.length > 0) ? [""] : spec.replies;
  if (!Array.isArray(replies) || replies.length === 0 || !replies.every((r) => typeof r === "string")) {
    throw new ApiError({
      status: 500,
      code: "invalid_model_record",
      param: "model",
      message: `The catalog record ${modelId} selects the scripted engine but has no replies: give engine.replies a non-empty list of strings.`,
    });
  }
  let next = 0;
  return createScriptedEngine({
    replies: () => replies[next++ % replies.length],
    tokenDelayMs: spec.tokenDelayMs,
    loadDelayMs: spec.loadDelayMs,
    embedDelayMs: spec.embedDelayMs,
  });
}

/** The scripted engine as an engine kind of the registry: each record that names it gets its own engine, from its replies. */
export const SCRIPTED_ENGINE_KIND: EngineKind = {
  kind: "scripted",
  capabilities: { gpu: false, prefetch: null, ownsCache: false, batch: true, speculative: true, responseFormats: ALL_RESPONSE_FORMATS },
  scope: "record",
  create: (record) => createRecordEngine(record.model_id, record.engine as ScriptedRecordEngine, isEmbeddingRecord(record)),
};
