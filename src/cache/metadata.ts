/**
 * What we know about each cached model (idb-keyval, database
 * `webgpu-openai-cache`): size, completeness, last use and its files, so the
 * manager can list and delete without reading weights.
 */
import { createStore, del, entries, get, set, type UseStore } from "idb-keyval";
import type { Scope } from "./layout.js";
import type { CacheBackend } from "./layout.js";

export interface CachedFile {
  url: string;
  scope: Scope;
  bytes: number;
}

export interface ModelMetadata {
  id: string;
  backend: CacheBackend;
  /** Bytes of all files stored so far. */
  bytes: number;
  /** Every artifact stored and verified. */
  complete: boolean;
  /** ms since epoch. */
  lastUsed: number;
  files: CachedFile[];
  /** Why the last download stopped, when it did. */
  error?: string;
}

let store: UseStore | null = null;
const metaStore = () => (store ??= createStore("webgpu-openai-cache", "models"));
const keyOf = (backend: CacheBackend, id: string) => `${backend}:${id}`;

export function readMetadata(backend: CacheBackend, id: string): Promise<ModelMetadata | undefined> {
  return get<ModelMetadata>(keyOf(backend, id), metaStore());
}

export function writeMetadata(metadata: ModelMetadata): Promise<void> {
  return set(keyOf(metadata.backend, metadata.id), metadata, metaStore());
}

export function deleteMetadata(backend: CacheBackend, id: string): Promise<void> {
  return del(keyOf(backend, id), metaStore());
}

export async function allMetadata(backend: CacheBackend): Promise<ModelMetadata[]> {
  return (await entries<string, ModelMetadata>(metaStore())).map(([, value]) => value).filter((value) => value.backend === backend);
}
