/**
 * The model catalog: web-llm's prebuilt records plus the app's own, and the
 * rules that turn what a request names into one record.
 */
import { ApiError } from "../protocol/api-error.js";
import { needsShaderF16, quantizationOf, type ModelRecord } from "./record.js";
import { embeddingAliasOf, embeddingBatchOf, isEmbeddingRecord } from "./embedding.js";

export interface Catalog {
  readonly records: readonly ModelRecord[];
  /**
   * The record a request's `model` names. Exact ids win; otherwise the vendor
   * prefix is dropped and an alias (id without quantization) picks the variant
   * for the adapter: q4f16_1 with `shader-f16`, else q4f32_1.
   */
  resolve(requested: string, adapterFeatures: ReadonlySet<string>): ModelRecord;
  find(id: string): ModelRecord | undefined;
}

/** `Qwen3-0.6B` from `Qwen3-0.6B-q4f16_1-MLC`; `-1k` context variants keep their suffix. */
export function aliasOf(modelId: string): string {
  return modelId.replace(/-q\d+f(?:16|32)(?:_\d+)?/, "").replace(/-MLC(?=-|$)/, "");
}

function normalize(name: string): string {
  return name.trim().toLowerCase();
}

/** Later records replace earlier ones with the same id (app records override prebuilt ones). */
export function createCatalog(records: readonly ModelRecord[]): Catalog {
  const byId = new Map<string, ModelRecord>();
  for (const record of records) byId.set(record.model_id, record);
  const all = [...byId.values()];
  const byLowerId = new Map(all.map((r) => [normalize(r.model_id), r]));
  const byAlias = new Map<string, ModelRecord[]>();
  for (const record of all) {
    const alias = normalize(aliasOf(record.model_id));
    byAlias.set(alias, [...(byAlias.get(alias) ?? []), record]);
    // Embedding models also answer to the name without their batch suffix (`snowflake-arctic-embed-s`).
    const short = isEmbeddingRecord(record) ? embeddingAliasOf(alias) : alias;
    if (short !== alias) byAlias.set(short, [...(byAlias.get(short) ?? []), record]);
  }

  function lookup(name: string, features: ReadonlySet<string>): ModelRecord | undefined {
    const key = normalize(name);
    const exact = byLowerId.get(key) ?? byLowerId.get(`${key}-mlc`);
    if (exact) return exact;
    const variants = byAlias.get(key);
    if (!variants) return undefined;
    return chooseVariant(variants, features);
  }

  return {
    records: all,
    find: (id) => byId.get(id),
    resolve(requested, features) {
      const direct = lookup(requested, features);
      if (direct) return direct;
      const slash = requested.indexOf("/");
      const withoutVendor = slash >= 0 ? lookup(requested.slice(slash + 1), features) : undefined;
      if (withoutVendor) return withoutVendor;
      throw new ApiError({
        status: 404,
        code: "model_not_found",
        param: "model",
        message: `The model \`${requested}\` does not exist in the catalog. Call models.list() for the available ids, or pass your own records with createClient({ models }).`,
      });
    },
  };
}

const PREFERRED_F16 = ["q4f16_1", "q4f32_1", "q0f16", "q0f32"];
const PREFERRED_F32 = ["q4f32_1", "q0f32", "q4f16_1", "q0f16"];

function chooseVariant(variants: ModelRecord[], features: ReadonlySet<string>): ModelRecord {
  const hasF16 = features.has("shader-f16");
  const order = hasF16 ? PREFERRED_F16 : PREFERRED_F32;
  const usable = hasF16 ? variants : variants.filter((r) => !needsShaderF16(r));
  const pool = usable.length > 0 ? usable : variants;
  const rank = (r: ModelRecord) => {
    const i = order.indexOf(quantizationOf(r.model_id) ?? "");
    return i < 0 ? order.length : i;
  };
  // Among embedding batch variants the smallest batch wins: it needs the least GPU memory next to a chat model.
  const batch = (r: ModelRecord) => (isEmbeddingRecord(r) ? embeddingBatchOf(r) : 0);
  return [...pool].sort((a, b) => rank(a) - rank(b) || batch(a) - batch(b))[0];
}
