/**
 * Storage quota: refuse a download that cannot fit before anything is
 * written, and ask the browser to keep the weights (`persist()`).
 */
import { ApiError } from "../protocol/api-error.js";

export interface StorageReport {
  /** Bytes this origin uses, per `navigator.storage.estimate()`; null when unknown. */
  usage: number | null;
  quota: number | null;
  /** quota − usage. */
  free: number | null;
  /** Whether the browser granted persistent storage (null: not asked or not askable here). */
  persisted: boolean | null;
}

let persistResult: boolean | null = null;

function storage(): StorageManager | undefined {
  return typeof navigator === "undefined" ? undefined : navigator.storage;
}

/** The origin's usage and quota as the browser reports them. */
export async function storageReport(): Promise<StorageReport> {
  const manager = storage();
  let usage: number | null = null;
  let quota: number | null = null;
  if (typeof manager?.estimate === "function") {
    // A browser that cannot estimate (or refuses to) leaves both unknown; it does not stop a download.
    const estimate = await manager.estimate().catch(() => ({}) as StorageEstimate);
    usage = finite(estimate.usage);
    quota = finite(estimate.quota);
  }
  // Asked fresh each time: the page may have been granted persistence after this (worker) context last looked.
  const persisted = typeof manager?.persisted === "function" ? await manager.persisted().catch(() => persistResult) : persistResult;
  return { usage, quota, free: usage !== null && quota !== null ? Math.max(0, quota - usage) : null, persisted };
}

/**
 * Asks for persistent storage once (browsers may decline, or grant silently
 * to installed or bookmarked sites). `persist()` exists only on window
 * contexts; in a worker the answer stays null.
 */
export async function requestPersistence(): Promise<boolean | null> {
  const manager = storage();
  if (persistResult === true) return true;
  if (typeof manager?.persist !== "function") return persistResult;
  persistResult = await manager.persist().catch(() => persistResult);
  return persistResult;
}

function finite(value: number | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * Throws 507 `insufficient_storage` when `neededBytes` exceed what the origin
 * has left, or (usage unknown) its whole quota. Resolves to whether the room
 * was known: an unknown estimate is not taken as room, it is reported
 * (`DownloadResult.quotaChecked`), and a full disk then fails on the write
 * that hits it, with the same 507.
 */
export async function ensureRoom(neededBytes: number, modelId: string): Promise<boolean> {
  const { free, quota } = await storageReport();
  const room = free ?? quota;
  if (room === null) return false;
  if (neededBytes > room) throw insufficientStorage(modelId, neededBytes, room);
  return free !== null;
}

/** The 507 error, naming the bytes needed and free. */
export function insufficientStorage(modelId: string, neededBytes: number, freeBytes: number | null, detail = ""): ApiError {
  const free = freeBytes === null ? "an unknown amount" : `${freeBytes} bytes (${mb(freeBytes)})`;
  return new ApiError({
    status: 507,
    code: "insufficient_storage",
    param: "model",
    message: `Not enough storage to cache ${modelId}: it needs ${neededBytes} more bytes (${mb(neededBytes)}) and this origin has ${free} free.${detail} Free space with client.cache.delete(id) or clear(), or use a smaller model.`,
  });
}

function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
