/**
 * A step cost model learned on the running device: the time of each decode
 * forward actually run, by kind (one single-sequence `decode`, or one
 * `batch_decode` of n rows), as a running mean that forgets slowly. Until a
 * kind was measured its cost is the prior's shape (GPU-like by default)
 * scaled by what was measured, so the scheduler tries a batch once and then
 * keeps to what the device shows: on SwiftShader a 2-row `batch_decode`
 * (28.8 s) loses to two decodes (27 s) and a 4-row one (43.7 s) wins over
 * four (54 s); on a GPU every batch wins.
 */
import { WEIGHT_BOUND_COST, type StepCostModel } from "./cost-model.js";

/** Weight of the newest measurement in the running mean. */
const FORGET = 0.2;

export class MeasuredStepCost implements StepCostModel {
  private singleMs: number | null = null;
  private readonly batchMs = new Map<number, number>();

  constructor(private readonly prior: StepCostModel = WEIGHT_BOUND_COST) {}

  /** A decode forward ran: `rows` rows as one batch, or one single-sequence decode (`rows` 1), in `ms`. */
  record(mode: "batch" | "single", rows: number, ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    if (mode === "single") this.singleMs = mean(this.singleMs, ms);
    else this.batchMs.set(rows, mean(this.batchMs.get(rows) ?? null, ms));
  }

  single(tokens: number): number {
    return this.unit() * (this.prior.single(tokens) / this.prior.single(1));
  }

  batch(rows: number, tokens: number): number {
    const measured = this.batchMs.get(rows);
    if (measured !== undefined) return measured;
    // The nearest measured row count, scaled by the prior's shape; else the prior in units of one decode.
    let nearest: number | null = null;
    for (const r of this.batchMs.keys()) if (nearest === null || Math.abs(r - rows) < Math.abs(nearest - rows)) nearest = r;
    if (nearest !== null) return (this.batchMs.get(nearest) as number) * (this.prior.batch(rows, tokens) / this.prior.batch(nearest, nearest));
    return this.unit() * (this.prior.batch(rows, tokens) / this.prior.single(1));
  }

  /** What the model knows (for stats and tests). */
  snapshot(): { single_ms: number | null; batch_ms: Record<number, number> } {
    return { single_ms: this.singleMs, batch_ms: Object.fromEntries(this.batchMs) };
  }

  /** One single decode, in ms when measured (else 1: the prior's unit). */
  private unit(): number {
    return this.singleMs ?? (this.batchMs.size > 0 ? this.batchFallbackUnit() : 1);
  }

  /** Before any single decode was timed, one decode is taken as the smallest measured batch over the prior's ratio. */
  private batchFallbackUnit(): number {
    const [rows, ms] = [...this.batchMs.entries()].sort((a, b) => a[0] - b[0])[0];
    return ms / (this.prior.batch(rows, rows) / this.prior.single(1));
  }
}

function mean(previous: number | null, next: number): number {
  return previous === null ? next : previous + FORGET * (next - previous);
}
