/**
 * One embedding batch through web-llm's `engine.embeddings.create` (its
 * EmbeddingPipeline: BERT encoder, first token's hidden state, not
 * normalized). Before the call each input is counted with the model's own
 * tokenizer, so an input longer than the window is refused naming its index
 * (web-llm's EmbeddingExceedContextWindowSizeError names none). A tokenizer
 * whose tokenizer.json truncates (HF `truncation.max_length`) never returns
 * more than the window, which would embed a cut text silently: an input that
 * comes out exactly window-long is encoded again without its last word, and
 * if that is still window-long, the text was cut and is refused. The host has
 * every input of a request counted this way before the first batch runs
 * (`checkWebLlmEmbedInputs`), so a request that will fail costs no GPU time; a
 * batch whose inputs were counted so is not counted again. web-llm cannot stop
 * a batch once it runs: abort is honoured before and after it.
 */
import { ApiError, abortError } from "../../protocol/api-error.js";
import type { ModelRecord } from "../../models/record.js";
import { embeddingWindowOf } from "../../models/embedding.js";
import { inputTooLong } from "../../protocol/validate-embeddings.js";
import type { EmbedRequest, EmbedResult } from "../types.js";

/** The slice of web-llm's `engine.embeddings` this adapter uses (0.2.86). */
export interface WebLlmEmbeddings {
  create(body: { model?: string; input: Array<string | number[]> }): Promise<{
    data: Array<{ index: number; embedding: number[] }>;
    usage?: { prompt_tokens?: number };
  }>;
}

/** web-llm's EmbeddingPipeline fields read here (guarded: absent → the record's window, no pre-count). */
export interface WebLlmEmbeddingModel {
  tokenizer?: { encode(text: string): ArrayLike<number> };
  contextWindowSize?: number;
}

/** Every input counted with the model's tokenizer against its window: 400 naming `input[i]` for the first that does not fit. */
export function checkWebLlmEmbedInputs(loaded: WebLlmEmbeddingModel | undefined, record: ModelRecord, request: EmbedRequest): void {
  const window = loaded?.contextWindowSize && loaded.contextWindowSize > 0 ? loaded.contextWindowSize : embeddingWindowOf(record);
  const tokenizer = loaded?.tokenizer;
  request.input.forEach((item, i) => {
    const tokens = typeof item === "string" ? (tokenizer?.encode(item).length ?? 0) : item.length;
    const cut = typeof item === "string" && tokenizer !== undefined && tokens === window && tokenizer.encode(shorter(item)).length === window;
    if (tokens > window || cut) throw inputTooLong(`input[${request.firstIndex + i}]`, cut ? `longer than ${window} tokens` : `${tokens} tokens`, record.model_id, window);
  });
}

/** One batch through web-llm; `counted`: its inputs already passed checkWebLlmEmbedInputs. */
export async function embedWithWebLlm(
  engine: { embeddings?: WebLlmEmbeddings },
  loaded: WebLlmEmbeddingModel | undefined,
  record: ModelRecord,
  request: EmbedRequest,
  signal: AbortSignal,
  counted = false,
): Promise<EmbedResult> {
  if (!engine.embeddings) {
    throw new ApiError({ status: 501, code: "embeddings_unsupported", message: "This web-llm has no embeddings API (engine.embeddings). Use web-llm 0.2.46 or later." });
  }
  if (signal.aborted) throw abortError();
  if (!counted) checkWebLlmEmbedInputs(loaded, record, request);
  const response = await engine.embeddings.create({ model: request.model, input: request.input });
  if (signal.aborted) throw abortError();
  const data = [...response.data].sort((a, b) => a.index - b.index);
  if (data.length !== request.input.length) {
    throw new ApiError({ status: 500, code: "engine_error", message: `web-llm returned ${data.length} embeddings for ${request.input.length} inputs.` });
  }
  return { embeddings: data.map((d) => Array.from(d.embedding)), promptTokens: response.usage?.prompt_tokens ?? 0 };
}

/** The text without its last word (or, with no spaces, without its last quarter). */
function shorter(text: string): string {
  const trimmed = text.replace(/\s*\S+\s*$/, "");
  return trimmed !== "" ? trimmed : text.slice(0, Math.floor(text.length * 0.75));
}
