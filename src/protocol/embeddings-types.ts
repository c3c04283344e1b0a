/** The OpenAI Embeddings API shapes (`POST /embeddings`), as served locally. */

export interface EmbeddingCreateParams {
  /** A catalog id (`snowflake-arctic-embed-s-q0f32-MLC-b4`), an alias (`snowflake-arctic-embed-s`) or a vendor id (`Snowflake/snowflake-arctic-embed-s`). */
  model: string;
  /** One text, up to 2048 texts, or token ids (only where the engine takes them: web-llm does). */
  input: string | string[] | number[] | number[][];
  /** `float` (default): arrays of numbers. `base64`: little-endian float32 bytes, as OpenAI sends them. */
  encoding_format?: "float" | "base64";
  /** Must equal the model's size (these models cannot shorten their vectors). */
  dimensions?: number;
  /** Accepted and ignored (nothing leaves the device). */
  user?: string;
}

export interface Embedding {
  object: "embedding";
  index: number;
  /** Numbers, or a base64 string of little-endian float32 when `encoding_format: "base64"`. */
  embedding: number[] | string;
}

export interface CreateEmbeddingResponse {
  object: "list";
  data: Embedding[];
  /** As the request named it. */
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
