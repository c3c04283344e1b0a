/**
 * The output a stream's events describe, folded back into items: what an
 * interrupted response keeps ("the text so far") when it cannot resume.
 */
import { ApiError } from "../protocol/api-error.js";
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { OutputItem, ResponseStreamEvent } from "../protocol/responses/types.js";

/** The error for a stored event log that is not one a run wrote (damaged, or written by something else). */
export function corruptLog(id: string, what: string): ApiError {
  return new ApiError({
    status: 500,
    code: "stored_response_corrupt",
    message: `The stored response '${id}' cannot be recovered: its event log is damaged (${what}). Delete it (client.responses.delete); the other stored responses are intact.`,
  });
}

/**
 * Checks a log read back from the store before anything replays it: its
 * events are numbered 0, 1, 2, … in order (as every run writes them), so
 * `sequence_number`s, the next one and an index by them are bounded by the
 * log's length. Output indices are checked by outputFromEvents.
 */
export function checkEventLog(id: string, events: readonly ResponseStreamEvent[]): void {
  events.forEach((event, at) => {
    if (typeof event !== "object" || event === null || event.sequence_number !== at) throw corruptLog(id, `event ${at} has sequence_number ${JSON.stringify((event as { sequence_number?: unknown } | null)?.sequence_number)}`);
  });
  outputFromEvents(events, id);
}

/**
 * `id`: the response whose log it is, named by the error for a log that is
 * not one a run wrote: an item added or done at an `output_index` other than
 * an item's already opened or the next one. Indices are bounded by what the
 * log holds (at most one item per event), never a sparse array as large as
 * an index a damaged log names.
 */
export function outputFromEvents(events: readonly ResponseStreamEvent[], id = "?"): OutputItem[] {
  const items: OutputItem[] = [];
  for (const event of events) {
    const e = event as ResponseStreamEvent & { output_index?: number; item?: OutputItem; delta?: string };
    const item = e.output_index !== undefined ? items[e.output_index] : undefined;
    switch (event.type) {
      case "response.output_item.added":
      case "response.output_item.done":
        if (!Number.isInteger(e.output_index) || e.output_index! < 0 || e.output_index! > items.length) throw corruptLog(id, `${event.type} at output_index ${JSON.stringify(e.output_index)} with ${items.length} items opened`);
        if (typeof e.item !== "object" || e.item === null) throw corruptLog(id, `${event.type} without an item`);
        items[e.output_index!] = structuredCloneLite(e.item);
        break;
      case "response.output_text.delta":
        if (item?.type === "message" && Array.isArray(item.content)) {
          const part = item.content[0] ?? (item.content[0] = { type: "output_text", text: "", annotations: [], logprobs: [] } as never);
          part.text += e.delta ?? "";
        }
        break;
      case "response.reasoning_text.delta":
        if (item?.type === "reasoning") {
          const content = (item.content ??= []);
          const part = content[0] ?? (content[0] = { type: "reasoning_text", text: "" });
          part.text += e.delta ?? "";
        }
        break;
      case "response.function_call_arguments.delta":
        if (item?.type === "function_call") item.arguments += e.delta ?? "";
        break;
    }
  }
  // An item the stream left open ends with it.
  return items.filter(Boolean).map((item) => ("status" in item && item.status === "in_progress" ? { ...item, status: "incomplete" } : item)) as OutputItem[];
}

/** Item ids and call ids in the order a stream opened them: a resumed run gives its items the same ones. */
export function idsFromEvents(events: readonly ResponseStreamEvent[]): { itemIds: string[]; callIds: string[] } {
  const itemIds: string[] = [];
  const callIds: string[] = [];
  for (const event of events) {
    if (event.type !== "response.output_item.added") continue;
    itemIds.push(event.item.id);
    if (event.item.type === "function_call") callIds.push(event.item.call_id);
  }
  return { itemIds, callIds };
}

/** The sequence number of the event that follows `events` (0 for none). */
export function nextSequenceAfter(events: readonly ResponseStreamEvent[]): number {
  return events.length > 0 ? events[events.length - 1].sequence_number + 1 : 0;
}
