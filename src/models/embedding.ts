/**
 * What the host needs to know about an embedding model before it is loaded:
 * its vector size (for `dimensions`), its window (tokens per input) and the
 * batch its library was compiled for (`…_batch32-webgpu.wasm`, `…-MLC-b32`).
 */
import { MODEL_TYPE_EMBEDDING, type ModelRecord } from "./record.js";
import { ApiError } from "../protocol/api-error.js";

export function isEmbeddingRecord(record: Pick<ModelRecord, "model_type">): boolean {
  return record.model_type === MODEL_TYPE_EMBEDDING;
}

/** Vector sizes of the embedding models web-llm ships (hidden size of the BERT encoder). */
const KNOWN_DIMENSIONS: ReadonlyArray<[RegExp, number]> = [
  [/arctic-embed-xs/i, 384],
  [/arctic-embed-s/i, 384],
  [/arctic-embed-m/i, 768],
  [/arctic-embed-l/i, 1024],
];

/** `record.embedding_dimensions` when given, else the known size of its family, else null (learned at the first request). */
export function embeddingDimensionsOf(record: ModelRecord): number | null {
  const own = record.embedding_dimensions;
  if (typeof own === "number" && own > 0) return own;
  return KNOWN_DIMENSIONS.find(([pattern]) => pattern.test(record.model_id))?.[1] ?? null;
}

/** Inputs per forward pass the library was compiled for; the host splits larger requests. */
export function embeddingBatchOf(record: ModelRecord): number {
  const own = record.embedding_batch_size;
  if (typeof own === "number" && own > 0) return own;
  const fromLib = /batch(\d+)/i.exec(record.model_lib ?? "")?.[1] ?? /-b(\d+)$/i.exec(record.model_id)?.[1];
  return fromLib ? Number(fromLib) : 32;
}

/** Tokens per input: the record's override, else `ctx512` in the library name, else 512 (BERT-sized encoders). */
export function embeddingWindowOf(record: ModelRecord): number {
  const override = record.overrides?.context_window_size;
  if (typeof override === "number" && override > 0) return override;
  const fromLib = /ctx(\d+)/i.exec(record.model_lib ?? "")?.[1];
  return fromLib ? Number(fromLib) : 512;
}

/** `snowflake-arctic-embed-s` from `snowflake-arctic-embed-s-q0f32-MLC-b4`: the batch variants share one alias. */
export function embeddingAliasOf(alias: string): string {
  return alias.replace(/-b\d+$/i, "");
}

/** The 400 for a chat request that names an embedding model. */
export function notAChatModel(record: ModelRecord): ApiError {
  return new ApiError({
    status: 400,
    code: "model_not_chat",
    param: "model",
    message: `${record.model_id} is an embedding model: send it to POST /embeddings (client.embeddings.create), and name a chat model for chat completions.`,
  });
}
