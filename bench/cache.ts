/**
 * Weight-cache benchmark, run in (headless) Chromium: for each backend, the
 * end-to-end download of a generated model from the local artifact server,
 * raw write and read throughput of its shards, and the peak JS heap and peak
 * download-buffer bytes while downloading (both must stay far below the model size).
 *
 * How to call it (the `npm run bench` runner):
 *   1. In Node: `const server = await startArtifactServer()` from
 *      test/support/artifact-server.ts (127.0.0.1, random port).
 *   2. In a Chromium page served from http://127.0.0.1 or localhost (Vite):
 *      `import { benchCache } from "/bench/cache.ts";`
 *      `const rows = await benchCache({ serverUrl: server.url });`
 *      → one CacheBenchRow per backend (defaults: 256 MB model in 32 MB shards,
 *        backends "indexeddb" and "cache").
 *   3. `await server.close()`.
 * Launch Chromium with `--enable-precise-memory-info` for an unquantized heap figure.
 */
import { CacheManager } from "../src/cache/manager.js";
import type { CacheBackend } from "../src/cache/layout.js";
import type { ModelRecord } from "../src/models/record.js";

export interface CacheBenchOptions {
  /** The artifact server's URL (test/support/artifact-server.ts). */
  serverUrl: string;
  /** Default 256 MiB. */
  modelBytes?: number;
  /** Default 32 MiB (MLC's usual shard size). */
  shardBytes?: number;
  /** Default ["indexeddb", "cache"]. */
  backends?: CacheBackend[];
  /** Parallel downloads. Default 4. */
  concurrency?: number;
  /** Download memory budget. Default 64 MiB (the downloader's default). */
  maxBufferedBytes?: number;
}

export interface CacheBenchRow {
  backend: CacheBackend;
  modelBytes: number;
  /** Download (loopback) + md5 + commit, end to end. */
  downloadMBps: number;
  /** Writing the shards from memory into the backend, committed. */
  writeMBps: number;
  /** Reading every shard back as an ArrayBuffer (what web-llm does at load). */
  readMBps: number;
  /** Highest `performance.memory.usedJSHeapSize` − baseline during the download; null without `performance.memory`. */
  peakHeapBytes: number | null;
  /** Most bytes held in download buffers at once (bounded by maxBufferedBytes, or one shard). */
  peakBufferedBytes: number;
}

const MB = 1024 * 1024;

function heapUsed(): number | null {
  return (performance as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? null;
}

export async function benchCache(options: CacheBenchOptions): Promise<CacheBenchRow[]> {
  const modelBytes = options.modelBytes ?? 256 * MB;
  const shardBytes = options.shardBytes ?? 32 * MB;
  const shards = Math.ceil(modelBytes / shardBytes);
  const rows: CacheBenchRow[] = [];
  for (const backend of options.backends ?? ["indexeddb", "cache"]) {
    const created = await (await fetch(`${options.serverUrl}/__control/model`, { method: "POST", body: JSON.stringify({ shards, shardBytes }) })).json();
    const record = created.record as ModelRecord;
    const manager = new CacheManager(backend);
    const store = await manager.store();

    // Download end to end, sampling the heap.
    const baseline = heapUsed();
    let peakHeap = baseline;
    const sampler = setInterval(() => {
      const used = heapUsed();
      if (used !== null && peakHeap !== null) peakHeap = Math.max(peakHeap, used);
    }, 10);
    const t0 = performance.now();
    const result = await manager.ensure(record, { concurrency: options.concurrency, maxBufferedBytes: options.maxBufferedBytes });
    const downloadS = (performance.now() - t0) / 1000;
    clearInterval(sampler);

    // Read back every shard.
    const shardUrls = result.plan.artifacts.filter((a) => a.kind === "shard");
    const t1 = performance.now();
    let readBytes = 0;
    for (const artifact of shardUrls) {
      const value = await store.read(artifact.scope, artifact.url);
      if (value?.kind === "bytes") readBytes += value.data.byteLength;
    }
    const readS = (performance.now() - t1) / 1000;

    // Raw writes of the same volume under other keys, then removed.
    const buffer = new Uint8Array(shardBytes).map((_, i) => i & 255);
    const t2 = performance.now();
    const scratch: string[] = [];
    for (let i = 0; i < shards; i++) {
      const url = `${options.serverUrl}/bench-scratch/${backend}/${Date.now()}-${i}.bin`;
      scratch.push(url);
      await store.write("webllm/model", url, buffer, "arraybuffer");
    }
    const writeS = (performance.now() - t2) / 1000;
    for (const url of scratch) await store.remove("webllm/model", url);
    await manager.delete(record.model_id, record);

    const total = shards * shardBytes;
    rows.push({
      backend,
      modelBytes: total,
      downloadMBps: total / MB / downloadS,
      writeMBps: total / MB / writeS,
      readMBps: readBytes / MB / readS,
      peakHeapBytes: baseline === null || peakHeap === null ? null : peakHeap - baseline,
      peakBufferedBytes: result.peakBufferedBytes,
    });
  }
  return rows;
}
