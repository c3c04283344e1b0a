/**
 * Turns between the rows of continuous batching and requests that need the
 * pipeline alone (webllm-rows.ts): a request that runs alone waits for the
 * rows in flight to end, and while it runs or waits no row opens, so neither
 * side starves. `Serial` runs async work one at a time, in call order.
 */

export class Serial {
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `work` once the previous work is done (whether it failed or not). */
  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.last.then(work, work);
    this.last = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `work` in a turn that stays taken after it resolves, until the
   * caller calls `release` (work that fails releases it itself).
   */
  async runHeld<T>(work: () => Promise<T>): Promise<{ value: T; release: () => void }> {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let started!: (outcome: { value: T } | { error: unknown }) => void;
    const outcome = new Promise<{ value: T } | { error: unknown }>((resolve) => (started = resolve));
    void this.run(async () => {
      try {
        started({ value: await work() });
      } catch (error) {
        started({ error });
        return;
      }
      await released;
    });
    const result = await outcome;
    if ("error" in result) throw result.error;
    return { value: result.value, release };
  }
}

export class AloneTurns {
  private readonly queue: Array<() => void> = [];
  private running = false;
  private readonly waiting: Array<() => void> = [];

  /** `idle`: no row is in flight. */
  constructor(private readonly idle: () => boolean) {}

  /** Whether a request runs alone or waits to: rows must not open. */
  get blocking(): boolean {
    return this.running || this.queue.length > 0;
  }

  async alone<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw signal.reason ?? new DOMException("aborted", "AbortError");
    // An abort while it waits takes it out of the queue at once: it neither waits for the rows in flight to
    // end nor keeps new rows from opening meanwhile.
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.queue.indexOf(granted);
        if (at < 0) return;
        this.queue.splice(at, 1);
        if (!this.blocking) this.wake();
        reject(signal?.reason ?? new DOMException("aborted", "AbortError"));
      };
      const granted = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(granted);
      this.startIfIdle();
    });
    try {
      if (signal?.aborted) throw signal.reason ?? new DOMException("aborted", "AbortError");
      return await work();
    } finally {
      this.running = false;
      this.startIfIdle();
      if (!this.running) this.wake();
    }
  }

  /** Resolves at the next change a waiting row cares about (a row left, a request that ran alone ended), or on abort. */
  change(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
      if (signal.aborted) resolve();
    });
  }

  /** A row left: the first request waiting to run alone starts once none is in flight; else waiting rows look again. */
  rowLeft(): void {
    this.startIfIdle();
    if (!this.blocking) this.wake();
  }

  private startIfIdle(): void {
    if (this.running || !this.idle() || this.queue.length === 0) return;
    this.running = true;
    this.queue.shift()!();
  }

  private wake(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }
}
