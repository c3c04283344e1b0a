/**
 * The response store in an IndexedDB database of ours (default
 * "webgpu-openai-responses"), beside web-llm's weight databases: stored
 * responses survive a reload and are the origin's, shared by every tab and
 * worker. Raw IndexedDB rather than a key-value wrapper (idb-keyval): the
 * store needs an index (item id → responses holding it) and one transaction
 * over several object stores (the record, its summary, and the records
 * retention drops), which a key-value API does not give.
 *
 *   responses  {id, seq, itemIds, data: StoredResponse}   index itemIds (multiEntry)
 *   summaries  {id, seq, bytes, logBytes, keepsLog}        small: what retention and list order read
 *   events     {id, first, events, chunks?}                a background response's event log and journal, in batches
 *
 * Each put is one readwrite transaction over responses + summaries: a reload
 * mid-write leaves the old state or the new one, never half a record. The
 * summary is what says a response is held: a batch of events is logged only
 * in a transaction that finds its summary, and delete, clear and retention
 * remove a response's rows of every store in one transaction, so no row
 * outlives its summary. Rows left by earlier versions or a crash are swept
 * when the database is first opened here.
 */
import type { InputItem, OutputItem, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { batchBytes, checkRecord, DEFAULT_DATABASE, expired, findItem, itemIdsOf, nextSeq, overRetention, recordBytes, retentionOf, type RecordSummary, type ResponseStore, type RetentionOptions, type StoredResponse } from "./response-store.js";
import { committed, promised } from "../idb/requests.js";
import type { GeneratedChunk } from "../engine/types.js";

const VERSION = 1;
const RESPONSES = "responses";
const SUMMARIES = "summaries";
const EVENTS = "events";

/** Every batch of one response's event log. */
const logOf = (id: string) => IDBKeyRange.bound([id, -Infinity], [id, Infinity]);

interface ResponseRecord {
  id: string;
  seq: number;
  itemIds: string[];
  data: unknown;
}

export function openResponsesDatabase(name: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(name, VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(RESPONSES)) db.createObjectStore(RESPONSES, { keyPath: "id" }).createIndex("itemIds", "itemIds", { multiEntry: true });
      if (!db.objectStoreNames.contains(SUMMARIES)) db.createObjectStore(SUMMARIES, { keyPath: "id" });
      if (!db.objectStoreNames.contains(EVENTS)) db.createObjectStore(EVENTS, { keyPath: ["id", "first"] });
    };
    request.onsuccess = () => {
      const db = request.result;
      // Let another context delete or upgrade the database instead of blocking it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error(`IndexedDB database ${name} is blocked by another connection.`));
  });
}

export class IdbResponseStore implements ResponseStore {
  readonly kind = "indexeddb" as const;
  private dbPromise: Promise<IDBDatabase> | null = null;
  private readonly retention;

  constructor(
    readonly databaseName = DEFAULT_DATABASE,
    options: RetentionOptions = {},
  ) {
    this.retention = retentionOf(options);
  }

  /** Whether the database opens here (false in contexts that refuse IndexedDB, e.g. some private modes); tried once. */
  opens(): Promise<boolean> {
    return (this.openCheck ??= this.db().then(
      () => true,
      () => false,
    ));
  }
  private openCheck: Promise<boolean> | null = null;

  private db(): Promise<IDBDatabase> {
    if (!this.dbPromise) {
      const opening = openResponsesDatabase(this.databaseName).then(async (db) => {
        db.addEventListener("close", () => (this.dbPromise = null));
        await this.sweep(db).catch((error) => console.warn(`webgpu-openai: could not sweep the response store "${this.databaseName}" (${(error as Error)?.message ?? error}); it is tried again when the database next opens.`));
        return db;
      });
      opening.catch(() => (this.dbPromise = null));
      this.dbPromise = opening;
    }
    return this.dbPromise;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const db = await this.db();
    const record = (await promised(db.transaction(RESPONSES, "readonly").objectStore(RESPONSES).get(id))) as ResponseRecord | undefined;
    // Past maxAgeMs: gone as retention would have dropped it (at the next write).
    return record === undefined || expired(record.seq, this.retention) ? undefined : checkRecord(id, record?.data);
  }

  put(entry: StoredResponse): Promise<void> {
    return this.write(entry, false).then(() => undefined);
  }

  replace(entry: StoredResponse): Promise<boolean> {
    return this.write(entry, true);
  }

  async delete(id: string): Promise<boolean> {
    const db = await this.db();
    const tx = db.transaction([RESPONSES, SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    const found = (await promised(tx.objectStore(SUMMARIES).getKey(id))) !== undefined || (await promised(tx.objectStore(RESPONSES).getKey(id))) !== undefined;
    this.dropIn(tx, id);
    await done;
    return found;
  }

  async item(itemId: string): Promise<InputItem | OutputItem | undefined> {
    const db = await this.db();
    const records = (await promised(db.transaction(RESPONSES, "readonly").objectStore(RESPONSES).index("itemIds").getAll(itemId))) as ResponseRecord[];
    records.sort((a, b) => a.seq - b.seq);
    for (const record of records) {
      if (expired(record.seq, this.retention)) continue;
      let entry: StoredResponse;
      try {
        entry = checkRecord(record.id, record.data);
      } catch {
        continue;
      }
      const found = findItem(entry, itemId);
      if (found) return found;
    }
    return undefined;
  }

  async list(): Promise<ResponseObject[]> {
    const db = await this.db();
    const records = (await promised(db.transaction(RESPONSES, "readonly").objectStore(RESPONSES).getAll())) as ResponseRecord[];
    records.sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
    const out: ResponseObject[] = [];
    for (const record of records) {
      if (expired(record.seq, this.retention)) continue;
      try {
        out.push(checkRecord(record.id, record.data).response);
      } catch {
        // A damaged record is left out of the list; retrieving it names the damage.
      }
    }
    return out;
  }

  async clear(): Promise<number> {
    const db = await this.db();
    const tx = db.transaction([RESPONSES, SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    const n = await promised(tx.objectStore(RESPONSES).count());
    for (const name of [RESPONSES, SUMMARIES, EVENTS]) tx.objectStore(name).clear();
    await done;
    return n;
  }

  // ── a background response's event log ──

  async appendEvents(id: string, events: ResponseStreamEvent[], chunks: GeneratedChunk[] = [], batchKey?: number): Promise<boolean> {
    const first = events[0]?.sequence_number ?? batchKey;
    if (first === undefined || (events.length === 0 && chunks.length === 0)) return true;
    const db = await this.db();
    const tx = db.transaction([RESPONSES, SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    const summaries = tx.objectStore(SUMMARIES);
    // Checked in this transaction: a delete, clear or retention in another transaction (another tab's) is before it or after it.
    const summary = (await promised(summaries.get(id))) as RecordSummary | undefined;
    if (!summary || summary.keepsLog === false) {
      await done;
      return false;
    }
    await this.changeAndRetain(tx, done, () => {
      tx.objectStore(EVENTS).put(chunks.length > 0 ? { id, first, events, chunks } : { id, first, events });
      summaries.put({ ...summary, logBytes: (summary.logBytes ?? 0) + batchBytes(events, chunks) } satisfies RecordSummary);
    });
    return true;
  }

  async dropLog(id: string): Promise<void> {
    const db = await this.db();
    const tx = db.transaction([SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    tx.objectStore(EVENTS).delete(logOf(id));
    const summary = (await promised(tx.objectStore(SUMMARIES).get(id))) as RecordSummary | undefined;
    if (summary) tx.objectStore(SUMMARIES).put({ ...summary, logBytes: 0, keepsLog: false } satisfies RecordSummary);
    await done;
  }

  async readChunks(id: string): Promise<GeneratedChunk[]> {
    const db = await this.db();
    const batches = (await promised(db.transaction(EVENTS, "readonly").objectStore(EVENTS).getAll(logOf(id)))) as Array<{ chunks?: GeneratedChunk[] }>;
    return batches.flatMap((batch) => batch.chunks ?? []);
  }

  async readEvents(id: string, fromBatch = -Infinity): Promise<ResponseStreamEvent[]> {
    const db = await this.db();
    const range = IDBKeyRange.bound([id, fromBatch], [id, Infinity]);
    const batches = (await promised(db.transaction(EVENTS, "readonly").objectStore(EVENTS).getAll(range))) as Array<{ events: ResponseStreamEvent[] }>;
    return batches.flatMap((batch) => batch.events);
  }

  /** One transaction: the record, its summary, and the records retention drops. `onlyIfHeld`: not when the id was deleted meanwhile. */
  private async write(entry: StoredResponse, onlyIfHeld: boolean): Promise<boolean> {
    const id = entry.response.id;
    const bytes = recordBytes(entry);
    const db = await this.db();
    const tx = db.transaction([RESPONSES, SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    const summaries = tx.objectStore(SUMMARIES);
    const existing = (await promised(summaries.get(id))) as RecordSummary | undefined;
    if (onlyIfHeld && !existing) {
      await done;
      return false;
    }
    await this.changeAndRetain(tx, done, () => {
      const seq = existing?.seq ?? nextSeq();
      tx.objectStore(RESPONSES).put({ id, seq, itemIds: itemIdsOf(entry), data: entry } satisfies ResponseRecord);
      // A rewrite of the record keeps its log, and what that log counts.
      summaries.put({ id, seq, bytes, logBytes: existing?.logBytes ?? 0, keepsLog: existing?.keepsLog ?? true } satisfies RecordSummary);
    });
    return true;
  }

  /**
   * In `tx` (over every store): `change`, then retention over the summaries as
   * they now stand, committed together. Nothing of a write that fails half-way
   * is kept (a put that throws, e.g. a value IndexedDB cannot clone).
   */
  private async changeAndRetain(tx: IDBTransaction, done: Promise<void>, change: () => void): Promise<void> {
    try {
      change();
      const all = (await promised(tx.objectStore(SUMMARIES).getAll())) as RecordSummary[];
      for (const old of overRetention(all, this.retention)) this.dropIn(tx, old);
    } catch (error) {
      done.catch(() => {});
      tx.abort();
      throw error;
    }
    await done;
  }

  private dropIn(tx: IDBTransaction, id: string): void {
    tx.objectStore(RESPONSES).delete(id);
    tx.objectStore(SUMMARIES).delete(id);
    tx.objectStore(EVENTS).delete(logOf(id));
  }

  /**
   * When the database first opens here, one transaction: removes the rows of
   * every id without both a summary and a record (event batches, chunk
   * journals, records or summaries left by an earlier version, whose last
   * flush could follow a delete, or by a crash), counts the logs of
   * summaries an earlier version wrote without `logBytes`, and applies
   * retention (maxAgeMs included) to what is left.
   */
  private async sweep(db: IDBDatabase): Promise<void> {
    const tx = db.transaction([RESPONSES, SUMMARIES, EVENTS], "readwrite");
    const done = committed(tx);
    const summaries = tx.objectStore(SUMMARIES);
    const events = tx.objectStore(EVENTS);
    const all = (await promised(summaries.getAll())) as RecordSummary[];
    const records = new Set((await promised(tx.objectStore(RESPONSES).getAllKeys())) as string[]);
    const logged = new Set(((await promised(events.getAllKeys())) as Array<[string, number]>).map(([id]) => id));
    const held = all.filter((summary) => records.has(summary.id));
    const heldIds = new Set(held.map((summary) => summary.id));
    for (const id of new Set([...all.map((summary) => summary.id), ...records, ...logged])) if (!heldIds.has(id)) this.dropIn(tx, id);
    for (const summary of held) {
      if (summary.logBytes !== undefined) continue;
      const batches = (await promised(events.getAll(logOf(summary.id)))) as Array<{ events: ResponseStreamEvent[]; chunks?: GeneratedChunk[] }>;
      summary.logBytes = batches.reduce((n, batch) => n + batchBytes(batch.events ?? [], batch.chunks ?? []), 0);
      summaries.put(summary);
    }
    for (const old of overRetention(held, this.retention)) this.dropIn(tx, old);
    await done;
  }
}
