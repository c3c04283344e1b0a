/**
 * The response store in memory, for the life of its host: Node, and browsers
 * that ask for it (`responsesStore: { kind: "memory" }`). Same semantics as
 * the IndexedDB form (copies in and out, oldest dropped first, the oldest
 * holder of an item id answers `item`), so tests of one hold for the other.
 */
import type { InputItem, OutputItem, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import { batchBytes, checkRecord, expired, findItem, itemIdsOf, nextSeq, overRetention, recordBytes, retentionOf, type RecordSummary, type ResponseStore, type RetentionOptions, type StoredResponse } from "./response-store.js";
import type { GeneratedChunk } from "../engine/types.js";

interface Held {
  summary: RecordSummary;
  itemIds: string[];
  /** Kept as written (a structured clone), so a record can be damaged in tests as one on disk can. */
  value: unknown;
}

export class MemoryResponseStore implements ResponseStore {
  readonly kind = "memory" as const;
  private readonly records = new Map<string, Held>();
  private readonly events = new Map<string, ResponseStreamEvent[]>();
  private readonly chunks = new Map<string, GeneratedChunk[]>();
  /** Item id → the responses holding it, oldest first. */
  private readonly holders = new Map<string, string[]>();
  private readonly retention;

  constructor(options: RetentionOptions = {}) {
    this.retention = retentionOf(options);
  }

  get size(): number {
    return this.records.size;
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const held = this.readable(id);
    return held ? structuredClone(checkRecord(id, held.value)) : undefined;
  }

  /** The record held for `id`, unless it is past maxAgeMs (dropped at the next write). */
  private readable(id: string): Held | undefined {
    const held = this.records.get(id);
    return held && !expired(held.summary.seq, this.retention) ? held : undefined;
  }

  async put(entry: StoredResponse): Promise<void> {
    this.write(entry, this.records.get(entry.response.id)?.summary.seq ?? nextSeq());
  }

  async replace(entry: StoredResponse): Promise<boolean> {
    const held = this.records.get(entry.response.id);
    if (!held) return false;
    this.write(entry, held.summary.seq);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.drop(id);
  }

  async item(itemId: string): Promise<InputItem | OutputItem | undefined> {
    for (const owner of this.holders.get(itemId) ?? []) {
      const entry = await this.get(owner).catch(() => undefined);
      const found = entry && findItem(entry, itemId);
      if (found) return found;
    }
    return undefined;
  }

  async list(): Promise<ResponseObject[]> {
    const ordered = [...this.records.values()].filter((held) => !expired(held.summary.seq, this.retention)).sort((a, b) => a.summary.seq - b.summary.seq);
    const out: ResponseObject[] = [];
    for (const held of ordered) {
      try {
        out.push(structuredClone(checkRecord(held.summary.id, held.value).response));
      } catch {
        // A damaged record is left out of the list; retrieving it names the damage.
      }
    }
    return out;
  }

  async clear(): Promise<number> {
    const n = this.records.size;
    this.records.clear();
    this.holders.clear();
    this.events.clear();
    this.chunks.clear();
    return n;
  }

  async appendEvents(id: string, events: ResponseStreamEvent[], chunks: GeneratedChunk[] = []): Promise<boolean> {
    if (events.length === 0 && chunks.length === 0) return true;
    const held = this.records.get(id);
    // A run's last flush can come after its response was deleted, cleared or dropped: nothing is kept for it.
    if (!held || held.summary.keepsLog === false) return false;
    held.summary.logBytes = (held.summary.logBytes ?? 0) + batchBytes(events, chunks);
    const log = this.events.get(id) ?? [];
    for (const event of structuredClone(events)) log.push(event);
    this.events.set(id, log);
    if (chunks.length > 0) this.chunks.set(id, [...(this.chunks.get(id) ?? []), ...structuredClone(chunks)]);
    this.applyRetention();
    return true;
  }

  async dropLog(id: string): Promise<void> {
    this.events.delete(id);
    this.chunks.delete(id);
    const held = this.records.get(id);
    if (held) held.summary = { ...held.summary, logBytes: 0, keepsLog: false };
  }

  async readChunks(id: string): Promise<GeneratedChunk[]> {
    return structuredClone(this.chunks.get(id) ?? []);
  }

  async readEvents(id: string, fromBatch = -Infinity): Promise<ResponseStreamEvent[]> {
    // Events are kept one by one here: from `fromBatch` on is a superset of the batches from there, as callers filter anyway.
    return structuredClone((this.events.get(id) ?? []).filter((event) => event.sequence_number >= fromBatch));
  }

  /** Tests only: replaces a record's stored value as a damaged disk would. */
  damage(id: string, value: unknown): void {
    const held = this.records.get(id);
    if (held) held.value = value;
  }

  private write(entry: StoredResponse, seq: number): void {
    const id = entry.response.id;
    // A rewrite of the record keeps its log, and what that log counts.
    const { logBytes = 0, keepsLog = true } = this.records.get(id)?.summary ?? {};
    this.unindex(id);
    const value = structuredClone(entry);
    const held: Held = { summary: { id, seq, bytes: recordBytes(entry), logBytes, keepsLog }, itemIds: itemIdsOf(entry), value };
    this.records.set(id, held);
    for (const itemId of held.itemIds) {
      const owners = this.holders.get(itemId) ?? [];
      owners.push(id);
      owners.sort((a, b) => (this.records.get(a)?.summary.seq ?? 0) - (this.records.get(b)?.summary.seq ?? 0));
      this.holders.set(itemId, owners);
    }
    this.applyRetention();
  }

  private applyRetention(): void {
    for (const old of overRetention([...this.records.values()].map((h) => h.summary), this.retention)) this.drop(old);
  }

  private drop(id: string): boolean {
    this.events.delete(id);
    this.chunks.delete(id);
    return this.unindex(id);
  }

  /** Forgets the record and its items (its event log stays: a rewrite of the record keeps it). */
  private unindex(id: string): boolean {
    const held = this.records.get(id);
    if (!held) return false;
    this.records.delete(id);
    for (const itemId of held.itemIds) {
      const owners = (this.holders.get(itemId) ?? []).filter((owner) => owner !== id);
      if (owners.length > 0) this.holders.set(itemId, owners);
      else this.holders.delete(itemId);
    }
    return true;
  }
}
