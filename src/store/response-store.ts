/**
 * Stored responses (`store: true`, the default): what `previous_response_id`,
 * `item_reference`, retrieve, delete, input_items and list read. One interface,
 * two homes: memory (Node, `worker: false` without IndexedDB, or asked for) and
 * an IndexedDB database of ours (browsers), so a response outlives a reload.
 *
 * Every record stands alone: it holds its whole conversation (`history`), so
 * dropping an older response never breaks continuing a newer one, and a write
 * is one record (atomic). Retention drops the oldest first (by creation).
 */
import { ApiError } from "../protocol/api-error.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { InputItem, OutputItem, ResponseObject, ResponseStreamEvent } from "../protocol/responses/types.js";
import type { McpListToolsItem } from "../protocol/responses/mcp-items.js";
import type { GeneratedChunk } from "../engine/types.js";

export interface StoredResponse {
  response: ResponseObject;
  /** This request's own input items (what input_items lists). */
  inputItems: InputItem[];
  /** The conversation this response ends, without instructions: what `previous_response_id` continues. */
  history: NormalizedMessage[];
  /** The `mcp` tools' listings its conversation has (never their headers): the next turn's `previous_response_id` reuses them. */
  mcpListings?: McpListToolsItem[];
  /** While it is generating: what resuming it takes (its request) and who generates it (owner-lock.ts). */
  journal?: ResponseJournal;
}

export interface ResponseJournal {
  /** The request body as received. */
  body: unknown;
  /** The Web Lock name of the host generating it. */
  owner: string;
  /** The client (a shared worker's tab) that sent it. */
  client?: string;
}

/** How much the store keeps; beyond any bound the oldest responses (by creation) are dropped first. */
export interface RetentionOptions {
  /** At most this many responses. Default 100. */
  maxResponses?: number;
  /** At most this many bytes of records and their event logs (each counted as its JSON length). Default 64 MiB. */
  maxBytes?: number;
  /** Responses older than this (milliseconds since creation) are dropped. Default: no age limit. */
  maxAgeMs?: number;
}

/** The `responsesStore` option of createClient. */
export interface ResponsesStoreOptions extends RetentionOptions {
  /**
   * Where stored responses live: `"indexeddb"` (the default where IndexedDB
   * exists: they survive a reload and are shared by the origin's tabs) or
   * `"memory"` (for the life of the client only).
   */
  kind?: "indexeddb" | "memory";
  /** The IndexedDB database's name. Default "webgpu-openai-responses". */
  databaseName?: string;
}

export const DEFAULT_MAX_RESPONSES = 100;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_DATABASE = "webgpu-openai-responses";

export interface ResponseListQuery {
  limit?: number;
  order?: "asc" | "desc";
  /** A response id: the page starts after it. */
  after?: string;
}

export interface ResponseList {
  object: "list";
  data: ResponseObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** What a store keeps per response besides the entry: for ordering and retention. */
export interface RecordSummary {
  id: string;
  /** Creation order (milliseconds, with a fraction that orders responses of one millisecond). */
  seq: number;
  /** The record's size as JSON. */
  bytes: number;
  /** Its event log's and chunk journal's size as JSON (absent in summaries an older version wrote: counted at startup). */
  logBytes?: number;
  /** False once its log was dropped (dropLog): no event is logged for it any more. */
  keepsLog?: boolean;
}

/** The store interface: every operation is asynchronous (IndexedDB); the memory form answers at once. */
export interface ResponseStore {
  readonly kind: "indexeddb" | "memory";
  /** The entry; throws a 500 `stored_response_corrupt` for a record that cannot be read. */
  get(id: string): Promise<StoredResponse | undefined>;
  /** Writes the entry (one transaction) and applies retention. */
  put(entry: StoredResponse): Promise<void>;
  /** Puts `entry` in place of the one with its id, if that is still held (not deleted or dropped); false otherwise. */
  replace(entry: StoredResponse): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /**
   * A stored input or output item by id. When several responses hold an item
   * with that id (ids an app chose itself), the oldest holder answers: a later
   * request re-using an id never takes over another response's item.
   */
  item(itemId: string): Promise<InputItem | OutputItem | undefined>;
  /** Responses oldest first, corrupt records left out. */
  list(): Promise<ResponseObject[]>;
  /** Deletes every stored response; how many there were. */
  clear(): Promise<number>;
  /**
   * Adds events (in sequence order) to a background response's log, with the
   * engine chunks they came from (its journal: what a resumed run continues
   * from), in one write; dropped with the response. `batchKey` orders a batch
   * with chunks but no events (its events are not out yet): any number above
   * the last logged event's sequence number and below the next one.
   *
   * Checked in the same write: nothing is logged (false) for an id whose
   * record is gone (deleted, cleared, dropped by retention: a run's last
   * flush comes after its delete) or whose log was dropped. The log counts
   * in the record's bytes, and retention is applied.
   */
  appendEvents(id: string, events: ResponseStreamEvent[], chunks?: GeneratedChunk[], batchKey?: number): Promise<boolean>;
  /**
   * Drops a response's event log and journal, and logs nothing more for it:
   * a finished stream's (not a background one's), which no stream can
   * reattach to and no recovery needs. Its bytes no longer count.
   */
  dropLog(id: string): Promise<void>;
  /** A response's logged events, in order; `fromBatch`: only the batches logged from that sequence number on. */
  readEvents(id: string, fromBatch?: number): Promise<ResponseStreamEvent[]>;
  /** A background response's journaled engine chunks, in order. */
  readChunks(id: string): Promise<GeneratedChunk[]>;
}

let counter = 0;
/** Creation order for a new record: time, then order within this context's millisecond. */
export function nextSeq(): number {
  counter = (counter + 1) % 1000;
  return Date.now() + counter / 1000;
}

export function recordBytes(entry: StoredResponse): number {
  return JSON.stringify(entry).length;
}

/** What one logged batch adds to its record's bytes. */
export function batchBytes(events: readonly ResponseStreamEvent[], chunks: readonly GeneratedChunk[]): number {
  return JSON.stringify(events).length + (chunks.length > 0 ? JSON.stringify(chunks).length : 0);
}

/** Whether a record created at `seq` is past `maxAgeMs`: reads leave it out as retention would have dropped it. */
export function expired(seq: unknown, retention: RetentionOptions, now = Date.now()): boolean {
  return retention.maxAgeMs !== undefined && typeof seq === "number" && now - seq > retention.maxAgeMs;
}

/** The items `item_reference` can name: the request's input items and the response's output items. */
function itemsOf(entry: StoredResponse): Array<InputItem | OutputItem> {
  return [...entry.inputItems, ...entry.response.output];
}

export function itemIdsOf(entry: StoredResponse): string[] {
  return [...new Set(itemsOf(entry).map((item) => item.id).filter((id): id is string => typeof id === "string"))];
}

/** The entry's item with id `itemId`, if it holds one. */
export function findItem(entry: StoredResponse, itemId: string): InputItem | OutputItem | undefined {
  return itemsOf(entry).find((item) => item.id === itemId);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A conversation message as continuing it reads it (roles, content, tool calls): anything else is damage, not a TypeError later. */
function isMessage(value: unknown): boolean {
  if (!isObject(value) || !["system", "user", "assistant", "tool"].includes(value.role as string)) return false;
  const content = value.content;
  if (typeof content !== "string" && !(Array.isArray(content) && content.every(isObject))) return false;
  const calls = value.toolCalls;
  return Array.isArray(calls) && calls.every((call) => isObject(call) && isObject(call.function) && typeof call.function.name === "string" && typeof call.function.arguments === "string");
}

/** Throws the clear error for a record that is not a stored response (damaged on disk, or written by something else). */
export function checkRecord(id: string, value: unknown): StoredResponse {
  const entry = value as Partial<StoredResponse> | null;
  const ok =
    typeof entry === "object" && entry !== null &&
    typeof entry.response === "object" && entry.response !== null && entry.response.id === id && typeof entry.response.status === "string" && Array.isArray(entry.response.output) &&
    Array.isArray(entry.inputItems) && Array.isArray(entry.history) &&
    entry.inputItems.every(isObject) && entry.response.output.every(isObject) && entry.history.every(isMessage);
  if (!ok) {
    throw new ApiError({
      status: 500,
      code: "stored_response_corrupt",
      message: `The stored response '${id}' cannot be read: its record is damaged. Delete it (client.responses.delete) or store it again; the other stored responses are intact.`,
    });
  }
  return entry as StoredResponse;
}

/** A summary's bytes, record and log; a damaged count (not a number ≥ 0) counts as 0 rather than poisoning the sum. */
export function summaryBytes(summary: RecordSummary): number {
  const size = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : 0);
  return size(summary.bytes) + size(summary.logBytes);
}

/**
 * Which summaries retention drops, oldest first: beyond the age, then the
 * count, then the bytes (records and event logs). A summary with a damaged
 * `seq` is taken for the oldest.
 */
export function overRetention(summaries: RecordSummary[], retention: Required<Pick<RetentionOptions, "maxResponses" | "maxBytes">> & RetentionOptions, now = Date.now()): string[] {
  const seqOf = (s: RecordSummary) => (typeof s.seq === "number" && Number.isFinite(s.seq) ? s.seq : -Infinity);
  const ordered = [...summaries].sort((a, b) => seqOf(a) - seqOf(b) || (a.id < b.id ? -1 : 1));
  const dropped: string[] = [];
  let count = ordered.length;
  let bytes = ordered.reduce((n, s) => n + summaryBytes(s), 0);
  for (const s of ordered) {
    const tooOld = retention.maxAgeMs !== undefined && now - seqOf(s) > retention.maxAgeMs;
    if (!tooOld && count <= retention.maxResponses && bytes <= retention.maxBytes) break;
    dropped.push(s.id);
    count--;
    bytes -= summaryBytes(s);
  }
  return dropped;
}

export function retentionOf(options: RetentionOptions = {}): Required<Pick<RetentionOptions, "maxResponses" | "maxBytes">> & RetentionOptions {
  const maxResponses = options.maxResponses ?? DEFAULT_MAX_RESPONSES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!Number.isInteger(maxResponses) || maxResponses < 1) throw new RangeError("responsesStore.maxResponses must be an integer ≥ 1.");
  if (!(maxBytes > 0)) throw new RangeError("responsesStore.maxBytes must be a number > 0.");
  if (options.maxAgeMs !== undefined && !(options.maxAgeMs > 0)) throw new RangeError("responsesStore.maxAgeMs must be a number > 0.");
  return { maxResponses, maxBytes, maxAgeMs: options.maxAgeMs };
}
