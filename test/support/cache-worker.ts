/** A second context for the many-tabs test: loads a model into the cache when asked and reports what it fetched. */
import { CacheManager } from "../../src/cache/manager.js";
import type { ModelRecord } from "../../src/models/record.js";

self.onmessage = async (event: MessageEvent<{ record: ModelRecord }>) => {
  try {
    const progress: number[] = [];
    const result = await new CacheManager("indexeddb").ensure(event.data.record, { onProgress: (p) => progress.push(p.fraction) });
    self.postMessage({ ok: true, fetchedBytes: result.fetchedBytes, progressEvents: progress.length });
  } catch (error) {
    self.postMessage({ ok: false, message: String(error) });
  }
};

self.postMessage({ ready: true });
