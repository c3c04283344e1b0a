/**
 * What files a model consists of, in web-llm's layout: the chat config, the
 * tensor index (`tensor-cache.json`), its weight shards with their declared
 * sizes and checksums, the tokenizer web-llm will pick, and the model library.
 */
import type { ModelRecord } from "../models/record.js";
import { cleanModelUrl, fileUrl, isWasmCacheable, type Scope } from "./layout.js";
import { fileInFolder, fileInFolderOrNull } from "./url-policy.js";

/** How web-llm reads a record back from IndexedDB: bytes, or a parsed object (`tensor-cache.json`). */
export type StoreType = "arraybuffer" | "json";

export type ArtifactKind = "package" | "config" | "tensor-index" | "shard" | "tokenizer" | "wasm" | "gguf";

/**
 * Where a model package manifest (`ModelRecord.model_manifest`, e.g. gemma-4)
 * puts the chat config and the tensor index; web-llm's
 * `resolveModelPackageResourceURLs` (bundle L3534). Absent: the defaults.
 */
export interface PackagePaths {
  chatConfig?: string;
  tensorManifest?: string;
}

/** Reads the two paths out of `mlc-model-manifest.json` (web-llm validates the rest when it loads). */
export function packagePathsOf(manifest: unknown): PackagePaths {
  const m = manifest as { chat_config?: unknown; weights?: { manifest?: unknown } } | null;
  return {
    ...(typeof m?.chat_config === "string" ? { chatConfig: m.chat_config } : {}),
    ...(typeof m?.weights?.manifest === "string" ? { tensorManifest: m.weights.manifest } : {}),
  };
}

/** One file to have in the cache. */
export interface Artifact {
  kind: ArtifactKind;
  /** File name inside the model folder (the wasm's URL basename for the library). */
  name: string;
  url: string;
  scope: Scope;
  storeType: StoreType;
  /** Declared size, when the model declares one (shards); null = learned from the response. */
  bytes: number | null;
  /** `md5sum` from `tensor-cache.json`. */
  md5?: string;
  /** SRI (`sha256-…`, `sha384-…`, `sha512-…`) from the model record's `integrity`. */
  sri?: string;
}

/** One shard entry of MLC's `tensor-cache.json` (only the fields we rely on). */
export interface TensorShardRecord {
  dataPath: string;
  nbytes: number;
  md5sum?: string;
  format?: string;
  records?: unknown[];
}

export interface TensorCacheIndex {
  records: TensorShardRecord[];
  metadata?: Record<string, unknown>;
}

/** The subset of `mlc-chat-config.json` that decides which files exist. */
export interface ChatConfigFiles {
  tokenizer_files?: string[];
}

/** A model's full file list, and the bytes it occupies once cached. */
export interface ArtifactPlan {
  modelId: string;
  modelUrl: string;
  artifacts: Artifact[];
}

/** The model package manifest web-llm reads first when the record names one. */
export function packageArtifact(record: ModelRecord): Artifact | null {
  if (typeof record.model_manifest !== "string") return null;
  const url = fileInFolder(cleanModelUrl(record.model), record.model_manifest, `The record's model_manifest of ${record.model_id}`, undefined, true);
  return { kind: "package", name: record.model_manifest, url, scope: "webllm/config", storeType: "arraybuffer", bytes: null };
}

/** The files that must be read before the rest can be planned. */
export function manifestArtifacts(record: ModelRecord, paths: PackagePaths = {}): { config: Artifact; index: Artifact } {
  const modelUrl = cleanModelUrl(record.model);
  const configName = paths.chatConfig ?? "mlc-chat-config.json";
  const indexName = paths.tensorManifest ?? "tensor-cache.json";
  return {
    config: withSri(record, { kind: "config", name: "mlc-chat-config.json", url: fileInFolder(modelUrl, configName, `The package manifest of ${record.model_id} (chat_config)`), scope: "webllm/config", storeType: "arraybuffer", bytes: null }),
    index: withSri(record, { kind: "tensor-index", name: "tensor-cache.json", url: fileInFolder(modelUrl, indexName, `The package manifest of ${record.model_id} (weights.manifest)`), scope: "webllm/model", storeType: "json", bytes: null }),
  };
}

/** Parses and checks `tensor-cache.json`; throws with what is wrong. */
export function parseTensorIndex(value: unknown, url: string): TensorCacheIndex {
  const records = (value as { records?: unknown } | null)?.records;
  if (!Array.isArray(records) || !records.every((r) => typeof r?.dataPath === "string" && Number.isSafeInteger(r?.nbytes) && r.nbytes >= 0)) {
    throw new Error(`${url} is not an MLC tensor-cache.json: it needs "records" with a "dataPath" and "nbytes" per shard.`);
  }
  return value as TensorCacheIndex;
}

/**
 * Every file of the model once the config and index are known. The tokenizer
 * is the one web-llm loads: `tokenizer.json` when listed, else `tokenizer.model`.
 */
export function planArtifacts(record: ModelRecord, config: ChatConfigFiles, index: TensorCacheIndex, sizes: { config: number; index: number; package?: number }, paths: PackagePaths = {}): ArtifactPlan {
  const modelUrl = cleanModelUrl(record.model);
  const manifest = manifestArtifacts(record, paths);
  const pkg = packageArtifact(record);
  // Shard paths are relative to the tensor index's folder.
  const tensorBase = new URL(".", manifest.index.url).href;
  const artifacts: Artifact[] = [
    ...(pkg ? [{ ...pkg, bytes: sizes.package ?? null }] : []),
    { ...manifest.config, bytes: sizes.config },
    { ...manifest.index, bytes: sizes.index },
  ];
  for (const shard of index.records) {
    artifacts.push(
      withSri(record, {
        kind: "shard",
        name: shard.dataPath,
        url: fileInFolder(modelUrl, shard.dataPath, `The tensor index of ${record.model_id} (dataPath)`, tensorBase),
        scope: "webllm/model",
        storeType: "arraybuffer",
        bytes: shard.nbytes,
        ...(typeof shard.md5sum === "string" && shard.md5sum ? { md5: shard.md5sum.toLowerCase() } : {}),
      }),
    );
  }
  const tokenizerFiles = config.tokenizer_files ?? [];
  const tokenizer = tokenizerFiles.includes("tokenizer.json") ? "tokenizer.json" : tokenizerFiles.includes("tokenizer.model") ? "tokenizer.model" : null;
  if (tokenizer) {
    artifacts.push(withSri(record, { kind: "tokenizer", name: tokenizer, url: fileUrl(modelUrl, tokenizer), scope: "webllm/model", storeType: "arraybuffer", bytes: null }));
  }
  if (record.model_lib && isWasmCacheable(record.model_lib)) {
    const name = new URL(record.model_lib).pathname.split("/").pop() || "model_lib.wasm";
    artifacts.push(withSri(record, { kind: "wasm", name, url: record.model_lib, scope: "webllm/wasm", storeType: "arraybuffer", bytes: null }));
  }
  return { modelId: record.model_id, modelUrl, artifacts };
}

/** Every URL web-llm may have stored for a model, planned or not (for delete). */
export function possibleUrls(record: ModelRecord, index: TensorCacheIndex | null, paths: PackagePaths = {}): Array<{ scope: Scope; url: string }> {
  const modelUrl = cleanModelUrl(record.model);
  // Paths a cached manifest or index names outside the model's folder are not the model's: never deleted for it.
  let manifest: ReturnType<typeof manifestArtifacts>;
  try {
    manifest = manifestArtifacts(record, paths);
  } catch {
    manifest = manifestArtifacts(record);
  }
  const tensorBase = new URL(".", manifest.index.url).href;
  const urls: Array<{ scope: Scope; url: string }> = [
    { scope: "webllm/config", url: manifest.config.url },
    { scope: "webllm/model", url: manifest.index.url },
    // web-llm ≤0.2.79 named the tensor index ndarray-cache.json; an old origin may still hold one.
    { scope: "webllm/model", url: fileUrl(modelUrl, "ndarray-cache.json") },
    { scope: "webllm/model", url: fileUrl(modelUrl, "tokenizer.json") },
    { scope: "webllm/model", url: fileUrl(modelUrl, "tokenizer.model") },
  ];
  const pkg = typeof record.model_manifest === "string" ? fileInFolderOrNull(modelUrl, record.model_manifest) : null;
  if (pkg) urls.push({ scope: "webllm/config", url: pkg });
  if (record.model_lib) urls.push({ scope: "webllm/wasm", url: new URL(record.model_lib, (globalThis as { location?: { href: string } }).location?.href).href });
  for (const shard of index?.records ?? []) {
    const url = fileInFolderOrNull(modelUrl, shard.dataPath, tensorBase);
    if (url) urls.push({ scope: "webllm/model", url });
  }
  return urls;
}

/**
 * The record's SRI hash for this file. `integrity` maps file names to SRI
 * strings; web-llm's own shape (`config`, `model_lib`, `tokenizer: {name: sri}`)
 * is understood too.
 */
function withSri(record: ModelRecord, artifact: Artifact): Artifact {
  const integrity = (record.integrity ?? {}) as Record<string, unknown>;
  let sri = integrity[artifact.name];
  if (typeof sri !== "string") {
    if (artifact.kind === "config") sri = integrity.config;
    else if (artifact.kind === "wasm") sri = integrity.model_lib;
    else if (artifact.kind === "tokenizer") sri = (integrity.tokenizer as Record<string, unknown> | undefined)?.[artifact.name];
  }
  return typeof sri === "string" ? { ...artifact, sri } : artifact;
}
