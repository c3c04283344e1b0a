/**
 * The library's default worker (dedicated or shared, src/worker/entry.ts),
 * unchanged, in a context whose IndexedDB refuses large records with a quota
 * error (full-disk.ts, imported first so it is in place before the host starts).
 */
import "./full-disk.js";
import "../../src/worker/entry.js";
