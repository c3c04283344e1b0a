/**
 * One attempt at a GGUF file that resumes inside the file: the bytes a
 * previous attempt or load stored (gguf-parts.ts) are hashed again, the
 * server is asked for the rest with `Range: bytes=N-`, and its answer is
 * spliced on only when it is exactly that rest of the same file
 * (range-resume.ts); otherwise the stored bytes go and the file starts over
 * from byte 0. The SHA-256 the record pins covers the whole file, the stored
 * prefix included; the 2 GiB cap, the stall watchdog and abort hold as for any
 * file (file-fetch.ts).
 */
import type { Artifact } from "./artifacts.js";
import { hold } from "./download-buffers.js";
import { IntegrityMismatch, PermanentFetchError, WatchedResponse, pumpBody, storing, streamOnce, withRetries, type FetchContext, type StreamedFile } from "./file-fetch.js";
import { PartsWrite, discardStored, storedPrefix, storesParts } from "./gguf-parts.js";
import { FileCheck } from "./hashing.js";
import { maxBytesOf } from "./limits.js";
import { decideResume, keepable, rangeHeaders, validatorOf } from "./range-resume.js";
import type { ArtifactStore } from "./store.js";

type PartsStore = ArtifactStore & Required<Pick<ArtifactStore, "openWrite" | "readBlob">>;

/** Feeds the stored prefix to the file's checks, so they cover the whole file (read from disk, part by part). */
async function hashStored(blobs: Blob[], check: FileCheck, watch: WatchedResponse): Promise<void> {
  for (const blob of blobs) {
    const reader = blob.stream().getReader();
    try {
      for (;;) {
        const { done, value } = await watch.guard(reader.read());
        if (done) break;
        watch.alive();
        check.update(value);
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }
}

export async function streamResumableOnce(artifact: Artifact, ctx: FetchContext, store: PartsStore, onBytes: (n: number) => void, onResumed: (n: number) => void, modelId: string): Promise<StreamedFile> {
  let check = await FileCheck.start(artifact);
  if (check.needsWholeFile) {
    // SRI without WebAssembly is checked over the whole file at its end (WebCrypto): the file is fetched whole, not resumed.
    check.release();
    return streamOnce(artifact, ctx, store, onBytes, modelId);
  }
  const watch = new WatchedResponse(artifact, ctx);
  const cap = maxBytesOf(artifact.kind, artifact.bytes);
  const stored = await storedPrefix(store, artifact);
  let parts: PartsWrite | null = null;
  let keep = false;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let length = 0;
  try {
    if (stored) await hashStored(stored.blobs, check, watch);
    const response = await watch.fetch(stored ? { headers: rangeHeaders(stored.prefix), bytes: stored.prefix.bytes, decide: (r) => decideResume(stored.prefix, r).action } : undefined);
    const resumed = watch.from > 0 && stored !== null;
    const file = resumed ? stored.prefix : { total: Number(response.headers.get("content-length")), validator: validatorOf(response.headers) };
    if (resumed) {
      length = watch.from;
      onResumed(length);
    } else if (stored) {
      // Not continued: the stored bytes go, and the checks start over with the new body.
      await discardStored(store, artifact);
      check.release();
      check = await FileCheck.start(artifact);
    }
    parts = new PartsWrite(store, artifact, file, resumed ? stored.blobs.map((b) => b.size) : []);
    // Kept after a failure only where the next load can tell the same file again (its size, and its validator or a pinned hash).
    keep = file.total > 0 && keepable(file.validator, artifact.sri !== undefined);
    reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader() ?? null;
    const into = parts;
    if (reader) length = await pumpBody(reader, { watch, artifact, ctx, check, cap, onBytes }, length, (chunk, n) => storing(into.write(chunk), artifact, n, modelId));
    if (resumed && length !== file.total) throw new Error(`the connection closed after ${length} of ${file.total} bytes`);
    const problem = await check.problem();
    if (problem) {
      keep = false;
      throw new IntegrityMismatch(problem);
    }
    const committed = storing(parts.finish(), artifact, length, modelId);
    committed.catch(() => undefined);
    parts = null;
    return { size: length, committed };
  } catch (error) {
    check.release();
    await reader?.cancel().catch(() => undefined);
    if (parts) {
      // A dropped connection, a stall, an abort: the bytes that arrived are good and stay; a file refused for what it is does not.
      const worthKeeping = keep && !(error instanceof IntegrityMismatch) && !(error instanceof PermanentFetchError);
      const written = parts;
      await (worthKeeping ? written.keep() : written.discard()).catch(() => written.discard().catch(() => undefined));
    }
    throw watch.explain(error);
  } finally {
    watch.close();
    reader?.releaseLock();
  }
}

/**
 * Streams one file into the store, with file-fetch's retries: a GGUF, where
 * the store keeps parts, goes in parts and resumes with a Range request;
 * anything else streams whole (file-fetch's `streamOnce`). It lives here, not
 * in file-fetch.ts, so that imports run one way (this module builds on that one).
 */
export function streamWithRetries(artifact: Artifact, ctx: FetchContext, store: ArtifactStore, onBytes: (n: number) => void, modelId: string): Promise<StreamedFile> {
  return withRetries(artifact, ctx, onBytes, (count, resumed) =>
    artifact.kind === "gguf" && storesParts(store) ? streamResumableOnce(artifact, ctx, store, count, resumed, modelId) : streamOnce(artifact, ctx, store, count, modelId),
  );
}
