/**
 * `createClient({ batching })`: continuous batching on the web-llm engine
 * (webllm-rows.ts). On by default: left unset, the row cap and the rows' KV
 * room are sized to the loaded model and the device when it loads
 * (webllm-kv-fit.ts: at most `DEFAULT_MAX_ROWS`, halved until the KV cache
 * can be allocated, one at a time when not even two rows fit). `false` turns
 * it off; `true` is the default row cap and an object sets it and the KV room,
 * as given (not resized). Checked when the client is made, so a bad option
 * fails there with a message that says what to pass.
 */
import { ApiError } from "../../protocol/api-error.js";
import type { StepCostModel } from "./cost-model.js";

export type BatchingOption = boolean | { maxRows?: number; kvTokens?: number; prefillChunkTokens?: number; forward?: StepForwardChoice };

/**
 * How a step with several decoding rows runs: "measured" (the default) times
 * `batch_decode` against single decodes on this device and keeps the cheaper;
 * "batched" always shares one `batch_decode` among two or more rows (a GPU,
 * where a decode step is bound by reading the weights).
 */
export type StepForwardChoice = "measured" | "batched";

/** Continuous batching's settings as the engine takes them (web-llm: webllm-rows.ts). */
export interface RowsSettings {
  /** Rows in flight at most (the KV cache gets a sequence for each). */
  maxRows: number;
  /**
   * The client left `batching` unset: `maxRows` is where sizing starts, and
   * the engine lowers it to what the model library and the device's memory
   * allow when the model loads (webllm-kv-fit.ts). Otherwise the settings are
   * used as given.
   */
  sizeToDevice?: boolean;
  /** KV tokens all rows may hold together; default `maxRows` × min(context window, 2048). */
  kvTokens?: number;
  /** Prompt tokens a row prefills per step at most, so the rows already decoding keep flowing; default 256. */
  prefillChunkTokens?: number;
  /**
   * How a step of several decoding rows runs: "measured" (default) keeps
   * whichever of `batch_decode` and single decodes this device runs faster;
   * "batched" always batches two or more rows (a GPU).
   */
  forward?: "measured" | "batched";
  /** What a step's forward costs, used as given instead (tests); the device's times are still measured. */
  cost?: StepCostModel;
  /** The clock forwards are timed with (ms); default `performance.now` (tests: a simulated device's). */
  clock?: () => number;
}

/** Rows in flight at most with `batching: true`, and where sizing to the device starts when `batching` is unset. */
export const DEFAULT_MAX_ROWS = 4;
/** The most rows a client may ask for (each holds a KV sequence and its share of a forward). */
export const MAX_ROWS_LIMIT = 64;

/**
 * The rows' settings for `option`, or null when batching is off (`false`).
 * Unset: the default, sized to the model and device at load (`sizeToDevice`).
 * Throws a 400 naming the field for a bad value.
 */
export function batchingSettings(option: BatchingOption | undefined): RowsSettings | null {
  if (option === undefined) return { maxRows: DEFAULT_MAX_ROWS, sizeToDevice: true };
  if (option === false) return null;
  if (option === true) return { maxRows: DEFAULT_MAX_ROWS };
  if (typeof option !== "object" || option === null) {
    throw new ApiError({ status: 400, param: "batching", message: "`batching` must be true, false or { maxRows, kvTokens, prefillChunkTokens, forward }." });
  }
  const maxRows = option.maxRows ?? DEFAULT_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_ROWS_LIMIT) {
    throw new ApiError({ status: 400, param: "batching.maxRows", message: `\`batching.maxRows\` must be an integer from 1 to ${MAX_ROWS_LIMIT} (got ${String(option.maxRows)}).` });
  }
  if (option.kvTokens !== undefined && (!Number.isInteger(option.kvTokens) || option.kvTokens < 16)) {
    throw new ApiError({ status: 400, param: "batching.kvTokens", message: `\`batching.kvTokens\` must be an integer of at least 16 (got ${String(option.kvTokens)}).` });
  }
  if (option.prefillChunkTokens !== undefined && (!Number.isInteger(option.prefillChunkTokens) || option.prefillChunkTokens < 1)) {
    throw new ApiError({ status: 400, param: "batching.prefillChunkTokens", message: `\`batching.prefillChunkTokens\` must be a positive integer (got ${String(option.prefillChunkTokens)}).` });
  }
  if (option.forward !== undefined && option.forward !== "measured" && option.forward !== "batched") {
    throw new ApiError({ status: 400, param: "batching.forward", message: `\`batching.forward\` must be "measured" or "batched" (got ${JSON.stringify(option.forward)}).` });
  }
  return { maxRows, ...(option.forward !== undefined ? { forward: option.forward } : {}), ...(option.kvTokens !== undefined ? { kvTokens: option.kvTokens } : {}), ...(option.prefillChunkTokens !== undefined ? { prefillChunkTokens: option.prefillChunkTokens } : {}) };
}
