/**
 * Validation resolves `previous_response_id` and `item_reference` items
 * synchronously; the store answers asynchronously (IndexedDB). So the face
 * reads what a body names first, and validation gets a lookup over those reads.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ResponsesLookup } from "../protocol/responses/input-items.js";
import type { InputItem, OutputItem } from "../protocol/responses/types.js";
import type { NormalizedMessage } from "../protocol/normalized.js";
import type { StoredResponse } from "./response-store.js";
import type { QueuedResponseStore } from "./queued-store.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The stored state `body` names, read ahead; unknown ids read as missing (validation answers them). */
export async function prefetchLookup(body: unknown, store: QueuedResponseStore): Promise<ResponsesLookup> {
  let previous: StoredResponse | undefined;
  const items = new Map<string, InputItem | OutputItem>();
  if (isObject(body)) {
    if (typeof body.previous_response_id === "string") previous = await store.get(body.previous_response_id);
    if (Array.isArray(body.input)) {
      for (const item of body.input) {
        // An item reference, or the approval request an `mcp_approval_response` answers (it may be in any stored response).
        const id = !isObject(item) ? undefined : item.type === "item_reference" ? item.id : item.type === "mcp_approval_response" ? item.approval_request_id : undefined;
        if (typeof id !== "string" || items.has(id)) continue;
        const found = await store.item(id);
        if (found) items.set(id, found);
      }
    }
  }
  return {
    history(responseId: string): NormalizedMessage[] | undefined {
      if (!previous || previous.response.id !== responseId) return undefined;
      const status = previous.response.status;
      if (status === "in_progress" || status === "queued") {
        throw new ApiError({ status: 400, param: "previous_response_id", code: "previous_response_in_progress", message: `Previous response with id '${responseId}' is still in progress: continue it once it has completed (after its \`response.completed\` event).` });
      }
      return previous.history;
    },
    item: (itemId: string) => items.get(itemId),
    previous: (responseId: string) => (previous && previous.response.id === responseId ? { output: previous.response.output, mcpListings: previous.mcpListings ?? [] } : undefined),
  };
}
