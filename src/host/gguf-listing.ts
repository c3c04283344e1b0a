/**
 * A GGUF record's size and quantization for `models.list()`, read from the
 * file itself: from the stored copy once downloaded (a slice of its Blob),
 * else from the server by Range requests for the header's bytes only (a
 * server that ignores Range answers 200: the body is cancelled once the
 * header is read). Parts of a split GGUF after the first are asked for one
 * byte each, for their sizes. A record that declares its `listing` (the
 * catalog's do) is listed with it, with no request. Anything that fails
 * leaves both null: a list never fails for one file's server.
 */
import { ggufPlan } from "../cache/gguf-artifacts.js";
import { checkRecordUrls } from "../cache/url-policy.js";
import type { CacheManager } from "../cache/manager.js";
import type { ModelRecord, WllamaRecordEngine } from "../models/record.js";
import { readGgufHeader } from "../models/gguf-header.js";

export interface GgufListing {
  /** Bytes of every file of the GGUF; null when a server does not say. */
  sizeBytes: number | null;
  quantization: string | null;
}

const UNKNOWN: GgufListing = { sizeBytes: null, quantization: null };

/** The first `end` bytes of `url` (fewer at its end), and the file's total size where the response says. */
async function fetchPrefix(url: string, end: number): Promise<{ bytes: Uint8Array; total: number | null }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { range: `bytes=0-${end - 1}` }, cache: "no-store", credentials: "omit", signal: controller.signal });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const range = /\/(\d+)\s*$/.exec(response.headers.get("content-range") ?? "");
  const length = response.headers.get("content-length");
  const total = range ? Number(range[1]) : response.status === 200 && length !== null ? Number(length) : null;
  const out = new Uint8Array(end);
  let filled = 0;
  const reader = response.body!.getReader();
  while (filled < end) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = Math.min(value.length, end - filled);
    out.set(value.subarray(0, take), filled);
    filled += take;
  }
  // A 200 (Range ignored) would go on with the whole file: stop it here.
  if (filled >= end) controller.abort();
  return { bytes: out.subarray(0, filled), total };
}

async function fromStore(blobs: Blob[]): Promise<GgufListing> {
  const header = await readGgufHeader(async (end) => new Uint8Array(await blobs[0].slice(0, end).arrayBuffer()));
  return { sizeBytes: blobs.reduce((sum, blob) => sum + blob.size, 0), quantization: header?.quantization ?? null };
}

async function fromServer(record: ModelRecord): Promise<GgufListing> {
  checkRecordUrls(record);
  const [first, ...rest] = ggufPlan(record).artifacts.map((artifact) => artifact.url);
  let firstTotal: number | null = null;
  const header = await readGgufHeader(async (end) => {
    const { bytes, total } = await fetchPrefix(first, end);
    firstTotal = total;
    return bytes;
  });
  const totals = [firstTotal, ...(await Promise.all(rest.map(async (url) => (await fetchPrefix(url, 1)).total)))];
  const sizeBytes = totals.every((t) => t !== null) ? totals.reduce((sum: number, t) => sum + t!, 0) : null;
  return { sizeBytes, quantization: header?.quantization ?? null };
}

/** The record's size and quantization (see the file's opening comment). */
export async function ggufListing(record: ModelRecord, cache: () => Promise<CacheManager>): Promise<GgufListing> {
  try {
    const stored = await (await cache()).readGguf(record).catch(() => null);
    if (stored) return await fromStore(stored);
    const declared = (record.engine as WllamaRecordEngine | undefined)?.listing;
    if (declared) return { sizeBytes: declared.size_bytes ?? null, quantization: declared.quantization };
    return await fromServer(record);
  } catch {
    return UNKNOWN;
  }
}
