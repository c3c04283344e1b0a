/**
 * IndexedDB as on a full disk, for records over 1 MB: `put` throws the
 * QuotaExceededError the browser gives when the origin's quota is used up;
 * and as on a failing one for records that hold "disk-error": the UnknownError
 * Chromium gives when its IndexedDB backend fails.
 * Chromium offers a test no way to shrink an origin's IndexedDB quota
 * (Storage.overrideQuotaForOrigin is not enforced on its writes), so the
 * worker that holds the response store (full-disk-worker.ts) loads this
 * before the library's own worker code.
 */
const put = IDBObjectStore.prototype.put;
IDBObjectStore.prototype.put = function (value: unknown, key?: IDBValidKey) {
  const json = JSON.stringify(value ?? null);
  if (json.length > 1_000_000) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  if (json.includes("disk-error")) throw new DOMException("An internal error was encountered in the Indexed Database server", "UnknownError");
  return put.call(this, value, key);
};
