/**
 * Fetching one file of a model: attempts with retries, a watchdog on stalled
 * reads, checks computed as the bytes stream in (hashing.ts), and the two
 * ways bytes reach the store (downloader.ts explains when each is used):
 * into one growing buffer, or streamed into the store as they arrive.
 */
import { ApiError, abortError, isAbortError } from "../protocol/api-error.js";
import type { Artifact } from "./artifacts.js";
import { FileCheck } from "./hashing.js";
import { GROWTH_STEP, maxBytesOf } from "./limits.js";
import { insufficientStorage, storageReport } from "./quota.js";
import type { ArtifactStore, StreamingWrite } from "./store.js";
import { hold, type BufferGauge, type BufferPool } from "./download-buffers.js";

/** The first allocation for a body of unknown length (then doubled). */
const FIRST_BUFFER = 64 * 1024;

/** A failed check of a file's bytes (retried; distinct from network errors). */
export class IntegrityMismatch extends Error {
  override name = "IntegrityMismatch";
}

/** A response the server will give again (4xx, a file over its size cap): not retried. */
export class PermanentFetchError extends Error {
  override name = "PermanentFetchError";
}

/** No byte arrived for the stall period (retried like a network error). */
class StalledRead extends Error {
  override name = "StalledRead";
}

/** What one file's attempts share. */
export interface FetchContext {
  signal: AbortSignal;
  retries: number;
  stallTimeoutMs: number;
  gauge: BufferGauge;
  pool: BufferPool | null;
  onFetched(n: number): void;
  /**
   * A response declared the length of a file of undeclared size (a GGUF's `content-length`): the quota is
   * checked and the progress total takes it early, for an ETA. `stored`: bytes of it already stored, which
   * the response continues (a resumed GGUF, resumable-fetch.ts): the quota counts only the rest.
   */
  onLength?(artifact: Artifact, bytes: number, stored: number): Promise<void> | void;
  /** `bytes` of a file were already stored and count as loaded (a resumed GGUF; negative: the attempt failed, taken back). */
  onResumed?(artifact: Artifact, bytes: number): void;
}

function quotaError(error: unknown): boolean {
  return (error as { name?: string })?.name === "QuotaExceededError";
}

/** `commit`, with a quota failure turned into 507 naming the file (the model stays incomplete and resumes). */
export function storing(commit: Promise<void>, artifact: Artifact, bytes: number, modelId: string): Promise<void> {
  return commit.catch(async (error) => {
    if (!quotaError(error)) throw error;
    const { free } = await storageReport().catch(() => ({ free: null }));
    throw insufficientStorage(modelId, bytes, free, ` Writing ${artifact.name} failed; the model stays marked incomplete and resumes from here.`);
  });
}

/** Commits one file; a quota failure becomes 507. */
export async function writeArtifact(store: ArtifactStore, artifact: Artifact, bytes: Uint8Array, modelId: string): Promise<void> {
  return storing(store.write(artifact.scope, artifact.url, bytes, artifact.storeType), artifact, bytes.byteLength, modelId);
}

/**
 * Hands one file to the store; resolves once the buffer may be reused, to the
 * commit (a quota failure there becomes 507) and, when the store took the
 * buffer by transfer, the buffer given back.
 */
export async function submitArtifact(store: ArtifactStore, artifact: Artifact, bytes: Uint8Array, modelId: string): Promise<{ committed: Promise<void>; buffer?: ArrayBuffer }> {
  if (!store.submit) {
    await writeArtifact(store, artifact, bytes, modelId);
    return { committed: Promise.resolve() };
  }
  const size = bytes.byteLength;
  const { committed, buffer } = await store.submit(artifact.scope, artifact.url, bytes, artifact.storeType);
  return { buffer, committed: storing(committed, artifact, size, modelId) };
}

/** Runs attempts of one file, retrying network errors, stalls and failed checks; the last error becomes 503 naming the file. */
export async function withRetries<T>(artifact: Artifact, ctx: FetchContext, onBytes: ((n: number) => void) | null, attempt: (onBytes: (n: number) => void, onResumed: (n: number) => void) => Promise<T>): Promise<T> {
  let lastError: unknown;
  for (let tries = 0; tries <= ctx.retries; tries++) {
    if (ctx.signal.aborted) throw abortError();
    let received = 0;
    let resumed = 0;
    try {
      return await attempt(
        (n) => {
          received += n;
          ctx.onFetched(n);
          onBytes?.(n);
        },
        (n) => {
          resumed += n;
          ctx.onResumed?.(artifact, n);
        },
      );
    } catch (error) {
      if (received > 0) onBytes?.(-received);
      if (resumed > 0) ctx.onResumed?.(artifact, -resumed);
      if (ctx.signal.aborted || (isAbortError(error) && !(error instanceof StalledRead))) throw abortError();
      if (error instanceof ApiError) throw error;
      lastError = error;
      if (error instanceof PermanentFetchError) break;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
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

export function fetchWithRetries(artifact: Artifact, ctx: FetchContext, onBytes: ((n: number) => void) | null): Promise<Uint8Array> {
  return withRetries(artifact, ctx, onBytes, (count) => fetchOnce(artifact, ctx, count));
}

/** A streamed file whose bytes all reached the store and passed the checks; `committed` settles when the store has made it visible. */
export interface StreamedFile {
  size: number;
  committed: Promise<void>;
}

/**
 * A response body read under a stall watchdog: `read()` rejects with
 * StalledRead when no byte came for `stallTimeoutMs` (the request is
 * aborted, so the connection is freed).
 */
export class WatchedResponse {
  private lastByte = performance.now();
  private stalled = false;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly abort = new AbortController();
  /** Rejects when the watchdog fires or the download is aborted: every wait on the host races it. */
  private readonly interrupted: Promise<never>;
  readonly signal: AbortSignal;

  constructor(
    private readonly artifact: Artifact,
    private readonly ctx: FetchContext,
  ) {
    this.signal = AbortSignal.any([ctx.signal, this.abort.signal]);
    this.interrupted = new Promise<never>((_, reject) => {
      const interrupt = () => reject(this.explain(abortError()));
      if (this.signal.aborted) interrupt();
      else this.signal.addEventListener("abort", interrupt, { once: true });
    });
    this.interrupted.catch(() => undefined);
    const period = ctx.stallTimeoutMs;
    this.timer = setInterval(() => {
      if (performance.now() - this.lastByte < period) return;
      this.stalled = true;
      this.abort.abort();
    }, Math.max(10, Math.min(1000, period / 4)));
  }

  /** Bytes arrived: the watchdog starts over. */
  alive(): void {
    this.lastByte = performance.now();
  }

  /** `wait`, unless the host stalls or the download is aborted first (a body stream does not always end when its request is aborted). */
  guard<T>(wait: Promise<T>): Promise<T> {
    return Promise.race([wait, this.interrupted]);
  }

  /** The error to report for `error`: the stall when the watchdog fired. */
  explain(error: unknown): unknown {
    if (!this.stalled || this.ctx.signal.aborted) return error;
    return new StalledRead(`no data arrived for ${this.ctx.stallTimeoutMs / 1000} s while reading ${this.artifact.name} (the host stalled)`);
  }

  /** Bytes of the file before the response's first byte: those stored, when a Range request was answered with the rest (see `fetch`). */
  from = 0;

  /**
   * The file's response. With `resume`, the request carries its headers (a
   * Range request) and `decide` says whether the answer continues the stored
   * bytes (`from` is then their count), is the whole file, or is of no use:
   * then the file is asked for again without them.
   */
  async fetch(resume?: { headers: Record<string, string>; bytes: number; decide(response: Response): "continue" | "whole" | "refetch" }): Promise<Response> {
    try {
      // no-store: the weights live in web-llm's cache; a second copy in the HTTP cache would double the disk use.
      // credentials: "omit": a model host gets no cookie of the user's, on the app's origin or any other (url-policy.ts).
      let response = await this.guard(fetch(this.artifact.url, { signal: this.signal, cache: "no-store", credentials: "omit", ...(resume ? { headers: resume.headers } : {}) }));
      this.alive();
      this.from = 0;
      if (resume) {
        const action = resume.decide(response);
        if (action === "continue") this.from = resume.bytes;
        else if (action === "refetch") {
          await response.body?.cancel().catch(() => undefined);
          response = await this.guard(fetch(this.artifact.url, { signal: this.signal, cache: "no-store", credentials: "omit" }));
          this.alive();
        }
      }
      if (!response.ok) {
        const message = `the server answered ${response.status} ${response.statusText}`.trim();
        await response.body?.cancel().catch(() => undefined);
        throw response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429 ? new PermanentFetchError(message) : new Error(message);
      }
      // A declared length over the cap is refused before a byte is read (not retried: the host would say the same).
      // A resumed file's response declares the rest: the cap and the total are of the whole file.
      const declared = Number(response.headers.get("content-length")) + this.from;
      const cap = maxBytesOf(this.artifact.kind, this.artifact.bytes);
      if (this.artifact.bytes === null && declared > cap) {
        await response.body?.cancel().catch(() => undefined);
        throw tooLarge(this.artifact, cap);
      }
      if (this.artifact.bytes === null && declared > this.from && this.ctx.onLength) {
        try {
          await this.ctx.onLength(this.artifact, declared, this.from);
        } catch (error) {
          await response.body?.cancel().catch(() => undefined);
          throw error;
        }
      }
      return response;
    } catch (error) {
      throw this.explain(error);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}

export function tooLarge(artifact: Artifact, cap: number): PermanentFetchError {
  return artifact.bytes !== null
    ? new IntegrityMismatch(`${artifact.name}: the server sent more than the declared ${artifact.bytes} bytes`)
    : new PermanentFetchError(`${artifact.name} is larger than the ${cap / (1024 * 1024)} MiB a ${artifact.kind} file may be`);
}

/**
 * One attempt into one buffer. The buffer starts small (or is a pooled
 * buffer of the declared size, which an earlier verified file filled) and
 * grows as bytes arrive, doubling but by at most GROWTH_STEP at a time, never
 * past the declared size or the kind's cap. `content-length` only decides
 * where a growth stops when the body is that long, never what is allocated
 * ahead of the bytes. The returned bytes stay counted in `gauge` until the
 * caller releases them.
 */
async function fetchOnce(artifact: Artifact, ctx: FetchContext, onBytes: (n: number) => void): Promise<Uint8Array> {
  const watch = new WatchedResponse(artifact, ctx);
  const check = await FileCheck.start(artifact);
  const cap = maxBytesOf(artifact.kind, artifact.bytes);
  let hint = artifact.bytes ?? cap;
  let buffer = (artifact.bytes !== null ? ctx.pool?.take(artifact.bytes) : null) ?? new ArrayBuffer(0);
  let held = buffer.byteLength;
  hold(ctx.gauge, held);
  let length = 0;
  /** Room for at least one more byte: the buffer grown when full. */
  const room = () => {
    if (length < buffer.byteLength) return;
    if (length >= cap) throw tooLarge(artifact, cap);
    let size = Math.min(cap, buffer.byteLength + Math.max(FIRST_BUFFER, Math.min(buffer.byteLength, GROWTH_STEP)));
    if (hint > length && hint < size) size = hint;
    const grown = new ArrayBuffer(size);
    new Uint8Array(grown).set(new Uint8Array(buffer, 0, length));
    hold(ctx.gauge, grown.byteLength - held);
    held = grown.byteLength;
    buffer = grown;
  };
  let reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array> | null = null;
  try {
    const response = await watch.fetch();
    const declared = Number(response.headers.get("content-length"));
    if (artifact.bytes === null && declared > 0 && declared <= cap) hint = declared;
    const body = response.body as ReadableStream<Uint8Array> | null;
    if (body) {
      const byob = byobReader(body);
      reader = byob ?? body.getReader();
      for (;;) {
        room();
        let chunk: Uint8Array;
        if (byob) {
          // Straight into the buffer: no per-chunk allocation.
          const { done, value } = await watch.guard(byob.read(new Uint8Array(buffer, length, Math.min(buffer.byteLength - length, 1 << 20))));
          // The read transfers the buffer, also the last one (done, with an empty view): keep the returned one.
          if (value) buffer = value.buffer as ArrayBuffer;
          if (done || !value) break;
          chunk = value;
          length += value.byteLength;
        } else {
          const { done, value } = await watch.guard((reader as ReadableStreamDefaultReader<Uint8Array>).read());
          if (done) break;
          chunk = value;
          // A chunk may straddle growth steps.
          for (let at = 0; at < value.byteLength; ) {
            room();
            const take = Math.min(value.byteLength - at, buffer.byteLength - length);
            new Uint8Array(buffer, length, take).set(value.subarray(at, at + take));
            length += take;
            at += take;
          }
        }
        watch.alive();
        check.update(chunk);
        onBytes(chunk.byteLength);
        if (byob && artifact.bytes !== null && length === artifact.bytes) {
          // The declared size is reached: anything more is an error, checked without allocating.
          const probe = await watch.guard(byob.read(new Uint8Array(1)));
          if (!probe.done) throw tooLarge(artifact, cap);
          break;
        }
      }
    }
    if (artifact.bytes !== null && length < artifact.bytes) throw new Error(`the connection closed after ${length} of ${artifact.bytes} bytes`);
    const bytes = length === buffer.byteLength ? new Uint8Array(buffer) : new Uint8Array(buffer, 0, length);
    const problem = await check.problem(check.needsWholeFile ? bytes : undefined);
    if (problem) throw new IntegrityMismatch(problem);
    return bytes;
  } catch (error) {
    check.release();
    hold(ctx.gauge, -held);
    await reader?.cancel().catch(() => undefined);
    throw watch.explain(error);
  } finally {
    watch.close();
    reader?.releaseLock();
  }
}

/**
 * One attempt streamed into the store: each chunk is checked and written as
 * it arrives; the entry is committed only when every check passed, else
 * aborted (nothing stored). Resolves once every byte is in and checked, with
 * the commit still running: the store finishes writing while the caller's
 * next file downloads (waiting for it here left a stream idle ~0.2 s per
 * 32 MB shard on the Cache API).
 */
export async function streamOnce(artifact: Artifact, ctx: FetchContext, store: ArtifactStore, onBytes: (n: number) => void, modelId: string): Promise<StreamedFile> {
  const check = await FileCheck.start(artifact);
  if (check.needsWholeFile) {
    // SRI without WebAssembly is checked over the whole file (WebCrypto): the buffered path.
    check.release();
    const bytes = await fetchOnce(artifact, ctx, onBytes);
    try {
      await writeArtifact(store, artifact, bytes, modelId);
    } finally {
      hold(ctx.gauge, -bytes.buffer.byteLength);
    }
    return { size: bytes.byteLength, committed: Promise.resolve() };
  }
  const watch = new WatchedResponse(artifact, ctx);
  const cap = maxBytesOf(artifact.kind, artifact.bytes);
  let sink: StreamingWrite | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let length = 0;
  try {
    const response = await watch.fetch();
    sink = await (store.openWrite as NonNullable<ArtifactStore["openWrite"]>)(artifact.scope, artifact.url, artifact.storeType, artifact.bytes);
    reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader() ?? null;
    const into = sink;
    if (reader) length = await pumpBody(reader, { watch, artifact, ctx, check, cap, onBytes }, length, (chunk) => into.write(chunk));
    if (artifact.bytes !== null && length < artifact.bytes) throw new Error(`the connection closed after ${length} of ${artifact.bytes} bytes`);
    const problem = await check.problem();
    if (problem) throw new IntegrityMismatch(problem);
    const committed = storing(sink.commit(), artifact, length, modelId);
    committed.catch(() => undefined);
    sink = null;
    return { size: length, committed };
  } catch (error) {
    check.release();
    await sink?.abort();
    await reader?.cancel().catch(() => undefined);
    throw watch.explain(error);
  } finally {
    watch.close();
    reader?.releaseLock();
  }
}

/** What a body is pumped under: the watchdog, the file's checks, its size cap, progress and the buffer gauge. */
export interface PumpContext {
  watch: WatchedResponse;
  artifact: Artifact;
  ctx: FetchContext;
  check: FileCheck;
  cap: number;
  onBytes: (n: number) => void;
}

/**
 * Reads a body to its end under the stall watchdog into `write`: each chunk
 * is bounded by the cap, checked, counted and held against the buffer gauge
 * while it is written (`write` gets the file's length with it). `length` is
 * where the file stands before the body (a resumed prefix); returns where it ends.
 */
export async function pumpBody(reader: ReadableStreamDefaultReader<Uint8Array>, p: PumpContext, length: number, write: (chunk: Uint8Array, length: number) => Promise<void>): Promise<number> {
  for (;;) {
    const { done, value } = await p.watch.guard(reader.read());
    if (done) return length;
    p.watch.alive();
    if (length + value.byteLength > p.cap) throw tooLarge(p.artifact, p.cap);
    p.check.update(value);
    length += value.byteLength;
    p.onBytes(value.byteLength);
    hold(p.ctx.gauge, value.byteLength);
    try {
      await p.watch.guard(write(value, length));
    } finally {
      hold(p.ctx.gauge, -value.byteLength);
    }
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
