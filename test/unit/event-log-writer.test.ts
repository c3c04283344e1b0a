/**
 * The background run's log writer: engine chunks go in the same write as the
 * events they gave (a resumed run replays exactly the chunks behind the
 * logged events), and a batch of chunks alone is keyed between the last
 * logged event and the next, each such batch after the one before.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EventLogWriter } from "../../src/host/background-run.js";
import type { QueuedResponseStore } from "../../src/store/queued-store.js";
import type { ResponseStreamEvent } from "../../src/protocol/responses/types.js";
import type { GeneratedChunk } from "../../src/host/generation-output.js";

const event = (n: number) => ({ type: "response.output_text.delta", sequence_number: n, delta: `d${n}` }) as unknown as ResponseStreamEvent;

describe("EventLogWriter", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("writes chunks with their events in one call; chunk-only batches get increasing keys below the next event", () => {
    const writes: Array<{ events: number[]; chunks: string[]; key: number | undefined }> = [];
    const store = { appendEvents: (_id: string, events: ResponseStreamEvent[], chunks: GeneratedChunk[] = [], key?: number) => (writes.push({ events: events.map((e) => e.sequence_number), chunks: chunks.map((c) => c.text), key }), Promise.resolve(true)) } as unknown as QueuedResponseStore;
    const writer = new EventLogWriter(store, "resp_x", 3);
    writer.addChunk({ text: "a" });
    writer.add([event(4)]);
    vi.advanceTimersByTime(100);
    writer.addChunk({ text: "<" });
    writer.flush();
    writer.addChunk({ text: "t" });
    writer.flush();
    writer.addChunk({ text: ">" });
    writer.add([event(5), event(6)]);
    writer.flush();
    expect(writes.map(({ events, chunks }) => ({ events, chunks }))).toEqual([
      { events: [4], chunks: ["a"] },
      { events: [], chunks: ["<"] },
      { events: [], chunks: ["t"] },
      { events: [5, 6], chunks: [">"] },
    ]);
    const [k1, k2] = [writes[1].key!, writes[2].key!];
    expect(k1).toBeGreaterThan(4);
    expect(k2).toBeGreaterThan(k1);
    expect(k2).toBeLessThan(5);
  });
});
