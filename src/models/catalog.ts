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
  const latest = new Map<string, ModelRecord>();
  for (const record of records) latest.set(record.model_id, record);
  const all = withStandIns([...latest.values()]);
  const byId = new Map(all.map((r) => [r.model_id, r]));
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

/**
 * Records that name no `fallback` get the id of a record declaring
 * `fallback_for` their alias (a GGUF standing in for web-llm's variants of the
 * same model under `engine: "auto"`). A record's own `fallback` wins; records
 * are copied, never changed.
 */
function withStandIns(records: ModelRecord[]): ModelRecord[] {
  const standIns = new Map<string, string>();
  for (const record of records) if (typeof record.fallback_for === "string") standIns.set(normalize(record.fallback_for), record.model_id);
  if (standIns.size === 0) return records;
  return records.map((record) => {
    const standIn = standIns.get(normalize(aliasOf(record.model_id)));
    return record.fallback === undefined && standIn !== undefined && standIn !== record.model_id ? { ...record, fallback: standIn } : record;
  });
}
