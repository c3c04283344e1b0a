/**
 * Chooses the response store's home: IndexedDB where it exists (unless asked
 * otherwise), memory elsewhere, and memory too where IndexedDB exists but
 * refuses to open (some private modes): said once on the console, and
 * responses then last as long as the client.
 */
import { IdbResponseStore } from "./idb-response-store.js";
import { MemoryResponseStore } from "./memory-response-store.js";
import { DEFAULT_DATABASE, type ResponseStore, type ResponsesStoreOptions } from "./response-store.js";

export function createResponseStore(options: ResponsesStoreOptions = {}): ResponseStore {
  const kind = options.kind ?? (typeof indexedDB !== "undefined" ? "indexeddb" : "memory");
  if (kind === "indexeddb") {
    if (typeof indexedDB === "undefined") throw new RangeError('responsesStore.kind "indexeddb" needs IndexedDB, which this context lacks; use "memory".');
    return withMemoryFallback(new IdbResponseStore(options.databaseName ?? DEFAULT_DATABASE, options), () => new MemoryResponseStore(options));
  }
  if (kind !== "memory") throw new RangeError('responsesStore.kind must be "indexeddb" or "memory".');
  return new MemoryResponseStore(options);
}

function withMemoryFallback(idb: IdbResponseStore, memory: () => MemoryResponseStore): ResponseStore {
  let chosen: Promise<ResponseStore> | null = null;
  const store = () =>
    (chosen ??= idb.opens().then((ok) => {
      if (ok) return idb;
      console.warn(`webgpu-openai: IndexedDB database "${idb.databaseName}" cannot be opened here; stored responses are kept in memory for the life of this client.`);
      return memory();
    }));
  return {
    kind: "indexeddb",
    get: async (id) => (await store()).get(id),
    put: async (entry) => (await store()).put(entry),
    replace: async (entry) => (await store()).replace(entry),
    delete: async (id) => (await store()).delete(id),
    item: async (itemId) => (await store()).item(itemId),
    list: async () => (await store()).list(),
    clear: async () => (await store()).clear(),
    appendEvents: async (id, events, chunks, batchKey) => (await store()).appendEvents(id, events, chunks, batchKey),
    dropLog: async (id) => (await store()).dropLog(id),
    readEvents: async (id, fromBatch) => (await store()).readEvents(id, fromBatch),
    readChunks: async (id) => (await store()).readChunks(id),
  };
}
