/**
 * Rebuilding output from a stored event log (what recovery keeps of an
 * interrupted response): a damaged or hostile log is refused as corrupt,
 * bounded by what it holds, never a sparse array as large as an index it names.
 */
import { describe, expect, it } from "vitest";
import { checkEventLog, outputFromEvents } from "../../src/host/event-replay.js";
import type { ResponseStreamEvent } from "../../src/protocol/responses/types.js";

const added = (n: number, index: number) => ({ type: "response.output_item.added", sequence_number: n, output_index: index, item: { type: "message", id: "m", status: "in_progress", role: "assistant", content: [] } }) as unknown as ResponseStreamEvent;
const delta = (n: number, index: number, text: string) => ({ type: "response.output_text.delta", sequence_number: n, item_id: "m", output_index: index, content_index: 0, delta: text, logprobs: [] }) as unknown as ResponseStreamEvent;

describe("outputFromEvents", () => {
  it("rebuilds the text of a log a run wrote", () => {
    expect(outputFromEvents([added(0, 0), delta(1, 0, "a"), delta(2, 0, "b")])).toMatchObject([{ type: "message", status: "incomplete", content: [{ text: "ab" }] }]);
  });

  it("refuses an item at an output_index the log has not reached as stored_response_corrupt, at once", () => {
    for (const index of [1e8, 4294967294, -1, 0.5, "0" as unknown as number]) {
      const started = performance.now();
      expect(() => outputFromEvents([added(0, index), delta(1, index, "x")], "resp_bad"), String(index)).toThrow(expect.objectContaining({ status: 500, code: "stored_response_corrupt", message: expect.stringContaining("resp_bad") }));
      // Was 2.1 s for 1e8 and 103 s for 4294967294 (a sparse array that long, then filtered).
      expect(performance.now() - started, String(index)).toBeLessThan(500);
    }
    // One past the last opened item opens the next one; two past is a hole.
    expect(outputFromEvents([added(0, 0), added(1, 1)])).toHaveLength(2);
    expect(() => outputFromEvents([added(0, 0), added(1, 2)])).toThrow(expect.objectContaining({ code: "stored_response_corrupt" }));
  });
});

describe("checkEventLog", () => {
  it("takes a log numbered 0, 1, 2, …; refuses gaps, repeats and foreign numbers", () => {
    expect(() => checkEventLog("resp_ok", [added(0, 0), delta(1, 0, "a")])).not.toThrow();
    for (const log of [[added(0, 0), delta(4294967294, 0, "a")], [added(1, 0)], [added(0, 0), delta(0, 0, "a")], [null as unknown as ResponseStreamEvent]]) {
      expect(() => checkEventLog("resp_bad", log)).toThrow(expect.objectContaining({ status: 500, code: "stored_response_corrupt" }));
    }
  });
});
