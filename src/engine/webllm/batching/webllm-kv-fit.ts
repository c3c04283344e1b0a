/**
 * How many rows continuous batching gets on web-llm when the client left
 * `batching` unset (on by default, issue 38), so that the default is safe on
 * any device:
 *
 * 1. Start from `DEFAULT_MAX_ROWS` (4), lowered to the sequences the model
 *    library's forwards were compiled for (`_metadata.max_batch_size`, where
 *    the library says). Each row gets min(context window, 2048) KV tokens
 *    (WebLlmRows.kvReservation).
 * 2. Before the KV cache is re-created with room for them, check that the
 *    whole new cache can be allocated now; if not, halve the rows (and so
 *    their KV room) and check again, down to 2. Below 2 the engine decodes
 *    one sequence at a time, and `client.stats().batching.reason` says why.
 *
 * Why a check of our own instead of catching the re-creation's failure:
 * WebGPU has no "memory left" query, and tvmjs allocates every buffer inside
 * error scopes of its own that DESTROY THE DEVICE on any error
 * (`tryCreateBuffer`: web-llm 0.2.79's bundle line 3625, 0.2.86's line 4871),
 * so an outer `pushErrorScope` never sees the error and the model is lost.
 * The check therefore allocates the same bytes as plain GPU buffers, one per
 * layer as the paged cache holds its pages, inside our own "out-of-memory"
 * and "validation" scopes, while the old cache still exists (as it does while
 * the new one is made), and frees them at once. A layer's pages are one
 * storage buffer, so a layer bigger than the device's buffer limits fails too.
 *
 * Settings the client gave (`true`, an object) are not resized: when they do
 * not fit, the load fails with a 400 that says what to lower, before tvmjs
 * could lose the device over them.
 */
import { ApiError } from "../../../protocol/api-error.js";
import { NOMINAL_KV_BYTES_PER_TOKEN } from "../../prompt-cache/config.js";
import { kvShapeOf, type ChatConfigLike } from "../prompt-cache/webllm-cache-slot.js";
import type { TvmLike } from "../prompt-cache/webllm-kv-ops.js";
import { WebLlmRows, type WebLlmRowsOptions } from "./webllm-rows.js";

/** The slice of a WebGPU `GPUDevice` the check uses. */
export interface GpuDeviceLike {
  readonly limits?: { maxBufferSize?: number; maxStorageBufferBindingSize?: number };
  pushErrorScope(filter: "out-of-memory" | "validation"): void;
  popErrorScope(): Promise<unknown>;
  createBuffer(descriptor: { size: number; usage: number }): { destroy(): void };
}

/** What the sizing reads of web-llm's loaded pipeline. */
export interface KvFitPipeline {
  tvm: Pick<TvmLike, "beginScope" | "endScope" | "detachFromCurrentScope"> & { lib?: { webGPUContext?: { device?: unknown } } };
  vm?: { getFunction(name: string): (...args: unknown[]) => unknown };
  config?: ChatConfigLike;
  contextWindowSize?: number;
}

/** `GPUBufferUsage.STORAGE` (the constant is not defined outside a browser). */
const STORAGE_USAGE = 0x80;
/** Layers assumed with the nominal KV size when the model's config does not say (an 8B model). */
const NOMINAL_LAYERS = 32;

export type RowsFit = { settings: WebLlmRowsOptions; tried: number[] } | { settings: null; reason: string };

/**
 * The rows' settings for `pipe`. `cacheTokensFor(settings)`: tokens of the
 * whole KV cache that will be re-created with these rows (the prompt cache's
 * budget, web-llm's own window and the rows' room). `tried`: row counts that
 * did not fit before the one returned.
 */
export async function fitRows(pipe: KvFitPipeline, options: WebLlmRowsOptions, cacheTokensFor: (settings: WebLlmRowsOptions) => number): Promise<RowsFit> {
  const device = gpuDeviceOf(pipe);
  const shape = kvShapeOf(pipe.config) ?? { layers: NOMINAL_LAYERS, bytesPerToken: NOMINAL_KV_BYTES_PER_TOKEN };
  const bytesFor = (settings: WebLlmRowsOptions) => cacheTokensFor(settings) * shape.bytesPerToken;
  // No device to ask (a stand-in pipeline): the settings stand, as before this check existed.
  const fits = async (settings: WebLlmRowsOptions) => !device || (await canAllocate(device, bytesFor(settings), shape.layers));
  if (!options.sizeToDevice) {
    if (await fits(options)) return { settings: options, tried: [] };
    const param = options.kvTokens !== undefined ? "batching.kvTokens" : "batching.maxRows";
    throw new ApiError({
      status: 400,
      code: "batching_too_large",
      param,
      message: `batching with ${options.maxRows} rows and ${WebLlmRows.kvReservation(pipe, options).tokens} KV tokens needs a KV cache of ${mib(bytesFor(options))} that this device could not allocate: lower ${param}${param === "batching.maxRows" ? " or batching.kvTokens" : " or batching.maxRows"}, or leave batching unset to size the rows to the device.`,
    });
  }
  const compiled = libraryMaxBatch(pipe);
  const tried: number[] = [];
  for (let rows = Math.min(options.maxRows, compiled ?? Infinity); rows >= 2; rows = Math.floor(rows / 2)) {
    const sized: WebLlmRowsOptions = { ...options, maxRows: rows };
    if (await fits(sized)) return { settings: sized, tried };
    tried.push(rows);
  }
  if (tried.length === 0) return { settings: null, reason: `the model library's forwards take one sequence (max_batch_size ${compiled})` };
  const two = { ...options, maxRows: 2 };
  return {
    settings: null,
    reason: `sized to the device: a KV cache for ${tried.join(", then ")} rows could not be allocated (2 rows: ${mib(bytesFor(two))}); set createClient({ batching }) to choose a size`,
  };
}

/** The GPU device tvmjs allocates on (`tvm.lib.webGPUContext.device`), or null where it cannot be reached. */
export function gpuDeviceOf(pipe: KvFitPipeline): GpuDeviceLike | null {
  const device = pipe.tvm.lib?.webGPUContext?.device as Partial<GpuDeviceLike> | undefined;
  return device && typeof device.createBuffer === "function" && typeof device.pushErrorScope === "function" && typeof device.popErrorScope === "function" ? (device as GpuDeviceLike) : null;
}

/** The most sequences the model library's forwards were compiled for (`_metadata.max_batch_size`), or null where it does not say. */
export function libraryMaxBatch(pipe: KvFitPipeline): number | null {
  const tvm = pipe.tvm;
  tvm.beginScope();
  try {
    const metadata = JSON.parse(String(tvm.detachFromCurrentScope(pipe.vm?.getFunction("_metadata")()))) as { max_batch_size?: unknown };
    const limit = metadata.max_batch_size;
    return typeof limit === "number" && Number.isInteger(limit) && limit >= 1 ? limit : null;
  } catch {
    return null;
  } finally {
    tvm.endScope();
  }
}

/**
 * Whether `bytes` of KV pages, in `layers` buffers of equal size, can be
 * allocated on `device` now. The buffers are freed before this returns.
 */
export async function canAllocate(device: GpuDeviceLike, bytes: number, layers: number): Promise<boolean> {
  const perLayer = Math.max(4, Math.ceil(bytes / Math.max(1, layers) / 4) * 4);
  const limit = Math.min(device.limits?.maxBufferSize ?? Infinity, device.limits?.maxStorageBufferBindingSize ?? Infinity);
  if (perLayer > limit) return false;
  const buffers: Array<{ destroy(): void }> = [];
  device.pushErrorScope("out-of-memory");
  device.pushErrorScope("validation");
  let thrown = false;
  try {
    for (let i = 0; i < layers; i++) buffers.push(device.createBuffer({ size: perLayer, usage: STORAGE_USAGE }));
  } catch {
    thrown = true;
  }
  try {
    // Popped innermost first; both are asked for before either settles.
    const [validation, outOfMemory] = await Promise.all([device.popErrorScope(), device.popErrorScope()]);
    return !thrown && !validation && !outOfMemory;
  } finally {
    // Freed however the scopes answer: a rejected pop must not leave the whole cache's size allocated.
    for (const buffer of buffers) buffer.destroy();
  }
}

function mib(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}
