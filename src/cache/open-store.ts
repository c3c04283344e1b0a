/**
 * Opens the weight-cache backend the app chose, loading its module on first
 * use (only the chosen backend's code reaches the page), or says why this
 * browser cannot have it.
 */
import { ApiError } from "../protocol/api-error.js";
import type { ArtifactStore } from "./store.js";
import type { CacheBackend } from "./layout.js";
import { loadModule } from "../lazy-imports.js";

/** Opens the store for `backend`, or says why this browser cannot have it. */
export async function openArtifactStore(backend: CacheBackend = "indexeddb"): Promise<ArtifactStore> {
  if (backend === "indexeddb") {
    if (typeof indexedDB === "undefined") throw unsupported(backend, "IndexedDB is not available in this context");
    const { IdbArtifactStore } = await loadModule("idbStore", () => import("./idb-store.js"));
    return new IdbArtifactStore();
  }
  if (backend === "cache") {
    if (typeof caches === "undefined") throw unsupported(backend, "the Cache API is not available here (it needs a secure context: https or http://localhost/127.0.0.1)");
    const { CacheApiArtifactStore } = await loadModule("cacheApiStore", () => import("./cache-api-store.js"));
    return new CacheApiArtifactStore();
  }
  if (backend === "opfs") {
    if (typeof navigator === "undefined" || typeof navigator.storage?.getDirectory !== "function") {
      throw unsupported(backend, "the Origin Private File System is not available here");
    }
    const { OpfsArtifactStore } = await loadModule("opfsStore", () => import("./opfs-store.js"));
    return new OpfsArtifactStore();
  }
  throw new ApiError({ status: 400, param: "cache", code: "invalid_value", message: `Unknown cache backend ${JSON.stringify(backend)}: use "indexeddb" (default), "cache" or "opfs".` });
}

function unsupported(backend: CacheBackend, why: string): ApiError {
  return new ApiError({ status: 503, param: "cache", code: "cache_backend_unavailable", message: `cache: "${backend}" cannot be used: ${why}. Choose another backend with the \`cache\` option.` });
}
