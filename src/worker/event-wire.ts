/**
 * The wire form of a batch of Responses stream events on a request's port.
 * As for chat chunks (chunk-wire.ts), structured clone pays per value, and a
 * text delta event is six values of which only `delta` changes from token to
 * token (`sequence_number` just counts up; `logprobs`, on text deltas, is
 * empty unless asked for). So a delta event that repeats an
 * earlier delta event of the batch (same type, item and indexes) travels as
 * its bare delta string — or `[templateIndex, delta]` when it repeats an
 * earlier template than the last one (reasoning and its summary interleave) —
 * and every other event travels whole. `sequence_number`s are consecutive
 * within a stream, so each is the previous one plus one.
 * `unpackEvents(packEvents(events))` deep-equals `events`, key order included.
 */
import type { ResponseStreamEvent } from "../protocol/responses/types.js";

type DeltaEvent = Extract<ResponseStreamEvent, { delta: string }>;

export interface PackedEvents {
  /** sequence_number of the batch's first event. */
  first: number;
  items: Array<string | [number, string] | ResponseStreamEvent>;
}

const DELTA_TYPES = new Set(["response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta"]);
const DELTA_KEYS = new Set(["type", "sequence_number", "item_id", "output_index", "content_index", "summary_index", "delta", "logprobs"]);

/** A delta event whose every field but `delta` and `sequence_number` a template can carry (`logprobs` only when empty). */
function isPlainDelta(event: ResponseStreamEvent): event is DeltaEvent {
  if (!DELTA_TYPES.has(event.type)) return false;
  for (const key in event) if (!DELTA_KEYS.has(key)) return false;
  const logprobs = (event as { logprobs?: unknown[] }).logprobs;
  return logprobs === undefined || logprobs.length === 0;
}

/** The event `template` stands for, with its own `delta` and `sequence_number` (and its own empty `logprobs`, never a shared array). */
function fromTemplate(template: DeltaEvent, sequence: number, delta: string): ResponseStreamEvent {
  const event = { ...template, sequence_number: sequence, delta };
  if ("logprobs" in template) (event as { logprobs: unknown[] }).logprobs = [];
  return event;
}

const sameTemplate = (a: DeltaEvent, b: DeltaEvent) =>
  a.type === b.type &&
  a.item_id === b.item_id &&
  a.output_index === b.output_index &&
  (a as { content_index?: number }).content_index === (b as { content_index?: number }).content_index &&
  (a as { summary_index?: number }).summary_index === (b as { summary_index?: number }).summary_index &&
  Object.keys(a).length === Object.keys(b).length;

export function packEvents(events: ResponseStreamEvent[]): PackedEvents {
  const templates: DeltaEvent[] = [];
  let current = -1;
  const items: PackedEvents["items"] = new Array(events.length);
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    if (!isPlainDelta(event)) {
      items[i] = event;
      continue;
    }
    if (current >= 0 && sameTemplate(templates[current], event)) {
      items[i] = event.delta;
      continue;
    }
    const at = templates.findIndex((t) => sameTemplate(t, event));
    if (at >= 0) {
      current = at;
      items[i] = [at, event.delta];
      continue;
    }
    templates.push(event);
    current = templates.length - 1;
    items[i] = event;
  }
  return { first: events.length > 0 ? events[0].sequence_number : 0, items };
}

export function unpackEvents({ first, items }: PackedEvents): ResponseStreamEvent[] {
  const templates: DeltaEvent[] = [];
  let current = -1;
  const events: ResponseStreamEvent[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === "string") {
      events[i] = fromTemplate(templates[current], first + i, item);
    } else if (Array.isArray(item)) {
      current = item[0];
      events[i] = fromTemplate(templates[current], first + i, item[1]);
    } else {
      events[i] = item;
      if (isPlainDelta(item)) {
        templates.push(item);
        current = templates.length - 1;
      }
    }
  }
  return events;
}
