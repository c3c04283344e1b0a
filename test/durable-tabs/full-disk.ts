/**
 * IndexedDB as on a full disk, for records over 1 MB: `put` throws the
 * QuotaExceededError the browser gives when the origin's quota is used up.
 * Chromium offers a test no way to shrink an origin's IndexedDB quota
 * (Storage.overrideQuotaForOrigin is not enforced on its writes), so the
 * worker that holds the response store (full-disk-worker.ts) loads this
 * before the library's own worker code.
 */
const put = IDBObjectStore.prototype.put;
IDBObjectStore.prototype.put = function (value: unknown, key?: IDBValidKey) {
  if (JSON.stringify(value ?? null).length > 1_000_000) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
  return put.call(this, value, key);
};
