/**
 * The model manager behind `client.cache.*` and the host's pre-load step:
 * ensure a model is cached (one download across tabs), list, delete, clear,
 * and report usage, for one backend.
 */
import type { LoadProgress, PrefetchLayout } from "../engine/types.js";
import { ggufPlan, ggufUrls, ownsGgufUrl } from "./gguf-artifacts.js";
import { readStoredGguf, removeStoredGguf } from "./gguf-parts.js";
import type { ModelRecord } from "../models/record.js";
import { ApiError } from "../protocol/api-error.js";
import { manifestArtifacts, packageArtifact, packagePathsOf, parseTensorIndex, possibleUrls, type PackagePaths, type TensorCacheIndex } from "./artifacts.js";
import { downloadModel, type DownloadResult } from "./downloader.js";
import { SCOPES, cleanModelUrl, type CacheBackend } from "./layout.js";
import { fileInFolderOrNull } from "./url-policy.js";
import { withModelLock } from "./locks.js";
import { allMetadata, deleteMetadata, readMetadata, writeMetadata, type ModelMetadata } from "./metadata.js";
import { requestPersistence, storageReport, type StorageReport } from "./quota.js";
import type { ArtifactStore } from "./store.js";
import { openArtifactStore } from "./open-store.js";

/** One model in `client.cache.list()`. */
export interface CachedModel {
  id: string;
  bytes: number;
  complete: boolean;
  /** ms since epoch. */
  lastUsed: number;
}

/** `client.cache.usage()`: per model, and the origin's storage. */
export interface CacheUsage {
  backend: CacheBackend;
  models: CachedModel[];
  /** Bytes of all cached models. */
  totalBytes: number;
  storage: StorageReport;
}

export interface EnsureOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  concurrency?: number;
  /** See DownloadOptions.maxBufferedBytes (default 64 MiB). */
  maxBufferedBytes?: number;
  /** See DownloadOptions.stallTimeoutMs (default 30 s). */
  stallTimeoutMs?: number;
  /** The record's file layout (default "mlc"; "gguf" for the wllama engine's records). */
  layout?: PrefetchLayout;
}

/** Shortest gap between two metadata saves while files are stored (the first, the last and a failure always save). */
const SAVE_INTERVAL_MS = 1000;

export class CacheManager {
  private storePromise: Promise<ArtifactStore> | null = null;

  constructor(readonly backend: CacheBackend = "indexeddb") {}

  /** The backend's store; rejects (clear message) when the browser lacks it. */
  store(): Promise<ArtifactStore> {
    this.storePromise ??= openArtifactStore(this.backend);
    this.storePromise.catch(() => (this.storePromise = null));
    return this.storePromise;
  }

  /**
   * Makes every file of `record` present and verified in web-llm's cache.
   * Tabs loading the same model take turns: the first downloads, the next
   * finds it cached.
   */
  async ensure(record: ModelRecord, options: EnsureOptions = {}): Promise<DownloadResult> {
    const store = await this.store();
    void requestPersistence();
    return withModelLock(
      `${this.backend}:${record.model_id}`,
      async (share) => {
        const previous = await readMetadata(this.backend, record.model_id);
        const knownSizes = new Map((previous?.files ?? []).map((f) => [f.url, f.bytes]));
        const metadata: ModelMetadata = { id: record.model_id, backend: this.backend, bytes: 0, complete: false, lastUsed: Date.now(), files: previous?.files ?? [] };
        // Keyed by URL: an index may list tens of thousands of shards.
        const files = new Map(metadata.files.map((f) => [f.url, f]));
        let planned = false;
        const save = async () => {
          metadata.files = [...files.values()];
          metadata.bytes = metadata.files.reduce((sum, f) => sum + f.bytes, 0);
          await writeMetadata(metadata);
        };
        // What was stored is recorded at most every SAVE_INTERVAL_MS (each save rewrites the whole list); a file
        // stored but not yet recorded is still found by delete (from the model's index) and not fetched again.
        let lastSave = 0;
        let saving = null as Promise<void> | null;
        const saveSoon = async () => {
          if (saving || performance.now() - lastSave < SAVE_INTERVAL_MS) return;
          lastSave = performance.now();
          saving = save().finally(() => (saving = null));
          await saving;
        };
        try {
          const result = await downloadModel(record, {
            store,
            signal: options.signal,
            concurrency: options.concurrency,
            maxBufferedBytes: options.maxBufferedBytes,
            stallTimeoutMs: options.stallTimeoutMs,
            layout: options.layout,
            knownSizes,
            onProgress: (progress) => {
              options.onProgress?.(progress);
              share(progress);
            },
            onPlanned: async (plan) => {
              planned = true;
              const urls = new Set(plan.artifacts.map((a) => a.url));
              for (const url of files.keys()) if (!urls.has(url)) files.delete(url);
              await save();
            },
            onStored: async (artifact, bytes) => {
              files.set(artifact.url, { url: artifact.url, scope: artifact.scope, bytes });
              await saveSoon();
            },
          });
          await saving;
          files.clear();
          for (const a of result.plan.artifacts) files.set(a.url, { url: a.url, scope: a.scope, bytes: result.sizes.get(a.url) ?? 0 });
          metadata.complete = true;
          delete metadata.error;
          await save();
          return result;
        } catch (error) {
          if (planned) {
            await saving?.catch(() => undefined);
            metadata.error = error instanceof Error ? error.message : String(error);
            await save().catch(() => undefined);
          }
          throw error;
        }
      },
      { signal: options.signal, onWaitProgress: options.onProgress },
    );
  }

  async list(): Promise<CachedModel[]> {
    await this.store(); // an unusable backend is refused here too, not only on download
    return (await allMetadata(this.backend)).map(({ id, bytes, complete, lastUsed }) => ({ id, bytes, complete, lastUsed })).sort((a, b) => b.lastUsed - a.lastUsed);
  }

  /**
   * Removes every file of the model (config, tensor index, shards, tokenizer,
   * wasm; a GGUF's files) and its metadata. `record` lets it find files of a
   * model cached by web-llm itself; without it, the files we recorded are
   * removed. `layout` says which files a record has (default "mlc").
   * Resolves to whether anything was found.
   */
  async delete(id: string, record?: ModelRecord, layout: PrefetchLayout = "mlc"): Promise<boolean> {
    const store = await this.store();
    return withModelLock(`${this.backend}:${id}`, async () => {
      const metadata = await readMetadata(this.backend, id);
      const targets = new Map<string, (typeof metadata & {})["files"][number]["scope"]>();
      // With the record known, only files under its folder (and its own library) are its to remove.
      const own = !record ? () => true : layout === "gguf" ? ownsGgufUrl(record) : ownsUrl(record);
      for (const file of metadata?.files ?? []) if (own(file.url)) targets.set(file.url, file.scope);
      if (record && layout === "gguf") for (const url of ggufUrls(record)) targets.set(url, "wllama/gguf");
      else if (record) {
        const paths = await this.readPackagePaths(store, record);
        for (const { url, scope } of possibleUrls(record, await this.readIndex(store, record, paths), paths)) targets.set(url, scope);
      }
      let found = metadata !== undefined;
      for (const [url, scope] of targets) {
        if (await store.has(scope, url)) found = true;
        // A GGUF's parts and a partly downloaded one's go with it (gguf-parts.ts).
        await (scope === "wllama/gguf" ? removeStoredGguf(store, scope, url) : store.remove(scope, url));
      }
      await deleteMetadata(this.backend, id);
      return found;
    });
  }

  /** Empties web-llm's caches for this backend (every model, ours or not) and our metadata. */
  async clear(): Promise<void> {
    const store = await this.store();
    for (const scope of SCOPES) await store.clear(scope);
    for (const metadata of await allMetadata(this.backend)) await deleteMetadata(this.backend, metadata.id);
  }

  async usage(): Promise<CacheUsage> {
    const models = await this.list();
    return { backend: this.backend, models, totalBytes: models.reduce((sum, m) => sum + m.bytes, 0), storage: await storageReport() };
  }

  /** Marks a model used now (list order, eviction choices). */
  async touch(id: string): Promise<void> {
    const metadata = await readMetadata(this.backend, id);
    if (metadata) await writeMetadata({ ...metadata, lastUsed: Date.now() });
  }

  /**
   * The record's GGUF files as Blobs, in part order, for wllama's
   * `loadModel`: read from the store the download filled (OPFS and the Cache
   * API give disk-backed Blobs: no copy in memory). A 500 naming the file
   * when one is missing: the host downloads before it loads.
   */
  async readGguf(record: ModelRecord): Promise<Blob[]> {
    const store = await this.store();
    const blobs: Blob[] = [];
    for (const artifact of ggufPlan(record).artifacts) {
      let blob = store.readBlob ? await readStoredGguf(store, artifact.scope, artifact.url) : undefined;
      if (!blob && !store.readBlob) {
        const value = await store.read(artifact.scope, artifact.url);
        if (value?.kind === "bytes") blob = new Blob([value.data]);
      }
      if (!blob) {
        throw new ApiError({ status: 500, code: "model_not_cached", param: "model", message: `${record.model_id}: ${artifact.url} is not in the ${this.backend} cache; load the model through the client, which downloads it first.` });
      }
      blobs.push(blob);
    }
    return blobs;
  }

  /** The record's model package manifest (parsed JSON) when it is cached, else null: what the model takes (models/inputs.ts). */
  async readPackageManifest(record: ModelRecord): Promise<unknown> {
    return this.readPackage(await this.store(), record);
  }

  private async readPackage(store: ArtifactStore, record: ModelRecord): Promise<unknown> {
    const pkg = packageArtifact(record);
    const value = pkg ? await store.read(pkg.scope, pkg.url).catch(() => undefined) : undefined;
    if (value?.kind !== "bytes") return null;
    try {
      return JSON.parse(new TextDecoder().decode(value.data)) as unknown;
    } catch {
      return null;
    }
  }

  private async readPackagePaths(store: ArtifactStore, record: ModelRecord): Promise<PackagePaths> {
    const manifest = await this.readPackage(store, record);
    return manifest === null ? {} : packagePathsOf(manifest);
  }

  private async readIndex(store: ArtifactStore, record: ModelRecord, paths: PackagePaths): Promise<TensorCacheIndex | null> {
    const { index } = manifestArtifacts(record, paths);
    const value = await store.read(index.scope, index.url).catch(() => undefined);
    if (!value) return null;
    try {
      return parseTensorIndex(value.kind === "json" ? value.data : JSON.parse(new TextDecoder().decode(value.data)), index.url);
    } catch {
      return null;
    }
  }
}

/** Whether `url` is one of `record`'s files: under its model folder, or its model library. */
function ownsUrl(record: ModelRecord): (url: string) => boolean {
  const folder = cleanModelUrl(record.model);
  const lib = record.model_lib ? new URL(record.model_lib, (globalThis as { location?: { href: string } }).location?.href).href : null;
  return (url) => url === lib || (url.startsWith(folder) && fileInFolderOrNull(folder, url.slice(folder.length)) === url);
}

const managers = new Map<CacheBackend, CacheManager>();

/** One manager per backend in this context. */
export function cacheManager(backend: CacheBackend = "indexeddb"): CacheManager {
  let manager = managers.get(backend);
  if (!manager) managers.set(backend, (manager = new CacheManager(backend)));
  return manager;
}
