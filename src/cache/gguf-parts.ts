/**
 * A GGUF file stored in parts, so that what a download has stored survives
 * it: a closed tab, a dropped connection, an abort. In each backend a part is
 * an ordinary entry of the `wllama/gguf` scope (an IndexedDB record holding a
 * Blob, a Cache API response, an OPFS file), under the file's URL with
 * `?webgpu-openai-part=<n>`, streamed in and committed every PART_BYTES (and
 * when an attempt fails), so at most one part's bytes are lost when the page
 * goes away mid-download.
 *
 * - While the download runs, `…?webgpu-openai-part=meta` records the parts
 *   stored, the file's size and its validator (range-resume.ts): the next
 *   load asks for the rest with a Range request.
 * - Once the file is whole and its hash checked, a small manifest is stored
 *   under the file's own URL: the file is then present for `has` and `urls`,
 *   and `readStoredGguf` gives the parts as one Blob (disk-backed parts: no
 *   copy of the file is made, neither in memory nor on disk).
 *
 * A GGUF stored whole under its URL (before parts existed) is read as it is.
 */
import type { Artifact } from "./artifacts.js";
import type { Scope } from "./layout.js";
import type { StoredPrefix, Validator } from "./range-resume.js";
import type { ArtifactStore, StreamingWrite } from "./store.js";

/** Bytes of one part: at most this much is lost when the page closes mid-download; a 2 GiB file has 128 parts. */
export const PART_BYTES = 16 * 1024 * 1024;

const PART = "webgpu-openai-part";
const MANIFEST_KIND = "webgpu-openai/gguf-parts";
/** A manifest is a few KB; anything larger under the URL is a GGUF stored whole. */
const MAX_MANIFEST_BYTES = 64 * 1024;

const partKey = (url: string, n: number) => `${url}?${PART}=${n}`;
const metaKey = (url: string) => `${url}?${PART}=meta`;
const isPartOf = (url: string) => (key: string) => key.startsWith(`${url}?${PART}=`);

/** The meta record of a partly stored file. */
interface PartialMeta extends Omit<StoredPrefix, "bytes"> {
  kind: typeof MANIFEST_KIND;
  /** Bytes of each stored part, in order. */
  parts: number[];
}

/** The manifest under a whole file's URL. */
interface Manifest {
  kind: typeof MANIFEST_KIND;
  bytes: number;
  parts: number[];
}

/** Stores on which files are kept in parts: those that stream writes and read Blobs back (all three backends). */
export function storesParts(store: ArtifactStore): store is ArtifactStore & Required<Pick<ArtifactStore, "openWrite" | "readBlob">> {
  return typeof store.openWrite === "function" && typeof store.readBlob === "function";
}

async function readJson<T extends { kind?: unknown }>(store: ArtifactStore, scope: Scope, key: string): Promise<T | null> {
  const blob = await store.readBlob?.(scope, key);
  if (!blob || blob.size > MAX_MANIFEST_BYTES || blob.size === 0) return null;
  const head = new Uint8Array(await blob.slice(0, 1).arrayBuffer());
  if (head[0] !== 0x7b /* { */) return null;
  try {
    const value = JSON.parse(await blob.text()) as T;
    return value?.kind === MANIFEST_KIND ? value : null;
  } catch {
    return null;
  }
}

function writeJson(store: ArtifactStore, scope: Scope, key: string, value: unknown): Promise<void> {
  return store.write(scope, key, new TextEncoder().encode(JSON.stringify(value)), "arraybuffer");
}

/** The parts named by `sizes`, as Blobs; null when one is missing or not of its recorded size. */
async function readParts(store: ArtifactStore, scope: Scope, url: string, sizes: number[]): Promise<Blob[] | null> {
  const blobs: Blob[] = [];
  for (let n = 0; n < sizes.length; n++) {
    const blob = await store.readBlob?.(scope, partKey(url, n));
    if (!blob || blob.size !== sizes[n]) return null;
    blobs.push(blob);
  }
  return blobs;
}

/** A whole stored GGUF as one Blob: its parts joined, or the file stored whole under its URL. */
export async function readStoredGguf(store: ArtifactStore, scope: Scope, url: string): Promise<Blob | undefined> {
  const manifest = await readJson<Manifest>(store, scope, url);
  if (!manifest) return store.readBlob?.(scope, url);
  const parts = await readParts(store, scope, url, manifest.parts);
  return parts ? new Blob(parts) : undefined;
}

/** Removes a stored GGUF: the entry under its URL, its parts and its meta record (found by listing, so none is left over). */
export async function removeStoredGguf(store: ArtifactStore, scope: Scope, url: string): Promise<void> {
  await store.remove(scope, url);
  await removeParts(store, scope, url);
}

async function removeParts(store: ArtifactStore, scope: Scope, url: string): Promise<void> {
  for (const key of (await store.urls(scope)).filter(isPartOf(url))) await store.remove(scope, key);
}

/** Removes what a previous download left of the file (its parts and meta record), before it starts over. */
export function discardStored(store: ArtifactStore, artifact: Artifact): Promise<void> {
  return removeParts(store, artifact.scope, artifact.url);
}

/** What a previous download left of the file: the stored prefix and its parts as Blobs (null: nothing usable, and nothing is left over). */
export async function storedPrefix(store: ArtifactStore, artifact: Artifact): Promise<{ prefix: StoredPrefix; blobs: Blob[] } | null> {
  const meta = await readJson<PartialMeta>(store, artifact.scope, metaKey(artifact.url));
  const blobs = meta && Array.isArray(meta.parts) ? await readParts(store, artifact.scope, artifact.url, meta.parts) : null;
  const bytes = blobs?.reduce((sum, b) => sum + b.size, 0) ?? 0;
  if (!meta || !blobs || bytes === 0 || bytes >= meta.total) {
    if (meta || blobs) await removeParts(store, artifact.scope, artifact.url);
    return null;
  }
  return { prefix: { bytes, total: meta.total, validator: meta.validator ?? {} }, blobs };
}

/**
 * The write of one file in parts, continuing after `parts` already stored. A
 * part is streamed into the store as bytes arrive and committed when it is
 * full; `keep` commits the part in progress (an attempt failed: its bytes are
 * good, and stay for the next attempt); `finish` makes the file whole.
 */
export class PartsWrite {
  private readonly parts: number[];
  private current: StreamingWrite | null = null;
  private currentBytes = 0;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly store: ArtifactStore & Required<Pick<ArtifactStore, "openWrite">>,
    private readonly artifact: Artifact,
    private readonly file: { total: number; validator: Validator },
    parts: readonly number[],
    private readonly partBytes = PART_BYTES,
  ) {
    this.parts = [...parts];
  }

  async write(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.byteLength; ) {
      if (!this.current) {
        this.current = await this.store.openWrite(this.artifact.scope, partKey(this.artifact.url, this.parts.length), this.artifact.storeType, null);
        this.currentBytes = 0;
      }
      const take = Math.min(chunk.byteLength - at, this.partBytes - this.currentBytes);
      // Counted before it lands: an attempt interrupted meanwhile (abort, stall) still commits the chunk in `keep`, which waits for it.
      this.currentBytes += take;
      this.pending = this.current.write(at === 0 && take === chunk.byteLength ? chunk : chunk.subarray(at, at + take));
      await this.pending;
      at += take;
      if (this.currentBytes === this.partBytes) await this.commitPart();
    }
  }

  /** Commits the part in progress and records it in the meta record. */
  private async commitPart(): Promise<void> {
    const part = this.current;
    if (!part) return;
    this.current = null;
    // A write the caller stopped waiting for (abort, stall) lands first; a failed one fails the commit.
    await this.pending;
    if (this.currentBytes === 0) return part.abort();
    await part.commit();
    this.parts.push(this.currentBytes);
    const meta: PartialMeta = { kind: MANIFEST_KIND, total: this.file.total, validator: this.file.validator, parts: this.parts };
    await writeJson(this.store, this.artifact.scope, metaKey(this.artifact.url), meta);
  }

  /** The attempt failed: what arrived stays stored, for the next attempt's Range request. */
  async keep(): Promise<void> {
    await this.commitPart();
  }

  /** The attempt failed in a way that makes its bytes worthless (a failed check): nothing of the file stays. */
  async discard(): Promise<void> {
    await this.current?.abort().catch(() => undefined);
    this.current = null;
    await removeParts(this.store, this.artifact.scope, this.artifact.url);
  }

  /** Every byte is in and checked: the last part is committed and the manifest makes the file present. */
  async finish(): Promise<void> {
    await this.commitPart();
    const manifest: Manifest = { kind: MANIFEST_KIND, bytes: this.parts.reduce((sum, n) => sum + n, 0), parts: this.parts };
    await writeJson(this.store, this.artifact.scope, this.artifact.url, manifest);
    await this.store.remove(this.artifact.scope, metaKey(this.artifact.url));
  }
}
