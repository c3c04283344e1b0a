/**
 * A step cost model learned on the running device: the time of each forward
 * actually run, by kind and size, as a running mean that forgets slowly.
 * Kinds: a single-sequence forward (`decode` for one token, `prefill` for a
 * prompt chunk), and a batched one over n rows (`batch_decode` when every row
 * feeds one token, else `batch_prefill` with mixed rows: decoding rows' tokens
 * and prompt chunks). Sizes: the row count, and the tokens fed rounded up to a
 * power of two (a chunk of 200 and one of 256 cost about the same). Until a
 * kind and size was measured its cost is the prior's shape (GPU-like by
 * default) scaled by the measured decode, so the scheduler tries it once and
 * then keeps to what the device shows: on SwiftShader a 2-row `batch_decode`
 * (28.8 s) loses to two decodes (27 s) and a 4-row one (43.7 s) wins over
 * four (54 s); on a GPU every batch wins.
 */
import { WEIGHT_BOUND_COST, type StepCostModel } from "./cost-model.js";
import type { StepTimes } from "./counters.js";

/** Weight of the newest measurement in the running mean. */
const FORGET = 0.2;
/** Tokens a verify feeds at most (a draft of up to 16 and the row's token), as a token bucket: forwards up to it cost alike (SwiftShader: flat up to ~30 tokens; a GPU: ~1.1 decodes). */
const VERIFY_SIZES = 32;
/** Forwards recorded after which a size's measurement is old enough to be tried again. */
const REPROBE_AFTER = 64;

/** The tokens a measurement stands for: 1, or the power of two at or above `tokens`. */
function tokenBucket(tokens: number): number {
  return tokens <= 1 ? 1 : 2 ** Math.ceil(Math.log2(tokens));
}

/** A measurement's key: single forwards by tokens; batched ones by rows and tokens ("d": one token per row, batch_decode). */
function keyOf(mode: "batch" | "single", rows: number, tokens: number): string {
  return mode === "single" ? `single:${tokenBucket(tokens)}` : `batch:${rows}:${tokens <= rows ? "d" : tokenBucket(tokens)}`;
}

/**
 * What a forward's first run warms: a batched forward's kind and size, the
 * decode, and one warm-up for every single forward over more than one token
 * (a prompt chunk's prefill, a lone row's verify). So after a row's prompt
 * was prefilled, its first verify is measured: on SwiftShader one verify
 * (~4 decodes) is then what learning that drafts do not pay costs, not two
 * of each size. A verify's first run at a new size can still be dearer
 * (bucket 8 read 64.7 s where 16 read 46.8 s): that errs toward not drafting.
 */
function warmUpOf(key: string): string {
  return key.startsWith("single:") && key !== "single:1" ? "single:many" : key;
}

/**
 * The first forward of each warm-up (warmUpOf) is not recorded: the first
 * `batch_decode` pays the compilation of its kernels (minutes on
 * SwiftShader), and the first of each new row count still costs 1.2–1.6×
 * the next ones (real engine, SwiftShader: 3 rows 105 s then 67 s, 4 rows
 * 89 s then 74 s), which would make that size look dearer than it is. A size
 * never measured (or measured long ago) is estimated as the prior says, in
 * units of a measured decode, so the scheduler tries it: a measurement then decides.
 */
export class MeasuredStepCost implements StepCostModel {
  private readonly measured = new Map<string, { ms: number; at: number }>();
  /** Warm-ups that ran (warmUpOf: their first run is not recorded). */
  private readonly warmed = new Set<string>();
  private records = 0;

  constructor(private readonly prior: StepCostModel = WEIGHT_BOUND_COST) {}

  /**
   * A forward ran in `ms`: `rows` rows as one batch (`tokens` in all, default
   * one per row), or one single-sequence forward (`rows` 1) of `tokens` (default 1: a decode).
   */
  record(mode: "batch" | "single", rows: number, ms: number, tokens: number = mode === "batch" ? rows : 1): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    const key = keyOf(mode, rows, tokens);
    const warmUp = warmUpOf(key);
    if (!this.warmed.has(warmUp)) {
      this.warmed.add(warmUp);
      return;
    }
    this.records++;
    const previous = this.measured.get(key)?.ms ?? null;
    this.measured.set(key, { ms: previous === null ? ms : previous + FORGET * (ms - previous), at: this.records });
  }

  /**
   * A single forward over `tokens`: measured, else scaled by the prior's shape
   * from the nearest measured forward of more than one token of a like size
   * (other kernels than a decode's): both within the sizes drafts are
   * verified at, or within a factor of four (a long prompt chunk says little
   * about a short verify); else from the decode; and
   * never below what a measured forward over fewer tokens took (more tokens
   * never cost less). So one measured verify prices the sizes not tried yet:
   * on SwiftShader a forced call's drafts of 3 to 15 tokens were each tried
   * (twice, when the first of each size was not recorded) at ~78 s a verify
   * against ~17 s a decode, before each size's own measurement stopped them.
   */
  single(tokens: number): number {
    const bucket = tokenBucket(tokens);
    const own = this.fresh(keyOf("single", 1, bucket));
    if (own !== null) return own;
    // A decode runs other kernels than a verify: never scaled from one. Not measured yet, it is the unit, so a
    // measured verify (in ms) is not weighed against a decode priced from itself: drafts wait for a measured decode.
    if (bucket === 1) return this.unit();
    const measured = this.freshSingles();
    const distance = (other: number) => Math.abs(Math.log2(other / bucket));
    const alike = (other: number) => other > 1 && (distance(other) <= 2 || (other <= VERIFY_SIZES && bucket <= VERIFY_SIZES));
    const nearby = measured.filter((m) => alike(m.bucket)).sort((a, b) => distance(a.bucket) - distance(b.bucket))[0];
    const scaled = nearby ? nearby.ms * (this.prior.single(bucket) / this.prior.single(nearby.bucket)) : this.unit() * (this.prior.single(bucket) / this.prior.single(1));
    const floor = Math.max(0, ...measured.filter((m) => m.bucket < bucket).map((m) => m.ms));
    return Math.max(scaled, floor);
  }

  batch(rows: number, tokens: number): number {
    return this.fresh(keyOf("batch", rows, tokens)) ?? this.unit() * (this.prior.batch(rows, tokens) / this.prior.single(1));
  }

  /** What the model knows (for stats and tests): the decode, and batches by row count (batch_decode) and by rows × tokens (batch_prefill). */
  snapshot(): { single_ms: number | null; batch_ms: Record<number, number>; batch_prefill_ms: Record<string, number>; prefill_ms: Record<number, number> } {
    const batchMs: Record<number, number> = {};
    const batchPrefillMs: Record<string, number> = {};
    const prefillMs: Record<number, number> = {};
    for (const [key, { ms }] of this.measured) {
      const [mode, a, b] = key.split(":");
      if (mode === "batch" && b === "d") batchMs[Number(a)] = ms;
      else if (mode === "batch") batchPrefillMs[`${a}x${b}`] = ms;
      else if (a !== "1") prefillMs[Number(a)] = ms;
    }
    return { single_ms: this.measured.get("single:1")?.ms ?? null, batch_ms: batchMs, batch_prefill_ms: batchPrefillMs, prefill_ms: prefillMs };
  }

  /** The measurements as `client.stats()` reports them (whole ms). */
  stepTimes(): StepTimes {
    const { single_ms, batch_ms, batch_prefill_ms, prefill_ms } = this.snapshot();
    const rounded = (entries: Record<string | number, number>) =>
      Object.fromEntries(Object.entries(entries).sort((a, b) => parseInt(a[0]) - parseInt(b[0]) || a[0].localeCompare(b[0])).map(([size, ms]) => [size, Math.round(ms)]));
    return {
      decode: single_ms === null ? null : Math.round(single_ms),
      batch_decode: rounded(batch_ms),
      ...(Object.keys(prefill_ms).length > 0 ? { prefill: rounded(prefill_ms) } : {}),
      ...(Object.keys(batch_prefill_ms).length > 0 ? { batch_prefill: rounded(batch_prefill_ms) } : {}),
    };
  }

  /** The single forwards measured recently enough to trust, by token bucket. */
  private freshSingles(): { bucket: number; ms: number }[] {
    const singles: { bucket: number; ms: number }[] = [];
    for (const key of this.measured.keys()) {
      if (!key.startsWith("single:")) continue;
      const ms = this.fresh(key);
      if (ms !== null) singles.push({ bucket: Number(key.slice("single:".length)), ms });
    }
    return singles;
  }

  /** A measurement of `key` recent enough to trust, or null. */
  private fresh(key: string): number | null {
    const measured = this.measured.get(key);
    return measured !== undefined && this.records - measured.at <= REPROBE_AFTER ? measured.ms : null;
  }

  /**
   * One single decode in ms: measured, or before any was, the smallest
   * measured batch_decode over the prior's ratio (so both sides of a choice
   * are in ms); 1 (the prior's unit) while nothing is measured.
   */
  private unit(): number {
    const decode = this.measured.get("single:1");
    if (decode) return decode.ms;
    const smallest = Object.entries(this.snapshot().batch_ms).sort((a, b) => Number(a[0]) - Number(b[0]))[0];
    if (!smallest) return 1;
    const [rows, ms] = [Number(smallest[0]), smallest[1]];
    return ms / (this.prior.batch(rows, rows) / this.prior.single(1));
  }
}
