/** A page's download of a GGUF, in a worker the resume test terminates mid-download (a closed tab). */
import { CacheManager } from "../../../src/cache/manager.js";
import type { ModelRecord } from "../../../src/models/record.js";

self.onmessage = (event: MessageEvent<{ record: ModelRecord; backend: "indexeddb" | "opfs" | "cache" }>) => {
  void new CacheManager(event.data.backend).ensure(event.data.record, { layout: "gguf" }).catch(() => undefined);
};
self.postMessage({ ready: true });
