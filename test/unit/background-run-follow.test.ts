/**
 * A stream reattached to a background run with `starting_after` gets each
 * later event once: also when it is ahead of the run. That is the normal case
 * after a reload: the reader saw events that were not logged yet when its
 * worker stopped (the log is written in batches, every 100 ms), so the resumed
 * run is given fewer events than the reader has, and regenerates the rest
 * after the reader attached.
 */
import { describe, expect, it } from "vitest";
import { BackgroundRun } from "../../src/host/background-run.js";
import type { ResponseObject, ResponseStreamEvent } from "../../src/protocol/responses/types.js";
import type { ChunkSink } from "../../src/host/engine-host.js";

const event = (n: number) => ({ type: "response.output_text.delta", sequence_number: n, delta: ` w${n}` }) as unknown as ResponseStreamEvent;
const events = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => event(from + i));

function reader() {
  const got: number[] = [];
  let ended = false;
  const sink: ChunkSink<ResponseStreamEvent> = { write: (batch) => got.push(...batch.map((e) => e.sequence_number)), end: () => (ended = true), fail: () => (ended = true) };
  return { sink, got, ended: () => ended };
}

describe("BackgroundRun.follow", () => {
  it("a reader ahead of a resumed run gets only the events after its starting_after, once each, in order", () => {
    // The stopped worker had logged events 0..3; the reader had received 0..6.
    const run = new BackgroundRun("resp_r", { id: "resp_r" } as ResponseObject, null, events(0, 3));
    const ahead = reader();
    run.follow(6, ahead.sink);
    const behind = reader();
    run.follow(1, behind.sink);
    // The resumed run regenerates 0..3 (checked against the log, not sent again), then goes on.
    run.write(events(0, 5));
    run.write(events(6, 9));
    run.end();
    expect(run.diverged).toBeNull();
    expect(ahead.got).toEqual([7, 8, 9]);
    expect(behind.got).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ahead.ended() && behind.ended()).toBe(true);
  });

  it("a reader that leaves stops getting events; the others go on, each from its own starting_after", () => {
    const run = new BackgroundRun("resp_l", { id: "resp_l" } as ResponseObject, null);
    const leaving = reader();
    const staying = reader();
    const controller = new AbortController();
    run.follow(-1, leaving.sink, controller.signal);
    run.follow(2, staying.sink);
    run.write(events(0, 3));
    controller.abort();
    run.write(events(4, 5));
    expect(leaving.got).toEqual([0, 1, 2, 3]);
    expect(leaving.ended()).toBe(true);
    expect(staying.got).toEqual([3, 4, 5]);
  });
});
