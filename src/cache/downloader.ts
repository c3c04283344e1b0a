/**
 * Fills the cache with a model: for MLC's layout, reads (or fetches) the
 * config and the tensor index; for a GGUF (gguf-artifacts.ts), takes its
 * file list from its URL. Then it checks the quota, then fetches only the
 * files the cache lacks, several at a time, each verified as its bytes stream in (hashing.ts) and
 * written so that the next file downloads while the previous one commits.
 *
 * Two ways bytes reach the store:
 * - streamed (Cache API, OPFS, and IndexedDB for GGUF files, which it keeps
 *   as Blobs: `store.openWrite`): each chunk goes to the
 *   store as it arrives; the entry becomes visible only when the checks pass.
 *   A shard is never whole in memory.
 * - buffered (IndexedDB: one `{url, data: ArrayBuffer}` record per file): the
 *   body is read into one buffer, handed to `put` (which clones it
 *   synchronously; in a small worker where one can start, idb-writer.ts, so
 *   the clone does not stop the reads), and the buffer takes the next file
 *   while the commit runs.
 *   At most `maxBufferedBytes` of such buffers exist at once (a single larger
 *   file still downloads, alone).
 *
 * Nothing a host declares is allocated up front: buffers grow as bytes arrive
 * (limits.ts), files other than shards have a size cap, and a read that brings
 * no byte for `stallTimeoutMs` is abandoned.
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import type { LoadProgress, PrefetchLayout } from "../engine/types.js";
import type { ModelRecord } from "../models/record.js";
import { manifestArtifacts, packageArtifact, packagePathsOf, parseTensorIndex, planArtifacts, type PackagePaths, type Artifact, type ArtifactPlan, type ChatConfigFiles, type TensorCacheIndex } from "./artifacts.js";
import { ggufPlan } from "./gguf-artifacts.js";
import { checkRecordUrls } from "./url-policy.js";
import { BufferPool, hold, type BufferGauge } from "./download-buffers.js";
import { fetchWithRetries, submitArtifact, writeArtifact, type FetchContext } from "./file-fetch.js";
import { streamWithRetries } from "./resumable-fetch.js";
import { DEFAULT_STALL_TIMEOUT_MS } from "./limits.js";
import { ByteProgress } from "./progress.js";
import { ensureRoom } from "./quota.js";
import type { Scope } from "./layout.js";
import type { ArtifactStore } from "./store.js";
import { StreamGovernor, waitForWake } from "./stream-governor.js";

export interface DownloadOptions {
  store: ArtifactStore;
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /**
   * Files fetched at once, at most. Default 6 (Chromium's connections per
   * host over HTTP/1.1). The downloader starts with 2 and adds one while the
   * line's throughput keeps rising.
   */
  concurrency?: number;
  /**
   * Bytes of whole-file buffers (IndexedDB) in memory at once, at most; a
   * single file larger than this still downloads, alone. Default 64 MiB:
   * two of MLC's usual 32 MB shards.
   */
  maxBufferedBytes?: number;
  /** Extra attempts per file after a network error, a stall or a failed check. Default 2. */
  retries?: number;
  /** A read that brings no byte for this long fails the attempt (503 naming the file once retries are spent). Default 30 000 ms. */
  stallTimeoutMs?: number;
  /** Sizes of already-cached files whose size the model does not declare (tokenizer, wasm). */
  knownSizes?: ReadonlyMap<string, number>;
  /** Which layout the record's files follow (engine/types.ts `EngineCapabilities.prefetch`). Default "mlc". */
  layout?: PrefetchLayout;
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
  /** Most bytes of file buffers held at once (downloaded, not yet handed to the store). */
  peakBufferedBytes: number;
  /** Whether the browser told how much storage is free; false: the download went ahead unchecked (a full disk then fails on the write, with 507). */
  quotaChecked: boolean;
  /** Most files downloading at once. */
  peakConcurrency: number;
}

/** Commits handed to the store and not yet on disk, at most (an IndexedDB one holds a clone of one file in the browser). */
const MAX_PENDING_COMMITS = 2;

/** Lets a file start only while the bytes in flight stay within the budget (one file always may). */
class ByteBudget {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async acquire(bytes: number, signal: AbortSignal): Promise<void> {
    while (this.used > 0 && this.used + bytes > this.limit) {
      if (signal.aborted) throw abortError();
      await waitForWake(this.waiters, signal);
    }
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
    for (const wake of this.waiters.splice(0)) wake();
  }
}

export async function downloadModel(record: ModelRecord, options: DownloadOptions): Promise<DownloadResult> {
  const { store } = options;
  checkRecordUrls(record);
  const budget = new ByteBudget(options.maxBufferedBytes ?? 64 * 1024 * 1024);
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  if (signal.aborted) throw abortError();
  let fetchedBytes = 0;
  const healed: string[] = [];
  const sizes = new Map<string, number>();
  const gauge: BufferGauge = { current: 0, peak: 0 };
  const ctx: FetchContext = {
    signal,
    retries: options.retries ?? 2,
    stallTimeoutMs: options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
    gauge,
    pool: null,
    onFetched: (n) => (fetchedBytes += n),
  };
  const fetchSmall = async (artifact: Artifact) => {
    const bytes = await fetchWithRetries(artifact, ctx, null);
    hold(gauge, -bytes.buffer.byteLength);
    return bytes;
  };

  // 1. The file list: MLC's from its config and tensor index (fetched first), a GGUF's from its URL.
  const { plan, pending } = options.layout === "gguf" ? { plan: ggufPlan(record), pending: [] } : await planMlc(record, store, fetchSmall, healed);
  requireIntegrity(record, plan.artifacts);

  // 2. What is missing, and does it fit. Sets throughout: an index may list tens of thousands of shards.
  const rest = plan.artifacts.filter((a) => a.kind !== "config" && a.kind !== "tensor-index" && a.kind !== "package");
  const missing = new Set(await missingOf(store, rest));
  let pendingBytes = 0;
  for (const p of pending) pendingBytes += p.bytes.byteLength;
  let neededBytes = pendingBytes;
  for (const a of missing) neededBytes += a.bytes ?? 0;
  const quotaChecked = await ensureRoom(neededBytes, record.model_id);
  await options.onPlanned?.(plan);

  let totalKnown = 0;
  let cachedBytes = 0;
  for (const artifact of plan.artifacts) {
    if (missing.has(artifact)) totalKnown += artifact.bytes ?? 0;
    else {
      const size = artifact.bytes ?? options.knownSizes?.get(artifact.url) ?? 0;
      totalKnown += size;
      cachedBytes += size;
      sizes.set(artifact.url, size);
    }
  }
  // The config and index count as downloaded once written below.
  const progress = new ByteProgress(totalKnown, cachedBytes - pendingBytes, options.onProgress);

  // 3. Write the manifest files first, so an interrupted download resumes without them.
  for (const { artifact, bytes } of pending) {
    await writeArtifact(store, artifact, bytes, record.model_id);
    sizes.set(artifact.url, bytes.byteLength);
    progress.addFetchedEarlier(bytes.byteLength, artifact.name);
    await options.onStored?.(artifact, bytes.byteLength);
  }
  if (missing.size === 0) progress.report(null);

  // 4. The rest, several at a time. The first failure stops the others.
  // Files of undeclared size first, so the total is right early.
  const queue = [...missing].sort((a, b) => Number(a.bytes !== null) - Number(b.bytes !== null));
  for (const scope of new Set(queue.map((a) => a.scope))) store.prepare?.(scope);
  let next = 0;
  ctx.pool = new BufferPool();
  const governor = new StreamGovernor(Math.max(1, options.concurrency ?? 6), () => fetchedBytes);
  const commits: Array<Promise<void>> = [];

  const stored = async (artifact: Artifact, bytes: number) => {
    const known = learned.get(artifact);
    if (known && known.unstored) {
      unstoredBytes -= known.rest;
      known.unstored = false;
    }
    sizes.set(artifact.url, bytes);
    progress.add(0, artifact.name, true);
    await options.onStored?.(artifact, bytes);
  };
  // A GGUF's size is known once its response says: the quota is checked for what of it is not stored yet (a
  // resumed file's rest), together with the parts of a split GGUF declared and not yet stored (they download at
  // once), and the total takes it (an ETA from the start).
  const learned = new Map<Artifact, { declared: number; rest: number; counted: number; arrived: number; unstored: boolean }>();
  let unstoredBytes = 0;
  ctx.onLength = async (artifact, bytes, stored) => {
    if (artifact.kind !== "gguf" || learned.has(artifact)) return;
    const rest = bytes - stored;
    await ensureRoom(unstoredBytes + rest, record.model_id);
    if (learned.has(artifact)) return;
    learned.set(artifact, { declared: bytes, rest, counted: bytes, arrived: 0, unstored: true });
    unstoredBytes += rest;
    progress.grow(bytes);
  };
  // A resumed GGUF's stored bytes count as loaded at once, not as line time: the fraction starts there, the rate and ETA come from the new bytes.
  ctx.onResumed = (artifact, bytes) => {
    const known = learned.get(artifact);
    if (known) known.arrived += bytes;
    progress.addFetchedEarlier(bytes, artifact.name);
  };
  const onBytes = (artifact: Artifact) => (n: number) => {
    const known = learned.get(artifact);
    if (known) {
      // Counted: the declared length, or more if more came (the check then refuses the file).
      known.arrived += n;
      const counted = Math.max(known.declared, known.arrived);
      progress.grow(counted - known.counted);
      known.counted = counted;
    } else if (artifact.bytes === null) {
      // A file of undeclared size widens the total as it arrives (and narrows it when an attempt is discarded).
      progress.grow(n);
    }
    progress.add(n, artifact.name);
  };

  /** A file's commit goes on while the next file downloads; the oldest must land before more than MAX_PENDING_COMMITS pile up. */
  const committing = async (artifact: Artifact, size: number, committed: Promise<void>, lastByteAt: number) => {
    const done = committed.then(() => {
      progress.committed((performance.now() - lastByteAt) / 1000);
      return stored(artifact, size);
    });
    commits.push(done);
    done.catch(() => undefined);
    while (commits.length > MAX_PENDING_COMMITS) await commits.shift();
  };

  const downloadOne = async (artifact: Artifact) => {
    if (store.openWrite && (store.streamsInto?.(artifact.scope) ?? true)) {
      const { size, committed } = await streamWithRetries(artifact, ctx, store, onBytes(artifact), record.model_id);
      await committing(artifact, size, committed, performance.now());
      return;
    }
    const reserved = artifact.bytes ?? 0;
    await budget.acquire(reserved, signal);
    let size: number;
    let committed: Promise<void>;
    let reusable: ArrayBuffer | null;
    let lastByteAt: number;
    try {
      const bytes = await fetchWithRetries(artifact, ctx, onBytes(artifact));
      lastByteAt = performance.now();
      // Read the sizes now: once the buffer is transferred to the store's worker, or handed by the pool to the next shard's read, this view is detached (length 0).
      size = bytes.byteLength;
      const held = bytes.buffer.byteLength;
      try {
        let buffer: ArrayBuffer | undefined;
        ({ committed, buffer } = await submitArtifact(store, artifact, bytes, record.model_id));
        reusable = buffer ?? (size === held ? (bytes.buffer as ArrayBuffer) : null);
      } finally {
        hold(gauge, -held);
      }
    } finally {
      budget.release(reserved);
    }
    // The store has its own copy now (IndexedDB cloned it in put()): the buffer takes the next shard while this one commits.
    if (reusable) ctx.pool?.give(reusable);
    // Bounds the clones waiting for disk.
    await committing(artifact, size, committed, lastByteAt);
  };

  const worker = async (slot: number) => {
    for (;;) {
      if (next >= queue.length || !(await governor.enter(slot, signal))) break;
      if (next >= queue.length) {
        governor.leave();
        break;
      }
      const artifact = queue[next++];
      try {
        await downloadOne(artifact);
      } finally {
        governor.leave();
      }
    }
    // No file left to start: slots still waiting for their turn may end.
    governor.stop();
  };
  const workers = Array.from({ length: Math.min(governor.max, queue.length) }, (_, slot) =>
    worker(slot).catch((error) => {
      controller.abort();
      governor.stop();
      throw error;
    }),
  );
  const results = await Promise.allSettled(workers);
  governor.stop();
  const commitResults = await Promise.allSettled(commits);
  const causes = [...results, ...commitResults].filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => r.reason);
  // Report the first real cause, not the aborts it caused in the other workers.
  if (causes.length > 0) throw causes.find((c) => !isAbortError(c) || options.signal?.aborted) ?? causes[0];
  progress.report(null);
  let totalBytes = 0;
  for (const size of sizes.values()) totalBytes += size;
  return { plan, fetchedBytes, totalBytes, sizes, healed, peakBufferedBytes: gauge.peak, quotaChecked, peakConcurrency: governor.peak };
}

/** MLC's file list: the config and tensor index read from the cache when web-llm can read them there, else fetched into memory (`pending`: to be written first). */
async function planMlc(record: ModelRecord, store: ArtifactStore, fetchSmall: (artifact: Artifact) => Promise<Uint8Array>, healed: string[]): Promise<{ plan: ArtifactPlan; pending: Array<{ artifact: Artifact; bytes: Uint8Array }> }> {
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
      bytes = await fetchSmall(pkg);
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
    configBytes = await fetchSmall(manifest.config);
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
    const bytes = await fetchSmall(manifest.index);
    index = parseTensorIndex(parseJson(bytes, manifest.index.url), manifest.index.url);
    indexSize = bytes.byteLength;
    pending.push({ artifact: manifest.index, bytes });
  }
  return { plan: planArtifacts(record, config, index, { config: configBytes.byteLength, index: indexSize, package: packageSize }, paths), pending };
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

/** The artifacts the store lacks: one key listing per scope where that tells (IndexedDB, Cache API), else a check per file. */
async function missingOf(store: ArtifactStore, artifacts: Artifact[]): Promise<Artifact[]> {
  if (store.backend === "opfs") {
    const present = await Promise.all(artifacts.map((a) => store.has(a.scope, a.url)));
    return artifacts.filter((_, i) => !present[i]);
  }
  const keys = new Map<Scope, Set<string>>();
  for (const scope of new Set(artifacts.map((a) => a.scope))) keys.set(scope, new Set(await store.urls(scope)));
  return artifacts.filter((a) => !keys.get(a.scope)?.has(a.url));
}

function parseJson(bytes: Uint8Array, url: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ApiError({ status: 502, code: "invalid_artifact", param: "model", message: `${url} is not valid JSON; check the model's URL.` });
  }
}
