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
 * token delay there); it is called before the rows are released.
 */
import type { RowBatchReport } from "./counters.js";
import type { RowRequest, StepPlan, StepScheduler } from "./step-scheduler.js";

export interface BatchRow {
  /**
   * Waits for the next step that gives this row a token (its prompt's last
   * chunk, or a decode). Resolves false, at once, when `signal` aborts.
   * `tokens`: what a decoding row feeds in that step, its last token plus a
   * speculative draft to verify (default 1).
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
  /** Set while the row waits in pass(). */
  parked: (() => void) | null;
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
    const passed = new Promise<boolean>((resolve) => {
      const onAbort = () => {
        slot.parked = null;
        resolve(false);
        this.notify();
      };
      slot.parked = () => {
        signal.removeEventListener("abort", onAbort);
        slot.parked = null;
        resolve(true);
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
    void this.loop().finally(() => (this.running = false));
  }

  private async loop(): Promise<void> {
    for (;;) {
      const plan = this.scheduler.plan();
      if (!plan) return;
      // The rows the step waits for and releases: those it gives a token, and prefill rows that feed
      // each chunk in its step (`prefillStepwise`, web-llm) and so take part in every step of their prompt.
      const sampled = plan.rows.filter((row) => row.samples || (plan.stepwise === true && row.phase === "prefill")).map((row) => row.id);
      // Every row the step samples is in pass() (or gone) before the forward runs.
      while (sampled.some((id) => this.waitingFor(id, "parked"))) await this.changes();
      await this.forward(plan);
      // Rows that end with this step's token leave by themselves (leave()); none is removed here but one
      // past the pass bound it joined with, which then gets no more passes.
      for (const { id, report } of this.scheduler.commit(plan).left) {
        const slot = this.slots.get(id);
        if (!slot) continue;
        slot.report = report;
        slot.evicted = true;
      }
      for (const id of sampled) {
        const slot = this.slots.get(id);
        if (!slot?.parked) continue;
        slot.released = true;
        slot.parked();
      }
      // Each released row takes its token (its consumer reads it) and comes back, or leaves.
      while (sampled.some((id) => this.waitingFor(id, "back"))) await this.changes();
    }
  }

  /** Whether the step must still wait for row `id`: to park before the forward, or to come back after it. */
  private waitingFor(id: string, state: "parked" | "back"): boolean {
    const slot = this.slots.get(id);
    if (!slot || slot.left) return false;
    return state === "parked" ? slot.parked === null : slot.released && slot.parked === null;
  }
}
