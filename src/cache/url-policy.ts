/**
 * Where a model's files may be fetched from. The paths inside a model's own
 * files (`dataPath` in tensor-cache.json, `chat_config` and
 * `weights.manifest` in a package manifest) are written by whoever hosts the
 * model, not by the app; resolved as they stand they reached other folders
 * (`../../other-org/…`), other paths of the app's origin (`/account/logout`),
 * other hosts (`http://localhost:8080/admin`) and `data:` URLs, and a delete
 * of the model removed whatever they named. Every such path must resolve to a
 * file under the model's own folder, on its origin; the downloader fetches
 * with `credentials: "omit"`, so no cookie rides along either way.
 *
 * The record's own URLs (`model`, `model_lib`) are the app's; they may be
 * http(s) anywhere, or any URL of the app's own origin, never `data:` or
 * another origin's `blob:` (a wasm from there would run in the worker).
 */
import { ApiError } from "../protocol/api-error.js";
import type { ModelRecord } from "../models/record.js";

const pageOrigin = () => (globalThis as { location?: { origin?: string } }).location?.origin;
const pageHref = () => (globalThis as { location?: { href?: string } }).location?.href;

/** 400 when the app's record is at fault, 502 when a file from the model's host is (as for an unreadable index). */
function refused(message: string, param = "model", status: 400 | 502 = 400): ApiError {
  return new ApiError({ status, code: "model_url_refused", param, message });
}

/**
 * `path` (from one of the model's own files, `source`), resolved against
 * `relativeTo` (default: the folder), as a URL under `folder`; a 502 naming
 * both when it would leave the folder or its origin (400 with `fromRecord`:
 * the app's own record named it).
 */
export function fileInFolder(folder: string, path: string, source: string, relativeTo = folder, fromRecord = false): string {
  const status = fromRecord ? 400 : 502;
  const base = new URL(folder);
  let url: URL;
  try {
    url = new URL(path, relativeTo);
  } catch {
    throw refused(`${source} names the file ${JSON.stringify(path)}, which is not a URL path.`, "model", status);
  }
  const remainder = url.href.startsWith(base.href) ? url.href.slice(base.href.length) : null;
  // Encoded separators and dot segments survive URL parsing and may be decoded by the server into a way out.
  const encodedEscape = remainder !== null && /%2f|%5c|%2e%2e|\.%2e|%2e\./i.test(remainder);
  if (url.origin !== base.origin || remainder === null || remainder === "" || encodedEscape || url.search !== "" || url.hash !== "") {
    throw refused(`${source} names the file ${JSON.stringify(path)}, which resolves to ${url.protocol === "data:" ? "a data: URL" : url.href} — outside the model's folder ${base.href}. A model's files must lie under its own folder; this one was not fetched.`, "model", status);
  }
  return url.href;
}

/** Like fileInFolder, but null instead of an error: for deleting, where a path out of bounds is simply not the model's. */
export function fileInFolderOrNull(folder: string, path: string, relativeTo = folder): string | null {
  try {
    return fileInFolder(folder, path, "", relativeTo);
  } catch {
    return null;
  }
}

/** The record's `model` and `model_lib`: http(s), or the app's own origin. A 400 naming the field otherwise. */
export function checkRecordUrls(record: ModelRecord): void {
  for (const field of ["model", "model_lib"] as const) {
    const value = record[field];
    if (typeof value !== "string" || value === "") continue;
    let url: URL;
    try {
      url = new URL(value, pageHref());
    } catch {
      throw refused(`\`${field}\` of ${record.model_id} is ${JSON.stringify(value.slice(0, 80))}, which is not a URL.`, field);
    }
    const own = pageOrigin() !== undefined && url.origin === pageOrigin();
    if (url.protocol !== "https:" && url.protocol !== "http:" && !own) {
      throw refused(`\`${field}\` of ${record.model_id} is a ${url.protocol} URL; models and model libraries load only from http(s) URLs or the app's own origin.`, field);
    }
  }
}
