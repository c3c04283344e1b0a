/** Chooses the response store's home: IndexedDB where it exists (unless asked otherwise), memory elsewhere. */
import { IdbResponseStore } from "./idb-response-store.js";
import { MemoryResponseStore } from "./memory-response-store.js";
import { DEFAULT_DATABASE, type ResponseStore, type ResponsesStoreOptions } from "./response-store.js";

export function createResponseStore(options: ResponsesStoreOptions = {}): ResponseStore {
  const kind = options.kind ?? (typeof indexedDB !== "undefined" ? "indexeddb" : "memory");
  if (kind === "indexeddb") {
    if (typeof indexedDB === "undefined") throw new RangeError('responsesStore.kind "indexeddb" needs IndexedDB, which this context lacks; use "memory".');
    return new IdbResponseStore(options.databaseName ?? DEFAULT_DATABASE, options);
  }
  if (kind !== "memory") throw new RangeError('responsesStore.kind must be "indexeddb" or "memory".');
  return new MemoryResponseStore(options);
}
