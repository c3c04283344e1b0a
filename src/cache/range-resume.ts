/**
 * Resuming one GGUF file with an HTTP Range request: what a partly stored
 * file must remember to be continued safely, the request that asks for the
 * rest, and whether the server's answer may be spliced onto the stored bytes.
 * Pure functions; the attempt that uses them is resumable-fetch.ts, the
 * stored parts gguf-parts.ts.
 *
 * Only `Range: bytes=N-` is sent. `If-Range` is not: it is not a
 * CORS-safelisted request header, so a cross-origin model host would first get
 * a preflight, which hosts that answer plain GETs may refuse (the download
 * would then fail where a full fetch works). The same guarantee comes from
 * comparing the 206's own validator (a strong `ETag`, else `Last-Modified`)
 * and total size with those the stored bytes came with; any difference and
 * the file is fetched again from its start.
 */

/** What identifies the version of a file on its server (RFC 9110 §8.8). */
export interface Validator {
  /** A strong ETag, quotes included; a weak one (`W/"…"`) does not promise the same bytes, and is not kept. */
  etag?: string;
  lastModified?: string;
}

/** What the stored bytes of a partly downloaded file came with. */
export interface StoredPrefix {
  /** Bytes stored, from the file's start. */
  bytes: number;
  /** The whole file's size, as the server declared it. */
  total: number;
  validator: Validator;
}

/** `Content-Range: bytes <start>-<end>/<total|*>`, parsed; null when it is not one satisfied byte range. */
export function parseContentRange(value: string | null): { start: number; end: number; total: number | null } | null {
  const match = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value ?? "");
  if (!match) return null;
  const start = Number(match[1]);
  const end = Number(match[2]);
  const total = match[3] === "*" ? null : Number(match[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return null;
  if (total !== null && (!Number.isSafeInteger(total) || end >= total)) return null;
  return { start, end, total };
}

/** The response's validator: its strong ETag and its Last-Modified, where given. */
export function validatorOf(headers: Pick<Headers, "get">): Validator {
  const validator: Validator = {};
  const etag = headers.get("etag")?.trim();
  if (etag && !etag.startsWith("W/")) validator.etag = etag;
  const lastModified = headers.get("last-modified")?.trim();
  if (lastModified) validator.lastModified = lastModified;
  return validator;
}

/**
 * Whether bytes of a file may be kept for a later resume: only when the file
 * can be recognised again, by its validator or by the hash the record pins
 * (a changed file then fails its check and is fetched again from its start).
 */
export function keepable(validator: Validator, pinned: boolean): boolean {
  return validator.etag !== undefined || validator.lastModified !== undefined || pinned;
}

/** The request headers that ask for the rest of the file. */
export function rangeHeaders(prefix: Pick<StoredPrefix, "bytes">): Record<string, string> {
  return { range: `bytes=${prefix.bytes}-` };
}

/**
 * What to do with the answer to a Range request:
 * - `continue`: a 206 for exactly the rest of the same file (same start, total and validator);
 * - `whole`: a 200, the whole file (the server ignored Range): the stored bytes go, the body is used from byte 0;
 * - `refetch`: anything else (a 206 of another range or another version, a 416, an error):
 *   the stored bytes go and the file is asked for again without Range.
 */
export type ResumeDecision = { action: "continue" } | { action: "whole" | "refetch"; reason: string };

export function decideResume(prefix: StoredPrefix, response: { status: number; headers: Pick<Headers, "get"> }): ResumeDecision {
  if (response.status === 200) return { action: "whole", reason: "the server ignored the Range request and sent the whole file" };
  if (response.status !== 206) return { action: "refetch", reason: `the server answered the Range request with ${response.status}` };
  const range = parseContentRange(response.headers.get("content-range"));
  if (!range) return { action: "refetch", reason: `the 206 has no usable Content-Range (${response.headers.get("content-range") ?? "none"})` };
  if (range.start !== prefix.bytes) return { action: "refetch", reason: `the 206 starts at byte ${range.start}, not at ${prefix.bytes}` };
  if (range.total !== prefix.total) return { action: "refetch", reason: `the file's size changed from ${prefix.total} to ${range.total ?? "unknown"} bytes` };
  if (range.end !== prefix.total - 1) return { action: "refetch", reason: `the 206 ends at byte ${range.end}, before the file's end` };
  const now = validatorOf(response.headers);
  const then = prefix.validator;
  if (then.etag !== undefined ? now.etag !== then.etag : then.lastModified !== undefined && now.lastModified !== then.lastModified) {
    return { action: "refetch", reason: "the file changed on the server since its first bytes were stored" };
  }
  return { action: "continue" };
}
