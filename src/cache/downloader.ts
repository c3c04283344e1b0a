/**
 * Fills web-llm's cache with a model: reads (or fetches) the config and the
 * tensor index, checks the quota, then fetches only the files the cache lacks,
 * `concurrency` at a time, each body streamed into one buffer of the declared
 * size while it is hashed, verified, and written (resolved on commit).
 *
 * Memory: IndexedDB stores one `{url, data: ArrayBuffer}` per file, so a shard
 * is held whole once; at most `concurrency` shards and `maxBufferedBytes` are in flight (plus the
 * structured-clone copy IndexedDB makes while committing one).
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import type { LoadProgress } from "../engine/types.js";
import type { ModelRecord } from "../models/record.js";
import { manifestArtifacts, packageArtifact, packagePathsOf, parseTensorIndex, planArtifacts, type PackagePaths, type Artifact, type ArtifactPlan, type ChatConfigFiles, type TensorCacheIndex } from "./artifacts.js";
import { integrityProblem } from "./integrity.js";
import { checkRecordUrls } from "./url-policy.js";
import { Md5 } from "./md5.js";
import { ByteProgress } from "./progress.js";
import { ensureRoom, insufficientStorage, storageReport } from "./quota.js";
import type { ArtifactStore } from "./store.js";

export interface DownloadOptions {
  store: ArtifactStore;
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Files fetched at once, at most. Default 4 (web-llm's own figure). */
  concurrency?: number;
  /**
   * Bytes of declared-size files (shards) in memory at once, at most; a
   * single file larger than this still downloads, alone. Default 64 MiB:
   * two of MLC's usual 32 MB shards.
   */
  maxBufferedBytes?: number;
  /** Extra attempts per file after a network error or a failed check. Default 2. */
  retries?: number;
  /** Sizes of already-cached files whose size the model does not declare (tokenizer, wasm). */
  knownSizes?: ReadonlyMap<string, number>;
  /** Called once the quota check passed, before the first write. */
  onPlanned?: (plan: ArtifactPlan) => Promise<void> | void;
  /** Called after each file is committed. */
  onStored?: (artifact: Artifact, bytes: number) => Promise<void> | void;
}

export interface DownloadResult {
  plan: ArtifactPlan;
  /** Bytes fetched from the network in this call (failed attempts included). */
  fetchedBytes: number;
  /** Bytes of the whole model as cached. */
  totalBytes: number;
  /** Size of every file, as stored. */
  sizes: Map<string, number>;
  /** URLs whose cached record was unreadable by web-llm 0.2.86 and was fetched again. */
  healed: string[];
  /** Most bytes of file buffers held at once (downloaded, not yet committed). */
  peakBufferedBytes: number;
}

/** Bytes held in download buffers, for the memory bound the benchmark reports. */
interface BufferGauge {
  current: number;
  peak: number;
}

/**
 * Shard buffers for reuse: once a shard is committed its buffer takes the
 * next one, so a download allocates about `concurrency` buffers in all
 * instead of one per shard left for the garbage collector (which, measured,
 * let the heap grow to the whole model's size).
 */
class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();

  take(size: number): ArrayBuffer | null {
    return this.free.get(size)?.pop() ?? null;
  }

  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength === 0 || (buffer as { detached?: boolean }).detached) return;
    const list = this.free.get(buffer.byteLength) ?? [];
    list.push(buffer);
    this.free.set(buffer.byteLength, list);
  }
}

/** Lets a file start only while the bytes in flight stay within the budget (one file always may). */
class ByteBudget {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async acquire(bytes: number, signal: AbortSignal): Promise<void> {
    while (this.used > 0 && this.used + bytes > this.limit) {
      if (signal.aborted) throw abortError();
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
    for (const wake of this.waiters.splice(0)) wake();
  }
}

function hold(gauge: BufferGauge, bytes: number): void {
  gauge.current += bytes;
  gauge.peak = Math.max(gauge.peak, gauge.current);
}

/** A failed check of a file's bytes (retried; distinct from network errors). */
class IntegrityMismatch extends Error {
  override name = "IntegrityMismatch";
}

/** A response the server will give again (4xx): not retried. */
class PermanentFetchError extends Error {
  override name = "PermanentFetchError";
}

export async function downloadModel(record: ModelRecord, options: DownloadOptions): Promise<DownloadResult> {
  const { store } = options;
  checkRecordUrls(record);
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const budget = new ByteBudget(options.maxBufferedBytes ?? 64 * 1024 * 1024);
  const retries = options.retries ?? 2;
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  if (signal.aborted) throw abortError();
  let fetchedBytes = 0;
  const healed: string[] = [];
  const sizes = new Map<string, number>();
  const gauge: BufferGauge = { current: 0, peak: 0 };
  const pool = new BufferPool();

  // 1. Config and tensor index: from the cache when web-llm can read them there, else fetched into memory.
  const pending: Array<{ artifact: Artifact; bytes: Uint8Array }> = [];
  // A model package manifest (gemma-4) says where the config and the tensor index live.
  const pkg = packageArtifact(record);
  if (pkg) requireIntegrity(record, [pkg]);
  let paths: PackagePaths = {};
  let packageSize: number | undefined;
  if (pkg) {
    const stored = await store.read(pkg.scope, pkg.url);
    let bytes: Uint8Array;
    if (stored?.kind === "bytes") bytes = new Uint8Array(stored.data);
    else {
      bytes = await fetchWithRetries(pkg, signal, retries, null, (n) => (fetchedBytes += n), gauge);
      pending.push({ artifact: pkg, bytes });
    }
    paths = packagePathsOf(parseJson(bytes, pkg.url));
    packageSize = bytes.byteLength;
  }
  const manifest = manifestArtifacts(record, paths);
  requireIntegrity(record, [manifest.config, manifest.index]);
  const configValue = await store.read(manifest.config.scope, manifest.config.url);
  let configBytes: Uint8Array;
  if (configValue?.kind === "bytes") configBytes = new Uint8Array(configValue.data);
  else {
    // web-llm ≤0.2.79 stored the config as a parsed object; 0.2.86 decodes bytes and fails on it.
    if (configValue?.kind === "json") healed.push(manifest.config.url);
    configBytes = await fetchWithRetries(manifest.config, signal, retries, null, (n) => (fetchedBytes += n), gauge);
    pending.push({ artifact: manifest.config, bytes: configBytes });
  }
  const config = parseJson(configBytes, manifest.config.url) as ChatConfigFiles;

  const indexValue = await store.read(manifest.index.scope, manifest.index.url);
  let index: TensorCacheIndex;
  let indexSize: number;
  if (indexValue) {
    const parsed = indexValue.kind === "json" ? indexValue.data : parseJson(new Uint8Array(indexValue.data), manifest.index.url);
    index = parseTensorIndex(parsed, manifest.index.url);
    indexSize = indexValue.kind === "json" ? new TextEncoder().encode(JSON.stringify(parsed)).byteLength : indexValue.data.byteLength;
  } else {
    const bytes = await fetchWithRetries(manifest.index, signal, retries, null, (n) => (fetchedBytes += n), gauge);
    index = parseTensorIndex(parseJson(bytes, manifest.index.url), manifest.index.url);
    indexSize = bytes.byteLength;
    pending.push({ artifact: manifest.index, bytes });
  }
  const plan = planArtifacts(record, config, index, { config: configBytes.byteLength, index: indexSize, package: packageSize }, paths);
  requireIntegrity(record, plan.artifacts);

  // 2. What is missing, and does it fit.
  const rest = plan.artifacts.filter((a) => a.kind !== "config" && a.kind !== "tensor-index" && a.kind !== "package");
  const present = await Promise.all(rest.map((a) => store.has(a.scope, a.url)));
  const missing = rest.filter((_, i) => !present[i]);
  const sizeOf = (a: Artifact) => a.bytes ?? options.knownSizes?.get(a.url) ?? 0;
  const neededBytes = pending.reduce((sum, p) => sum + p.bytes.byteLength, 0) + missing.reduce((sum, a) => sum + (a.bytes ?? 0), 0);
  await ensureRoom(neededBytes, record.model_id);
  await options.onPlanned?.(plan);

  const totalKnown = plan.artifacts.reduce((sum, a) => sum + (a.bytes === null && missing.includes(a) ? 0 : sizeOf(a)), 0);
  const cachedBytes = plan.artifacts.filter((a) => !missing.includes(a)).reduce((sum, a) => sum + sizeOf(a), 0);
  for (const artifact of plan.artifacts) if (!missing.includes(artifact)) sizes.set(artifact.url, sizeOf(artifact));
  // The config and index count as downloaded once written below.
  const pendingBytes = pending.reduce((sum, p) => sum + p.bytes.byteLength, 0);
  const progress = new ByteProgress(totalKnown, cachedBytes - pendingBytes, options.onProgress);

  // 3. Write the manifest files first, so an interrupted download resumes without them.
  for (const { artifact, bytes } of pending) {
    await writeArtifact(store, artifact, bytes, record.model_id);
    hold(gauge, -bytes.buffer.byteLength);
    sizes.set(artifact.url, bytes.byteLength);
    progress.add(bytes.byteLength, artifact.name, true);
    await options.onStored?.(artifact, bytes.byteLength);
  }
  if (missing.length === 0) progress.report(null);

  // 4. The rest, `concurrency` at a time. The first failure stops the others.
  // Files of undeclared size first, so the total is right early.
  const queue = [...missing.filter((a) => a.bytes === null), ...missing.filter((a) => a.bytes !== null)];
  const worker = async () => {
    for (let artifact = queue.shift(); artifact; artifact = queue.shift()) {
      const current = artifact;
      const reserved = current.bytes ?? 0;
      await budget.acquire(reserved, signal);
      let bytes: Uint8Array;
      try {
        bytes = await fetchWithRetries(current, signal, retries, (n) => {
          // A file of undeclared size widens the total as it arrives (and narrows it when an attempt is discarded).
          if (current.bytes === null) progress.grow(n);
          progress.add(n, current.name);
        }, (n) => (fetchedBytes += n), gauge, pool);
        try {
          await writeArtifact(store, artifact, bytes, record.model_id);
        } finally {
          hold(gauge, -bytes.buffer.byteLength);
        }
      } finally {
        budget.release(reserved);
      }
      // Every backend has copied or consumed the bytes once the write resolved.
      if (bytes.byteLength === bytes.buffer.byteLength) pool.give(bytes.buffer as ArrayBuffer);
      sizes.set(artifact.url, bytes.byteLength);
      progress.add(0, artifact.name, true);
      await options.onStored?.(artifact, bytes.byteLength);
    }
  };
  const workers = Array.from({ length: Math.min(concurrency, queue.length) }, () =>
    worker().catch((error) => {
      controller.abort();
      throw error;
    }),
  );
  const results = await Promise.allSettled(workers);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failure) {
    // Report the first real cause, not the aborts it caused in the other workers.
    const causes = results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => r.reason);
    throw causes.find((c) => !isAbortError(c) || options.signal?.aborted) ?? failure.reason;
  }
  progress.report(null);
  let totalBytes = 0;
  for (const size of sizes.values()) totalBytes += size;
  return { plan, fetchedBytes, totalBytes, sizes, healed, peakBufferedBytes: gauge.peak };
}

/**
 * With `require_integrity` on the record, every file needs a hash of the
 * app's in `integrity`: checked before the files are fetched (the config and
 * index first, then everything they list), so a host cannot add a file the
 * app never pinned.
 */
function requireIntegrity(record: ModelRecord, artifacts: readonly Artifact[]): void {
  if (record.require_integrity !== true) return;
  const unpinned = artifacts.filter((a) => !a.sri).map((a) => a.name);
  if (unpinned.length === 0) return;
  throw new ApiError({
    status: 400,
    code: "integrity_missing",
    param: "model",
    message: `${record.model_id} has require_integrity set, but its integrity map has no hash for ${unpinned.slice(0, 5).join(", ")}${unpinned.length > 5 ? ` and ${unpinned.length - 5} more files` : ""}. Add an SRI hash (sha256-…) per file name; nothing unpinned is downloaded.`,
  });
}

/** Commits one file; a quota failure becomes 507. */
async function writeArtifact(store: ArtifactStore, artifact: Artifact, bytes: Uint8Array, modelId: string): Promise<void> {
  try {
    await store.write(artifact.scope, artifact.url, bytes, artifact.storeType, artifact.storeType === "json" ? "application/json" : undefined);
  } catch (error) {
    if ((error as { name?: string })?.name === "QuotaExceededError") {
      const { free } = await storageReport().catch(() => ({ free: null }));
      throw insufficientStorage(modelId, bytes.byteLength, free, ` Writing ${artifact.name} failed; the model stays marked incomplete and resumes from here.`);
    }
    throw error;
  }
}

/**
 * Fetches and verifies one file, retrying network errors and failed checks.
 * `onBytes` sees bytes as they stream (and a negative count when an attempt is discarded).
 */
async function fetchWithRetries(artifact: Artifact, signal: AbortSignal, retries: number, onBytes: ((n: number) => void) | null, onFetched: (n: number) => void, gauge: BufferGauge, pool: BufferPool | null = null): Promise<Uint8Array> {
  let lastError: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (signal.aborted) throw abortError();
    let received = 0;
    try {
      const bytes = await fetchOnce(artifact, signal, (n) => {
        received += n;
        onFetched(n);
        onBytes?.(n);
      }, gauge, pool);
      return bytes;
    } catch (error) {
      if (received > 0) onBytes?.(-received);
      if (signal.aborted || isAbortError(error)) throw abortError();
      lastError = error;
      if (error instanceof PermanentFetchError) break;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new ApiError({
    status: 503,
    code: lastError instanceof IntegrityMismatch ? "integrity_error" : "download_failed",
    param: "model",
    message: `Could not download ${artifact.url}: ${reason}. What was already stored is kept; loading the model again resumes with the missing files.`,
  });
}

/** One attempt. The returned bytes stay counted in `gauge` until the caller releases them. */
async function fetchOnce(artifact: Artifact, signal: AbortSignal, onBytes: (n: number) => void, gauge: BufferGauge, pool: BufferPool | null): Promise<Uint8Array> {
  // no-store: the weights live in web-llm's cache; a second copy in the HTTP cache would double the disk use.
  // credentials: "omit": a model host gets no cookie of the user's, on the app's origin or any other (url-policy.ts).
  const response = await fetch(artifact.url, { signal, cache: "no-store", credentials: "omit" });
  if (!response.ok) {
    const message = `the server answered ${response.status} ${response.statusText}`.trim();
    await response.body?.cancel().catch(() => undefined);
    throw response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429 ? new PermanentFetchError(message) : new Error(message);
  }
  const declared = artifact.bytes ?? (Number(response.headers.get("content-length")) || null);
  const md5 = artifact.md5 ? new Md5() : null;
  const body = response.body as ReadableStream<Uint8Array>;
  const byob = artifact.bytes !== null ? byobReader(body) : null;
  if (byob) return readInto(byob, artifact, artifact.bytes as number, md5, onBytes, gauge, pool?.take(artifact.bytes as number) ?? new ArrayBuffer(artifact.bytes as number));
  let buffer = new Uint8Array(declared ?? 1 << 16);
  hold(gauge, buffer.byteLength);
  let length = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (length + value.byteLength > buffer.byteLength) {
        if (artifact.bytes !== null) throw new IntegrityMismatch(`${artifact.name}: the server sent more than the declared ${artifact.bytes} bytes`);
        const grown = new Uint8Array(Math.max(buffer.byteLength * 2, length + value.byteLength));
        grown.set(buffer.subarray(0, length));
        hold(gauge, grown.byteLength - buffer.byteLength);
        buffer = grown;
      }
      buffer.set(value, length);
      length += value.byteLength;
      md5?.update(value);
      onBytes(value.byteLength);
    }
    const bytes = length === buffer.byteLength ? buffer : buffer.subarray(0, length);
    await verify(artifact, bytes, md5);
    return bytes;
  } catch (error) {
    hold(gauge, -buffer.byteLength);
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}

/** A BYOB reader when the body is a byte stream (Chromium's fetch bodies are), else null. */
function byobReader(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  try {
    return body.getReader({ mode: "byob" });
  } catch {
    return null;
  }
}

/**
 * Reads a body of known size straight into one buffer: no per-chunk
 * allocations, so the heap does not fill with garbage chunks while a shard
 * streams (the default reader allocates a new array per chunk).
 */
async function readInto(reader: ReadableStreamBYOBReader, artifact: Artifact, size: number, md5: Md5 | null, onBytes: (n: number) => void, gauge: BufferGauge, initial: ArrayBuffer): Promise<Uint8Array> {
  let buffer = initial;
  hold(gauge, size);
  let length = 0;
  try {
    while (length < size) {
      const { done, value } = await reader.read(new Uint8Array(buffer, length, Math.min(size - length, 1 << 20)));
      if (done || !value) break;
      // The read transfers the buffer; keep the returned one.
      buffer = value.buffer as ArrayBuffer;
      md5?.update(value);
      length += value.byteLength;
      onBytes(value.byteLength);
    }
    if (length < size) throw new Error(`the connection closed after ${length} of ${size} bytes`);
    const probe = await reader.read(new Uint8Array(1));
    if (!probe.done) throw new IntegrityMismatch(`${artifact.name}: the server sent more than the declared ${size} bytes`);
    const bytes = new Uint8Array(buffer);
    await verify(artifact, bytes, md5);
    return bytes;
  } catch (error) {
    hold(gauge, -size);
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}

async function verify(artifact: Artifact, bytes: Uint8Array, md5: Md5 | null): Promise<void> {
  const problem = await integrityProblem(artifact, bytes, md5 ? md5.hex() : null);
  if (problem) throw new IntegrityMismatch(problem);
}

function parseJson(bytes: Uint8Array, url: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ApiError({ status: 502, code: "invalid_artifact", param: "model", message: `${url} is not valid JSON; check the model's URL.` });
  }
}
