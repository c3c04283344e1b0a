/**
 * How many files download at once, adapted to what the line gives: start
 * with two streams, and open one more while each addition still raised the
 * measured throughput by a tenth or more, up to `max`. A fast local mirror
 * is saturated by one or two streams (more only contend for the thread); a
 * far CDN with per-connection limits gets more.
 */

/** Throughput is compared over windows of at least this long. */
const WINDOW_MS = 500;
/** An added stream must raise throughput by this factor to earn another. */
const GAIN = 1.1;

import { abortError } from "../protocol/api-error.js";

/**
 * Resolves when the entry it adds to `waiters` is called (the owner's
 * wake-up), or when `signal` aborts (the caller then checks it). The abort
 * listener goes once woken: a download's admission waits (one per file and
 * wake-up) do not pile listeners on its signal.
 */
export function waitForWake(waiters: Array<() => void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    waiters.push(done);
    signal.addEventListener("abort", done, { once: true });
  });
}

export class StreamGovernor {
  readonly max: number;
  private target: number;
  private active = 0;
  /** Most streams active at once. */
  peak = 0;
  private readonly waiters: Array<() => void> = [];
  private windowStart = performance.now();
  private windowBytes: number;
  private rateBefore = 0;
  private settled = false;
  private readonly timer: ReturnType<typeof setInterval> | null;

  constructor(
    max: number,
    private readonly bytesSoFar: () => number,
  ) {
    this.max = max;
    this.target = Math.min(2, max);
    this.windowBytes = bytesSoFar();
    this.timer = max > this.target ? setInterval(() => this.measure(), WINDOW_MS) : null;
  }

  /** Waits until stream `slot` may run (slots at or past the target wait); false once stopped. */
  async enter(slot: number, signal: AbortSignal): Promise<boolean> {
    while (slot >= this.target && !this.stopped) {
      if (signal.aborted) throw abortError();
      await waitForWake(this.waiters, signal);
    }
    if (signal.aborted) throw abortError();
    if (this.stopped) return false;
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    return true;
  }

  leave(): void {
    this.active--;
  }

  private stopped = false;

  /** No work is left to start: ends the measurements and lets waiting slots go. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.wake();
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private measure(): void {
    if (this.settled) return;
    const now = performance.now();
    const bytes = this.bytesSoFar();
    const rate = (bytes - this.windowBytes) / (now - this.windowStart);
    this.windowStart = now;
    this.windowBytes = bytes;
    // The first window (connections opening) says nothing about the line.
    if (rate <= 0) return;
    if (this.rateBefore > 0 && rate < this.rateBefore * GAIN) {
      // The last stream did not pay: back to the count before it (its file finishes first).
      this.target = Math.max(2, this.target - 1);
      this.settled = true;
      if (this.timer) clearInterval(this.timer);
      return;
    }
    this.rateBefore = rate;
    if (this.target < this.max) {
      this.target++;
      this.wake();
    } else {
      this.settled = true;
      if (this.timer) clearInterval(this.timer);
    }
  }
}
