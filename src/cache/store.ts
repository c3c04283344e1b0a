/**
 * One interface over web-llm's three cache backends, so the downloader and
 * the manager work the same on each. Every write resolves only once the
 * browser has committed it (IndexedDB `oncomplete`, `cache.put`, OPFS
 * `close`), so a quota failure surfaces on the file that caused it.
 */
import { ApiError } from "../protocol/api-error.js";
import type { StoreType } from "./artifacts.js";
import type { CacheBackend, Scope } from "./layout.js";
import { load } from "../lazy-imports.js";

/**
 * A file written as its bytes arrive (Cache API, OPFS), so a shard never has
 * to be held whole in memory. Nothing is visible to web-llm before `commit`;
 * `abort` (a failed check, a dropped connection) leaves no trace.
 */
export interface StreamingWrite {
  /** Resolves once the store has taken the chunk (backpressure); the chunk must not be changed afterwards. */
  write(chunk: Uint8Array): Promise<void>;
  /** Resolves once the file is committed (a quota failure rejects here). */
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** The content type a file is stored with where the backend keeps one (Cache API, OPFS), as web-llm stores it. */
export function contentTypeOf(storeType: StoreType): string {
  return storeType === "json" ? "application/json" : "application/octet-stream";
}

/** A stored file as read back: bytes, or (IndexedDB `tensor-cache.json`) the parsed object. */
export type StoredValue = { kind: "bytes"; data: ArrayBuffer } | { kind: "json"; data: unknown };

export interface ArtifactStore {
  readonly backend: CacheBackend;
  /** Whether a record exists under `url` (without reading its data). */
  has(scope: Scope, url: string): Promise<boolean>;
  read(scope: Scope, url: string): Promise<StoredValue | undefined>;
  /** Stores `bytes` the way web-llm stores this kind of file; resolves once committed. */
  write(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<void>;
  /**
   * Like `write`, but resolves as soon as the store holds its own copy of the
   * bytes (the caller may reuse the buffer), with `committed` settling on the
   * commit. IndexedDB has it: `put` clones synchronously. When the store took
   * the bytes' buffer by transfer (to copy it on another thread), `buffer` is
   * that buffer given back, and the caller's views of the old one are detached.
   */
  submit?(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<{ committed: Promise<void>; buffer?: ArrayBuffer }>;
  /**
   * Starts a streamed write (backends that can append: Cache API, OPFS).
   * `size` is the file's declared size when known. IndexedDB has none: a record is one ArrayBuffer.
   */
  openWrite?(scope: Scope, url: string, storeType: StoreType, size: number | null): Promise<StreamingWrite>;
  /** Gets ready to write into `scope` (IndexedDB starts the worker its large puts run in); nothing waits for it. */
  prepare?(scope: Scope): void;
  remove(scope: Scope, url: string): Promise<void>;
  /** Every URL stored in the scope. */
  urls(scope: Scope): Promise<string[]>;
  /** Removes everything in the scope. */
  clear(scope: Scope): Promise<void>;
}

/** Opens the store for `backend`, or says why this browser cannot have it. */
export async function openArtifactStore(backend: CacheBackend = "indexeddb"): Promise<ArtifactStore> {
  if (backend === "indexeddb") {
    if (typeof indexedDB === "undefined") throw unsupported(backend, "IndexedDB is not available in this context");
    const { IdbArtifactStore } = await load.idbStore();
    return new IdbArtifactStore();
  }
  if (backend === "cache") {
    if (typeof caches === "undefined") throw unsupported(backend, "the Cache API is not available here (it needs a secure context: https or http://localhost/127.0.0.1)");
    const { CacheApiArtifactStore } = await load.cacheApiStore();
    return new CacheApiArtifactStore();
  }
  if (backend === "opfs") {
    if (typeof navigator === "undefined" || typeof navigator.storage?.getDirectory !== "function") {
      throw unsupported(backend, "the Origin Private File System is not available here");
    }
    const { OpfsArtifactStore } = await load.opfsStore();
    return new OpfsArtifactStore();
  }
  throw new ApiError({ status: 400, param: "cache", code: "invalid_value", message: `Unknown cache backend ${JSON.stringify(backend)}: use "indexeddb" (default), "cache" or "opfs".` });
}

function unsupported(backend: CacheBackend, why: string): ApiError {
  return new ApiError({ status: 503, param: "cache", code: "cache_backend_unavailable", message: `cache: "${backend}" cannot be used: ${why}. Choose another backend with the \`cache\` option.` });
}

/** The bytes as an ArrayBuffer of exactly their length (no copy when they already are one). */
export function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer;
}
