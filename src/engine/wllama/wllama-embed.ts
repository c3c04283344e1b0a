/**
 * Embeddings for GGUF embedding models (records with `model_type: 1` and
 * `engine: { kind: "wllama" }`): llama-server's OpenAI embeddings endpoint
 * through wllama's `createEmbedding`. llama.cpp pools the token vectors as the
 * GGUF declares (`<arch>.pooling_type`: mean, CLS, last) and normalizes each
 * vector (L2), as its server does. A GGUF that declares no pooling (or
 * `none`) is refused with a 400: llama.cpp then answers with an unpooled,
 * unnormalized vector (measured), not a text's embedding.
 */
import { ApiError, abortError } from "../../protocol/api-error.js";
import type { EmbedRequest, EmbedResult } from "../types.js";
import type { WllamaInstance } from "./wllama-api.js";

export async function embedWithWllama(wllama: WllamaInstance, request: EmbedRequest, signal: AbortSignal): Promise<EmbedResult> {
  const input = request.input.map((text, i) => {
    if (typeof text !== "string") throw new ApiError({ status: 400, code: "unsupported_input", param: `input[${request.firstIndex + i}]`, message: "GGUF embedding models (the wllama engine) embed text only: send `input` as strings." });
    return text;
  });
  checkPooling(wllama, request.model);
  // One call per input: given an array, wllama 3.8.1 embeds only its first input (measured: one vector back for three).
  const embeddings: number[][] = [];
  let promptTokens = 0;
  for (const text of input) {
    // llama.cpp's embedding call takes no abort signal: each input runs to its end; abort is checked between them.
    if (signal.aborted) throw abortError();
    let result;
    try {
      result = await wllama.createEmbedding({ input: [text] });
    } catch (error) {
      throw new ApiError({ status: 400, code: "embeddings_failed", param: "model", message: `llama.cpp could not embed with ${request.model}: ${error instanceof Error ? error.message : String(error)}.` });
    }
    const vector = result.data[0]?.embedding;
    if (!Array.isArray(vector)) throw new ApiError({ status: 500, message: `llama.cpp gave no embedding vector for ${request.model}.` });
    embeddings.push(vector);
    promptTokens += result.usage.prompt_tokens;
  }
  return { embeddings, promptTokens };
}

/** Loaded models whose GGUF declares its pooling (checked once: the metadata is the whole header as text). */
const pooled = new WeakSet<WllamaInstance>();

function checkPooling(wllama: WllamaInstance, model: string): void {
  if (pooled.has(wllama)) return;
  const pooling = Object.entries(wllama.getLoadedContextInfo().metadata ?? {}).find(([key]) => key.endsWith(".pooling_type"))?.[1];
  if (pooling === undefined || pooling === "0") {
    throw new ApiError({
      status: 400,
      code: "embeddings_unsupported",
      param: "model",
      message: `${model}'s GGUF declares no pooling (<arch>.pooling_type${pooling === "0" ? " is none" : " is missing"}), so llama.cpp cannot give one vector per text. Use a GGUF embedding model that declares it (mean, cls or last), as llama.cpp's converter writes for embedding models.`,
    });
  }
  pooled.add(wllama);
}
