/**
 * The output a stream's events describe, folded back into items: what an
 * interrupted response keeps ("the text so far") when it cannot resume.
 */
import { structuredCloneLite } from "../protocol/responses/output-builder.js";
import type { OutputItem, ResponseStreamEvent } from "../protocol/responses/types.js";

export function outputFromEvents(events: readonly ResponseStreamEvent[]): OutputItem[] {
  const items: OutputItem[] = [];
  for (const event of events) {
    const e = event as ResponseStreamEvent & { output_index?: number; item?: OutputItem; delta?: string };
    const item = e.output_index !== undefined ? items[e.output_index] : undefined;
    switch (event.type) {
      case "response.output_item.added":
      case "response.output_item.done":
        items[e.output_index!] = structuredCloneLite(e.item!);
        break;
      case "response.output_text.delta":
        if (item?.type === "message") {
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
