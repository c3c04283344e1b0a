/**
 * Stored responses (`store: true`, the default), in memory for the life of the
 * client and never on disk: what `previous_response_id`, `item_reference`,
 * retrieve, delete and input_items read. Bounded: beyond `maxResponses` the
 * least recently used response (created, retrieved or continued) is evicted.
 *
 * A streamed response is held from its creation (`status: "in_progress"`, the
 * output so far), as on the hosted API: retrieve and input_items answer it
 * while it streams, and a delete then wins, since completing only replaces an
 * entry still held (`replace`).
 */
import { ApiError } from "../protocol/api-error.js";
import type { NormalizedMessage } from "../protocol/validate.js";
import type { ResponsesLookup } from "../protocol/responses/validate.js";
import type { InputItem, OutputItem, ResponseObject } from "../protocol/responses/types.js";

/** Default bound: a few long conversations' worth of turns (each entry holds its whole conversation by reference). */
export const DEFAULT_MAX_RESPONSES = 100;

export interface StoredResponse {
  response: ResponseObject;
  /** This request's own input items (what input_items lists). */
  inputItems: InputItem[];
  /** The conversation this response ends, without instructions: what `previous_response_id` continues. */
  history: NormalizedMessage[];
}

export class ResponseStore implements ResponsesLookup {
  private readonly entries = new Map<string, StoredResponse>();
  /** Item id → the response holding it. */
  private readonly itemOwners = new Map<string, string>();

  constructor(readonly maxResponses = DEFAULT_MAX_RESPONSES) {
    if (!Number.isInteger(maxResponses) || maxResponses < 1) throw new RangeError("responsesStore.maxResponses must be an integer ≥ 1.");
  }

  get size(): number {
    return this.entries.size;
  }

  put(entry: StoredResponse): void {
    const id = entry.response.id;
    this.delete(id);
    this.entries.set(id, entry);
    for (const item of [...entry.inputItems, ...entry.response.output]) this.itemOwners.set(item.id, id);
    while (this.entries.size > this.maxResponses) this.delete(this.entries.keys().next().value as string);
  }

  /** Puts `entry` in place of the one with its id, if that is still held (not deleted, not evicted); false otherwise. */
  replace(entry: StoredResponse): boolean {
    if (!this.entries.has(entry.response.id)) return false;
    this.put(entry);
    return true;
  }

  /** The entry, marked as recently used. */
  get(id: string): StoredResponse | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  delete(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    for (const item of [...entry.inputItems, ...entry.response.output]) {
      if (this.itemOwners.get(item.id) === id) this.itemOwners.delete(item.id);
    }
    return true;
  }

  history(responseId: string): NormalizedMessage[] | undefined {
    const entry = this.get(responseId);
    if (entry?.response.status === "in_progress") {
      throw new ApiError({ status: 400, param: "previous_response_id", code: "previous_response_in_progress", message: `Previous response with id '${responseId}' is still in progress: continue it once it has completed (after its \`response.completed\` event).` });
    }
    return entry?.history;
  }

  item(itemId: string): InputItem | OutputItem | undefined {
    const owner = this.itemOwners.get(itemId);
    const entry = owner ? this.entries.get(owner) : undefined;
    if (!entry) return undefined;
    return [...entry.inputItems, ...entry.response.output].find((item) => item.id === itemId);
  }
}
