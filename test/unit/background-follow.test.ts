/**
 * Following a background run from a sequence number: the events after it,
 * once each, whether they were emitted before the follower came or after,
 * and after a resume whose run regenerates events the follower already saw.
 */
import { describe, expect, it } from "vitest";
import { BackgroundRun } from "../../src/host/background-run.js";
import type { ResponseObject, ResponseStreamEvent } from "../../src/protocol/responses/types.js";

const event = (n: number) => ({ type: "response.output_text.delta", sequence_number: n, item_id: "m", output_index: 0, content_index: 0, delta: `d${n}`, logprobs: [] }) as unknown as ResponseStreamEvent;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => event(from + i));
const initial = { id: "resp_f", status: "queued", output: [] } as unknown as ResponseObject;

function follower(run: BackgroundRun, startingAfter: number, signal?: AbortSignal) {
  const got: number[] = [];
  let ended = false;
  run.follow(startingAfter, { write: (events) => got.push(...events.map((e) => e.sequence_number)), end: () => (ended = true), fail: () => {} }, signal);
  return { got, ended: () => ended };
}

describe("BackgroundRun.follow(startingAfter)", () => {
  it("while the run is still queued: only the live events after startingAfter", () => {
    const run = new BackgroundRun("resp_f", initial, null);
    const late = follower(run, 10);
    const all = follower(run, -1);
    run.write(range(0, 19));
    expect(late.got).toEqual(range(11, 19).map((e) => e.sequence_number));
    expect(all.got).toEqual(range(0, 19).map((e) => e.sequence_number));
    run.end();
    expect(late.ended()).toBe(true);
  });

  it("past and live events together: each after startingAfter once, in order", () => {
    const run = new BackgroundRun("resp_f", initial, null);
    run.write(range(0, 4));
    const f = follower(run, 2);
    run.write(range(5, 8));
    expect(f.got).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it("after a resume: events the follower saw before the worker stopped (never logged, regenerated) do not come twice", () => {
    // The log held 0–5; the follower had seen up to 9 when the worker stopped.
    const run = new BackgroundRun("resp_f", initial, null, range(0, 5));
    const f = follower(run, 9);
    run.write(range(0, 12)); // the resumed run regenerates from the start: 0–5 checked, 6–12 new to the run
    expect(f.got).toEqual([10, 11, 12]);
    expect(run.diverged).toBeNull();
  });

  it("a reader ahead of a resumed run gets only the events after its starting_after, once each, in order", () => {
    // The stopped worker had logged events 0..3; the reader had received 0..6.
    const run = new BackgroundRun("resp_r", { id: "resp_r" } as ResponseObject, null, range(0, 3));
    const ahead = follower(run, 6);
    const behind = follower(run, 1);
    // The resumed run regenerates 0..3 (checked against the log, not sent again), then goes on.
    run.write(range(0, 5));
    run.write(range(6, 9));
    run.end();
    expect(run.diverged).toBeNull();
    expect(ahead.got).toEqual([7, 8, 9]);
    expect(behind.got).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ahead.ended() && behind.ended()).toBe(true);
  });

  it("a reader that leaves stops getting events; the others go on, each from its own starting_after", () => {
    const run = new BackgroundRun("resp_l", { id: "resp_l" } as ResponseObject, null);
    const controller = new AbortController();
    const leaving = follower(run, -1, controller.signal);
    const staying = follower(run, 2);
    run.write(range(0, 3));
    controller.abort();
    run.write(range(4, 5));
    expect(leaving.got).toEqual([0, 1, 2, 3]);
    expect(leaving.ended()).toBe(true);
    expect(staying.got).toEqual([3, 4, 5]);
  });
});
