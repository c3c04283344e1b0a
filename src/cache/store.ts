/**
 * One interface over web-llm's three cache backends, so the downloader and
 * the manager work the same on each. Every write resolves only once the
 * browser has committed it (IndexedDB `oncomplete`, `cache.put`, OPFS
 * `close`), so a quota failure surfaces on the file that caused it.
 */
import type { StoreType } from "./artifacts.js";
import type { CacheBackend, Scope } from "./layout.js";

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
  /**
   * A stored file as a Blob, for an engine that takes one (wllama): OPFS's
   * File and the Cache API's body are backed by the disk, so no copy is made
   * in memory; IndexedDB's record is one ArrayBuffer, wrapped.
   */
  readBlob?(scope: Scope, url: string): Promise<Blob | undefined>;
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
  /** Whether files of `scope` go through `openWrite` (absent: every scope does, where it exists). IndexedDB: only GGUFs, stored as Blobs. */
  streamsInto?(scope: Scope): boolean;
  /** Gets ready to write into `scope` (IndexedDB starts the worker its large puts run in); nothing waits for it. */
  prepare?(scope: Scope): void;
  remove(scope: Scope, url: string): Promise<void>;
  /** Every URL stored in the scope. */
  urls(scope: Scope): Promise<string[]>;
  /** Removes everything in the scope. */
  clear(scope: Scope): Promise<void>;
}

/** The bytes as an ArrayBuffer of exactly their length (no copy when they already are one). */
export function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.slice().buffer;
}
