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
import type { StepTimes } from "./counters.js";

/** Weight of the newest measurement in the running mean. */
const FORGET = 0.2;
/** Forwards recorded after which a batch size's measurement is old enough to be tried again. */
const REPROBE_AFTER = 64;

/**
 * The first forward of each kind, and of each batch size, is not recorded:
 * the first `batch_decode` pays the compilation of its kernels (minutes on
 * SwiftShader), and the first of each new row count still costs 1.2–1.6×
 * the next ones (real engine, SwiftShader: 3 rows 105 s then 67 s, 4 rows
 * 89 s then 74 s), which would make that size look dearer than it is. A batch size never measured
 * (or measured long ago) is estimated as the prior says, in units of a
 * measured decode, so the scheduler tries it: a measurement then decides.
 */
export class MeasuredStepCost implements StepCostModel {
  private singleMs: number | null = null;
  private readonly batchMs = new Map<number, { ms: number; at: number }>();
  /** Whether a single decode, and a batch of each row count, ran once (its first run is not recorded). */
  private warmedSingle = false;
  private readonly warmedBatches = new Set<number>();
  private records = 0;

  constructor(private readonly prior: StepCostModel = WEIGHT_BOUND_COST) {}

  /** A decode forward ran: `rows` rows as one batch, or one single-sequence decode (`rows` 1), in `ms`. */
  record(mode: "batch" | "single", rows: number, ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    if (mode === "single" ? !this.warmedSingle : !this.warmedBatches.has(rows)) {
      if (mode === "single") this.warmedSingle = true;
      else this.warmedBatches.add(rows);
      return;
    }
    this.records++;
    if (mode === "single") this.singleMs = mean(this.singleMs, ms);
    else this.batchMs.set(rows, { ms: mean(this.batchMs.get(rows)?.ms ?? null, ms), at: this.records });
  }

  single(tokens: number): number {
    return this.unit() * (this.prior.single(tokens) / this.prior.single(1));
  }

  batch(rows: number, tokens: number): number {
    const measured = this.batchMs.get(rows);
    if (measured !== undefined && this.records - measured.at <= REPROBE_AFTER) return measured.ms;
    return this.unit() * (this.prior.batch(rows, tokens) / this.prior.single(1));
  }

  /** What the model knows (for stats and tests). */
  snapshot(): { single_ms: number | null; batch_ms: Record<number, number> } {
    return { single_ms: this.singleMs, batch_ms: Object.fromEntries([...this.batchMs].map(([rows, m]) => [rows, m.ms])) };
  }

  /** The measurements as `client.stats()` reports them (whole ms). */
  stepTimes(): StepTimes {
    return {
      decode: this.singleMs === null ? null : Math.round(this.singleMs),
      batch_decode: Object.fromEntries([...this.batchMs].sort((a, b) => a[0] - b[0]).map(([rows, m]) => [String(rows), Math.round(m.ms)])),
    };
  }

  /**
   * One single decode in ms: measured, or before any was, the smallest
   * measured batch over the prior's ratio (so both sides of a choice are in
   * ms); 1 (the prior's unit) while nothing is measured.
   */
  private unit(): number {
    if (this.singleMs !== null) return this.singleMs;
    const smallest = [...this.batchMs.entries()].sort((a, b) => a[0] - b[0])[0];
    if (!smallest) return 1;
    const [rows, { ms }] = smallest;
    return ms / (this.prior.batch(rows, rows) / this.prior.single(1));
  }
}

function mean(previous: number | null, next: number): number {
  return previous === null ? next : previous + FORGET * (next - previous);
}
