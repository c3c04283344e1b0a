/** Admission: exclusive work holds the engine alone; generations on a batching engine share it up to its row cap. */
import { describe, expect, it } from "vitest";
import { RequestQueue, type ShareSpec } from "../../src/host/queue.js";

const engine = {};
let loaded = "m";
const share = (model = "m", maxRows = 2): ShareSpec => ({ group: { engine, model }, maxRows, ready: () => loaded === model });

/** Which of `turns` have been granted so far. */
async function granted(turns: Array<Promise<unknown>>): Promise<boolean[]> {
  const state = turns.map(() => false);
  turns.forEach((t, i) => void t.then(() => (state[i] = true), () => undefined));
  await new Promise((r) => setTimeout(r, 0));
  return state;
}

describe("request queue: shared generations", () => {
  it("lets up to the row cap of one group in at once; the next waits for a free row", async () => {
    loaded = "m";
    const queue = new RequestQueue(16);
    const turns = [queue.acquireShared(share()), queue.acquireShared(share()), queue.acquireShared(share())];
    expect(await granted(turns)).toEqual([true, true, false]);
    (await turns[0]).release();
    expect(await granted(turns)).toEqual([true, true, true]);
  });

  it("exclusive work waits for every shared generation, and generations arriving after it wait behind it", async () => {
    loaded = "m";
    const queue = new RequestQueue(16);
    const first = await queue.acquireShared(share("m", 4));
    const exclusive = queue.acquire();
    const later = queue.acquireShared(share("m", 4));
    expect(await granted([exclusive, later])).toEqual([false, false]);
    first.release();
    expect(await granted([exclusive, later])).toEqual([true, false]);
    (await exclusive)();
    expect(await granted([later])).toEqual([true]);
  });

  it("a generation whose model is not loaded holds the engine alone until it is, then its group joins", async () => {
    loaded = "other";
    const queue = new RequestQueue(16);
    const loader = await queue.acquireShared(share("m", 4));
    const second = queue.acquireShared(share("m", 4));
    expect(await granted([second])).toEqual([false]);
    loaded = "m";
    loader.loaded();
    expect(await granted([second])).toEqual([true]);
  });

  it("generations of another model wait until the engine is free", async () => {
    loaded = "m";
    const queue = new RequestQueue(16);
    const m = await queue.acquireShared(share("m", 4));
    const n = queue.acquireShared(share("n", 4));
    expect(await granted([n])).toEqual([false]);
    m.release();
    expect(await granted([n])).toEqual([true]);
  });

  it("beyond maxQueue waiting requests get 429; an aborted waiter lets those behind it in", async () => {
    loaded = "m";
    const queue = new RequestQueue(1);
    const held = queue.acquire();
    const controller = new AbortController();
    const waiting = queue.acquire(controller.signal);
    await expect(queue.acquireShared(share())).rejects.toMatchObject({ status: 429, code: "queue_full" });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    (await held)();
    expect(queue.running).toBe(false);
    expect(queue.waiting).toBe(0);
  });
});
