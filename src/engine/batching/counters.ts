/**
 * What a step scheduler did since it started (engine-wide), and what the
 * passes one row took part in looked like (`x_webgpu.batch` of its reply).
 */

export interface BatchCounters {
  /** Forward passes run (a step run as single forwards counts one per row). */
  forward_passes: number;
  /** Tokens sampled, over all rows. */
  generated_tokens: number;
  /** Prompt tokens fed in prefill chunks, over all rows. */
  prefill_tokens: number;
  /** Rows per forward pass: mean over all passes, and the most in one. */
  mean_rows: number;
  max_rows: number;
  /**
   * What a decode forward costs on this device, as measured while the rows
   * ran (a running mean in ms; null before the first one past warm-up): one
   * single-sequence decode, and a batched decode by its row count. Absent
   * where nothing measures it (the scripted engine).
   */
  step_ms?: StepTimes;
  /**
   * The forwards run, by the library function each called (`decode`,
   * `prefill`, `batch_decode`, `batch_prefill`), and of the `batch_prefill`
   * calls those that verified a speculative draft beside other rows
   * (`verify_beside_rows`) or alone (`verify_alone`). Absent where the engine
   * does not count them (the scripted engine).
   */
  forward_kinds?: Record<string, number>;
  /**
   * Device memory one row's KV room takes (bytes): its share of the KV tokens
   * reserved for rows, at the bytes per token measured when the cache was
   * re-created. Absent where not measured.
   */
  kv_bytes_per_row?: number;
}

export interface StepTimes {
  decode: number | null;
  batch_decode: Record<string, number>;
  /** A prompt chunk's single-sequence `prefill`, by tokens (rounded up to a power of two). */
  prefill?: Record<string, number>;
  /** `batch_prefill` over mixed rows (decoding rows' tokens and prompt chunks), by "rows x tokens" (tokens rounded up to a power of two). */
  batch_prefill?: Record<string, number>;
}

/** How many rows shared the passes one row took part in (1 when it ran alone). */
export interface RowBatchReport {
  max_rows: number;
  mean_rows: number;
  /** Forward passes this row took part in. */
  passes: number;
}

/** Accumulates rows-per-pass over passes. */
export class RowsPerPass {
  passes = 0;
  private rowSlots = 0;
  max = 0;

  /** `count` passes of `rows` rows each. */
  add(rows: number, count = 1): void {
    this.passes += count;
    this.rowSlots += rows * count;
    this.max = Math.max(this.max, rows);
  }

  get mean(): number {
    return this.passes === 0 ? 0 : Math.round((this.rowSlots / this.passes) * 100) / 100;
  }
}
