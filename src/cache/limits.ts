/**
 * Bounds on what a model host can make the downloader hold or wait for. Sizes
 * a host declares (`content-length`, a shard's `nbytes`) are promises, not
 * facts: buffers grow as bytes actually arrive, in steps of at most
 * `GROWTH_STEP`, and a file larger than its kind may be is refused.
 */
import type { ArtifactKind } from "./artifacts.js";

const MiB = 1024 * 1024;

/**
 * Largest file of each kind the downloader accepts. Far above real models
 * (an MLC chat config is a few KB, a tensor index under 2 MB, a tokenizer
 * under 20 MB, a model library under 100 MB); shards are bounded by the
 * size the index declares for them.
 */
export const MAX_FILE_BYTES: Record<Exclude<ArtifactKind, "shard">, number> = {
  package: 4 * MiB,
  config: 4 * MiB,
  "tensor-index": 64 * MiB,
  tokenizer: 64 * MiB,
  wasm: 512 * MiB,
  // wllama's own limit per GGUF file (an ArrayBuffer's); larger models come split (`-00001-of-0000N.gguf`).
  gguf: 2048 * MiB,
};

/** A buffer grows by at most this much at a time (the first allocation included). */
export const GROWTH_STEP = 8 * MiB;

/** Default for `stallTimeoutMs`: a read that brings no byte for this long is abandoned. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** The most a file may hold: its declared size when the model declares one (shards), else its kind's cap. */
export function maxBytesOf(kind: ArtifactKind, declared: number | null): number {
  if (declared !== null) return declared;
  return kind === "shard" ? 0 : MAX_FILE_BYTES[kind];
}
