/**
 * Runs a StepScheduler's steps for an engine whose generations are separate
 * async loops (one `generate()` each), engine-neutral: each generation joins
 * as a row and, before every forward pass it needs, waits in `pass()`; the
 * runner runs the step's forward once every row it samples is waiting,
 * commits it, releases those rows together, and plans the next once each has
 * taken its token (it is back in `pass()`, or it left). So the rows in flight advance in lockstep, one pass per
 * step, and a row that joins or leaves does so at a step boundary.
 *
 * `forward(plan)` runs the step's forward (the scripted engine only waits its
 * token delay there); it is called before the rows are released. A forward
 * that throws (a device error) fails that step's rows: their `pass()` rejects
 * with its error, the step is not committed, and the loop goes on with the
 * rows still in flight (a row that leaves is not waited for).
 */
import type { RowBatchReport } from "./counters.js";
import type { RowRequest, StepPlan, StepScheduler } from "./step-scheduler.js";

export interface BatchRow {
  /**
   * Waits for the next step that gives this row a token (its prompt's last
   * chunk, or a decode). Resolves false, at once, when `signal` aborts.
   * `tokens`: what a decoding row feeds in that step, its last token plus a
   * speculative draft to verify (default 1). Rejects with the forward's
   * error when the step's forward fails.
   */
  pass(signal: AbortSignal, tokens?: number): Promise<boolean>;
  /** The row sampled a token its last verify pass accepted, with no step of its own: a generated token. */
  served(): void;
  /**
   * The row is done (its reply ended, an abort, an error): it leaves the
   * steps at once. Returns how many rows shared its passes. Idempotent.
   */
  leave(): RowBatchReport;
}

interface Slot {
  /** Set while the row waits in pass(): releases it (no error) or fails it with the step's error. */
  parked: ((error?: unknown) => void) | null;
  /** Released by the current step and not yet back. */
  released: boolean;
  left: boolean;
  /** The scheduler removed it (its pass bound): it gets no more passes. */
  evicted: boolean;
  report: RowBatchReport;
}

export class StepRunner {
  private readonly slots = new Map<string, Slot>();
  private running = false;
  /** Wakes the loop when a row parks or leaves. */
  private changed: (() => void) | null = null;

  constructor(
    private readonly scheduler: StepScheduler,
    private readonly forward: (plan: StepPlan) => Promise<void> = () => Promise.resolve(),
  ) {}

  join(request: RowRequest): BatchRow {
    this.scheduler.submit(request);
    const slot: Slot = { parked: null, released: false, left: false, evicted: false, report: { max_rows: 0, mean_rows: 0, passes: 0 } };
    this.slots.set(request.id, slot);
    const id = request.id;
    return {
      pass: (signal, tokens = 1) => {
        this.scheduler.feed(id, tokens);
        return this.pass(id, slot, signal);
      },
      served: () => this.scheduler.served(id),
      leave: () => this.leave(id, slot),
    };
  }

  private pass(id: string, slot: Slot, signal: AbortSignal): Promise<boolean> {
    if (slot.left) throw new Error(`Row ${id} left: it takes no more passes.`);
    slot.released = false;
    if (signal.aborted || slot.evicted) {
      this.notify();
      return Promise.resolve(false);
    }
    const passed = new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        slot.parked = null;
        resolve(false);
        this.notify();
      };
      slot.parked = (error?: unknown) => {
        signal.removeEventListener("abort", onAbort);
        slot.parked = null;
        if (error === undefined) resolve(true);
        else reject(error);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
    this.notify();
    this.start();
    return passed;
  }

  private leave(id: string, slot: Slot): RowBatchReport {
    if (slot.left) return slot.report;
    slot.left = true;
    slot.parked = null;
    // Steps are committed before their rows are released, so the report counts the row's last pass.
    slot.report = this.scheduler.cancel(id) ?? slot.report;
    this.slots.delete(id);
    this.notify();
    return slot.report;
  }

  private notify(): void {
    const wake = this.changed;
    this.changed = null;
    wake?.();
  }

  private changes(): Promise<void> {
    return new Promise((resolve) => (this.changed = resolve));
  }

  private start(): void {
    if (this.running) return;
    this.running = true;
    // The loop does not reject (a failed forward fails its rows); should it, the rows waiting fail rather than hang.
    this.loop().catch((error: unknown) => {
      this.running = false;
      for (const slot of this.slots.values()) slot.parked?.(error);
    });
  }

  private async loop(): Promise<void> {
    for (;;) {
      const plan = this.scheduler.plan();
      // Not running from here on, in the same turn as the empty plan: a row that parks next starts the loop again.
      if (!plan) return void (this.running = false);
      // The rows the step waits for and releases: those it gives a token, and prefill rows that feed
      // each chunk in its step (`prefillStepwise`, web-llm) and so take part in every step of their prompt.
      const sampled = plan.rows.filter((row) => row.samples || (plan.stepwise === true && row.phase === "prefill")).map((row) => row.id);
      // Every row the step samples is in pass() (or gone) before the forward runs.
      while (sampled.some((id) => this.waitingFor(id, "parked"))) await this.changes();
      try {
        await this.forward(plan);
      } catch (error) {
        // The step ran for none of its rows: each fails with the error (the engine reports it), and leaves.
        this.scheduler.abandon(plan);
        this.release(sampled, error ?? new Error("The step's forward failed."));
        while (sampled.some((id) => this.waitingFor(id, "back"))) await this.changes();
        continue;
      }
      // Rows that end with this step's token leave by themselves (leave()); none is removed here but one
      // past the pass bound it joined with, which then gets no more passes.
      for (const { id, report } of this.scheduler.commit(plan).left) {
        const slot = this.slots.get(id);
        if (!slot) continue;
        slot.report = report;
        slot.evicted = true;
      }
      this.release(sampled);
      // Each released row takes its token (its consumer reads it) and comes back, or leaves.
      while (sampled.some((id) => this.waitingFor(id, "back"))) await this.changes();
    }
  }

  /** Releases the step's rows waiting in pass(): with its token, or failed with `error`. */
  private release(ids: readonly string[], error?: unknown): void {
    for (const id of ids) {
      const slot = this.slots.get(id);
      if (!slot?.parked) continue;
      slot.released = true;
      slot.parked(error);
    }
  }

  /** Whether the step must still wait for row `id`: to park before the forward, or to come back after it. */
  private waitingFor(id: string, state: "parked" | "back"): boolean {
    const slot = this.slots.get(id);
    if (!slot || slot.left) return false;
    return state === "parked" ? slot.parked === null : slot.released && slot.parked === null;
  }
}
