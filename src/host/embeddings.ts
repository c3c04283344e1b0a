/**
 * The embeddings request pipeline (`client.embeddings.create`, `POST
 * /embeddings`), run by EngineHost on the same queue as chat:
 *
 *   validate → resolve model (must embed) → engine can do it? → dimensions →
 *   GPU checks → queue slot → load (next to the chat model) → batches of the
 *   model's compiled size, in order, abort between them → OpenAI list
 */
import { ApiError, abortError } from "../protocol/api-error.js";
import { floatsToBase64 } from "../protocol/embedding-base64.js";
import type { CreateEmbeddingResponse } from "../protocol/embeddings-types.js";
import { validateEmbeddingsRequest } from "../protocol/validate-embeddings.js";
import type { Engine } from "../engine/types.js";
import type { ModelRecord } from "../models/record.js";
import { embeddingBatchOf, embeddingDimensionsOf, isEmbeddingRecord } from "../models/embedding.js";
import type { PipelineCore } from "./pipeline-core.js";

/** What the pipeline needs from EngineHost. */
export interface EmbeddingsContext {
  /** The catalog record a request's `model` names (404 when none). */
  resolve(model: string): Promise<ModelRecord>;
  /** Every record of the catalog, for "which models embed" messages. */
  records(): Promise<readonly ModelRecord[]>;
  engineFor(record: ModelRecord): Promise<Engine>;
  /** Adapter checks before anything is downloaded (503s). */
  checkDevice(record: ModelRecord): Promise<void>;
  /** Runs `work` in a queue slot with `record` loaded; timeout and abort as for chat. */
  inSlot<T>(record: ModelRecord, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export async function createEmbeddings(context: EmbeddingsContext, body: unknown, signal?: AbortSignal): Promise<CreateEmbeddingResponse> {
  const request = validateEmbeddingsRequest(body);
  const record = await context.resolve(request.model);
  if (!isEmbeddingRecord(record)) {
    throw new ApiError({ status: 400, code: "model_not_embedding", param: "model", message: `${record.model_id} is a chat model and does not embed. ${embeddingModelsHint(await context.records())}` });
  }
  const engine = await context.engineFor(record);
  if (!engine.embed) {
    throw new ApiError({ status: 400, code: "embeddings_unsupported", param: "model", message: `The engine serving ${record.model_id} does not embed (it has no embed capability).` });
  }
  if (request.hasTokenIds && !engine.embedsTokenIds) {
    throw new ApiError({ status: 400, code: "unsupported_input", param: "input", message: "This engine embeds text only: send `input` as a string or an array of strings, not token ids." });
  }
  const size = embeddingDimensionsOf(record);
  if (request.dimensions !== undefined && size !== null && request.dimensions !== size) throw wrongDimensions(record, request.dimensions, size);
  await context.checkDevice(record);

  return context.inSlot(record, signal, async (slotSignal) => {
    const batch = embeddingBatchOf(record);
    const embed = engine.embed!.bind(engine);
    // Every input is checked (against the loaded model's window) before the first batch runs:
    // a request that will fail costs no GPU time.
    await engine.checkEmbedInputs?.({ model: record.model_id, input: request.inputs, firstIndex: 0 });
    const vectors: number[][] = [];
    let tokens = 0;
    // The model's library runs `batch` inputs per pass: larger requests go through in order, one batch at a time.
    for (let start = 0; start < request.inputs.length; start += batch) {
      if (slotSignal.aborted) throw abortError();
      const result = await embed({ model: record.model_id, input: request.inputs.slice(start, start + batch), firstIndex: start }, slotSignal);
      for (const vector of result.embeddings) vectors.push(vector);
      tokens += result.promptTokens;
    }
    const produced = vectors[0]?.length ?? 0;
    if (request.dimensions !== undefined && produced !== request.dimensions) throw wrongDimensions(record, request.dimensions, produced);
    return {
      object: "list",
      data: vectors.map((vector, index) => ({
        object: "embedding",
        index,
        embedding: request.encodingFormat === "base64" ? floatsToBase64(vector) : vector,
      })),
      model: request.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  });
}

function embeddingModelsHint(records: readonly ModelRecord[]): string {
  const ids = records.filter(isEmbeddingRecord).map((r) => r.model_id);
  return ids.length > 0 ? `Models that embed: ${ids.join(", ")}.` : "No embedding model is in the catalog.";
}

function wrongDimensions(record: ModelRecord, asked: number, size: number): ApiError {
  return new ApiError({
    status: 400,
    code: "invalid_value",
    param: "dimensions",
    message: `${record.model_id} makes ${size}-dimensional vectors and cannot shorten them; \`dimensions\` ${asked} is not available. Send \`dimensions: ${size}\` or leave it out.`,
  });
}

/** The embeddings pipeline's context on the host's pipeline core (same queue, loading and checks as chat). */
export function embeddingsContextOf(core: PipelineCore): EmbeddingsContext {
  return {
    resolve: async (model) => (await core.catalog()).resolve(model, await core.features()),
    records: async () => (await core.catalog()).records,
    engineFor: (record) => core.engineFor(record),
    checkDevice: (record) => core.checkDevice(record, undefined),
    inSlot: (record, signal, work) => core.inSlot(record, signal, work),
  };
}
