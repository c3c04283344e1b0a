/**
 * Fetches a GGUF file for the wllama engine as a Blob, with byte progress
 * (phase "download"). A stopgap of this first slice: it does not go through
 * our downloader (src/cache/: integrity, resume, quota, stall watchdog,
 * storage), so every load downloads the file again. Only http(s) URLs and
 * URLs of the page's own origin are fetched, with credentials omitted.
 */
import { ApiError, abortError } from "../../protocol/api-error.js";
import type { LoadOptions } from "../types.js";

function checkedUrl(url: string): URL {
  const origin = (globalThis as { location?: { origin?: string; href?: string } }).location;
  let parsed: URL;
  try {
    parsed = new URL(url, origin?.href);
  } catch {
    throw new ApiError({ status: 400, code: "model_url_refused", param: "model", message: `The GGUF URL ${JSON.stringify(url)} is not a URL.` });
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:" && parsed.origin !== origin?.origin) {
    throw new ApiError({ status: 400, code: "model_url_refused", param: "model", message: `The GGUF URL ${JSON.stringify(url)} must be http(s) or of the app's own origin.` });
  }
  return parsed;
}

export async function fetchGguf(url: string, options: LoadOptions): Promise<Blob> {
  const target = checkedUrl(url);
  let response: Response;
  try {
    response = await fetch(target, { credentials: "omit", ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    if (options.signal?.aborted) throw abortError();
    throw new ApiError({ status: 502, code: "model_download_failed", param: "model", message: `The GGUF at ${target.href} could not be fetched: ${error instanceof Error ? error.message : String(error)}` });
  }
  if (!response.ok || !response.body) throw new ApiError({ status: 502, code: "model_download_failed", param: "model", message: `The GGUF at ${target.href} answered HTTP ${response.status}.` });
  const total = Number(response.headers.get("content-length") ?? 0);
  const parts: Uint8Array[] = [];
  let loaded = 0;
  const started = performance.now();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? loaded / seconds : null;
    options.onProgress?.({
      phase: "download",
      loadedBytes: loaded,
      totalBytes: total,
      fraction: total > 0 ? Math.min(loaded / total, 1) * 0.95 : 0,
      etaS: rate && total > 0 ? (total - loaded) / rate : null,
      bytesPerS: rate,
      file: target.href,
    });
  }
  return new Blob(parts as BlobPart[]);
}
