/**
 * web-llm's IndexedDB layout (`ArtifactIndexedDBCache`, bundle L6598–6780):
 * one database per scope (`webllm/config`, `webllm/wasm`, `webllm/model`),
 * version 1, object store `urls` keyed by `url`, records `{url, data}` where
 * `data` is an ArrayBuffer, or the parsed object for `tensor-cache.json`.
 * Ours beside them: `wllama/gguf`, whose records' `data` is a Blob (GGUF
 * files, streamed in: `openWrite`).
 */
import type { StoreType } from "./artifacts.js";
import type { Scope } from "./layout.js";
import { exactBuffer, type ArtifactStore, type StoredValue, type StreamingWrite } from "./store.js";
import { committed, promised } from "../idb/requests.js";
import { IdbWriter } from "./idb-writer.js";

const DB_VERSION = 1;
const STORE = "urls";
/** The scope whose files are Blobs here (GGUF, cache/gguf-artifacts.ts). */
const GGUF_SCOPE: Scope = "wllama/gguf";

/** Opens (creating if needed) one of web-llm's databases exactly as web-llm does. */
export function openWebLlmDatabase(scope: Scope): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(scope, DB_VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: "url" });
    };
    request.onsuccess = () => {
      const db = request.result;
      // Let another context delete or upgrade the database instead of blocking it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error(`IndexedDB database ${scope} is blocked by another connection.`));
  });
}

/** Files at least this large are put from the writer's worker; smaller ones cost less than the message. */
const OFF_THREAD_BYTES = 1024 * 1024;

export class IdbArtifactStore implements ArtifactStore {
  readonly backend = "indexeddb" as const;
  private readonly dbs = new Map<Scope, Promise<IDBDatabase>>();
  private readonly writer = new IdbWriter();

  private db(scope: Scope): Promise<IDBDatabase> {
    let db = this.dbs.get(scope);
    if (!db) {
      db = openWebLlmDatabase(scope).then((opened) => {
        opened.addEventListener("close", () => this.dbs.delete(scope));
        return opened;
      });
      db.catch(() => this.dbs.delete(scope));
      this.dbs.set(scope, db);
    }
    return db;
  }

  async has(scope: Scope, url: string): Promise<boolean> {
    const db = await this.db(scope);
    return (await promised(db.transaction(STORE, "readonly").objectStore(STORE).getKey(url))) !== undefined;
  }

  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const db = await this.db(scope);
    const record = (await promised(db.transaction(STORE, "readonly").objectStore(STORE).get(url))) as { url: string; data: unknown } | undefined;
    if (record === undefined) return undefined;
    if (record.data instanceof ArrayBuffer) return { kind: "bytes", data: record.data };
    if (record.data instanceof Blob) return { kind: "bytes", data: await record.data.arrayBuffer() };
    if (ArrayBuffer.isView(record.data)) return { kind: "bytes", data: exactBuffer(new Uint8Array(record.data.buffer, record.data.byteOffset, record.data.byteLength)) };
    return { kind: "json", data: record.data };
  }

  /** A GGUF is stored as a Blob (kept on disk by the browser, read back without a copy in memory); a record of bytes is wrapped. */
  async readBlob(scope: Scope, url: string): Promise<Blob | undefined> {
    const db = await this.db(scope);
    const record = (await promised(db.transaction(STORE, "readonly").objectStore(STORE).get(url))) as { url: string; data: unknown } | undefined;
    if (record?.data instanceof Blob) return record.data;
    if (record?.data instanceof ArrayBuffer) return new Blob([record.data]);
    return undefined;
  }

  /**
   * GGUF files only (`streamsInto`): web-llm reads its own scopes' records as
   * ArrayBuffers, and Chromium refuses one IndexedDB value over about 127 MiB
   * ("The serialized keys and/or value are too large", measured on a 128 MiB
   * file), far below a GGUF's size. A Blob value is stored beside the
   * database, so a GGUF is kept as a Blob assembled from its chunks, which
   * the browser's blob storage may keep on disk; nothing is visible before
   * `commit`.
   */
  streamsInto(scope: Scope): boolean {
    return scope === GGUF_SCOPE;
  }

  async openWrite(scope: Scope, url: string): Promise<StreamingWrite> {
    let parts: Blob[] = [];
    return {
      write: async (chunk) => {
        parts.push(new Blob([chunk as BlobPart]));
      },
      commit: async () => {
        const data = new Blob(parts);
        parts = [];
        const db = await this.db(scope);
        const transaction = db.transaction(STORE, "readwrite");
        const done = committed(transaction);
        transaction.objectStore(STORE).put({ url, data });
        await done;
      },
      abort: async () => {
        parts = [];
      },
    };
  }

  async write(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<void> {
    await (await this.submit(scope, url, bytes, storeType)).committed;
  }

  /**
   * `put` clones the value synchronously (structured serialization), so the
   * caller's buffer is free again as soon as this resolves, while the commit
   * to disk goes on: the next shard can stream into it meanwhile. A large
   * file's buffer is put from the writer's worker (idb-writer.ts: the clone
   * off the thread that reads the network) and comes back as `buffer`.
   */
  async submit(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<{ committed: Promise<void>; buffer?: ArrayBuffer }> {
    if (storeType !== "json" && scope !== GGUF_SCOPE && bytes.byteLength >= OFF_THREAD_BYTES && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
      const put = await this.writer.put(scope, url, bytes.buffer);
      if (put) return put;
    }
    // A GGUF checked whole (SRI without WebAssembly) is still kept as a Blob: see openWrite.
    const data = storeType === "json" ? JSON.parse(new TextDecoder().decode(bytes)) : scope === GGUF_SCOPE ? new Blob([bytes as BlobPart]) : exactBuffer(bytes);
    const db = await this.db(scope);
    const transaction = db.transaction(STORE, "readwrite");
    const done = committed(transaction);
    done.catch(() => undefined);
    transaction.objectStore(STORE).put({ url, data });
    return { committed: done };
  }

  /** Starts the writer's worker and opens `scope` there, so the first large put does not wait for them. */
  prepare(scope: Scope): void {
    this.writer.warm(scope);
  }

  async remove(scope: Scope, url: string): Promise<void> {
    const db = await this.db(scope);
    const transaction = db.transaction(STORE, "readwrite");
    const done = committed(transaction);
    transaction.objectStore(STORE).delete(url);
    await done;
  }

  async urls(scope: Scope): Promise<string[]> {
    const db = await this.db(scope);
    return (await promised(db.transaction(STORE, "readonly").objectStore(STORE).getAllKeys())).map(String);
  }

  async clear(scope: Scope): Promise<void> {
    const db = await this.db(scope);
    const transaction = db.transaction(STORE, "readwrite");
    const done = committed(transaction);
    transaction.objectStore(STORE).clear();
    await done;
  }
}
