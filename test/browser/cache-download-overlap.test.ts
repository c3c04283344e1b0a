/**
 * The download keeps the line busy while the store writes: a file's commit
 * runs while the next file downloads, and IndexedDB's copy of a large file
 * is made on another thread. What a user relies on stays: every shard is
 * stored, verified and readable by web-llm, also where no worker can start.
 */
import { afterEach, expect, inject, it, vi } from "vitest";
import { hasModelInCache } from "@mlc-ai/web-llm";
import { CacheManager } from "../../src/cache/manager.js";
import { IdbArtifactStore } from "../../src/cache/idb-store.js";
import type { ModelRecord } from "../../src/models/record.js";
import { serveModel } from "../support/artifact-client.js";

const server = inject("artifactServer");
const MiB = 1024 * 1024;
const appConfigFor = (record: ModelRecord, backend: "indexeddb" | "cache") => ({ model_list: [record as never], cacheBackend: backend });

afterEach(() => {
  vi.unstubAllGlobals();
});

it("IndexedDB: a large file's buffer is put from the writer's worker and given back; the record is what web-llm reads", async () => {
  const store = new IdbArtifactStore();
  const bytes = new Uint8Array(2 * MiB).map((_, i) => i * 7);
  const url = `${server}/overlap-test/${Date.now()}/params_shard_0.bin`;
  const { buffer, committed } = await store.submit("webllm/model", url, bytes, "arraybuffer");
  // Transferred there and back: the caller's view is detached, the same bytes are in the buffer returned.
  expect(bytes.byteLength).toBe(0);
  expect(buffer?.byteLength).toBe(2 * MiB);
  expect(new Uint8Array(buffer as ArrayBuffer)[12345]).toBe((12345 * 7) & 0xff);
  await committed;
  const stored = await store.read("webllm/model", url);
  expect(stored?.kind).toBe("bytes");
  // Compared byte by byte here: a deep equality over 2 MiB takes the test runner seconds.
  const [a, b] = [new Uint8Array((stored as { data: ArrayBuffer }).data), new Uint8Array(buffer as ArrayBuffer)];
  expect(a.byteLength).toBe(b.byteLength);
  expect(a.every((byte, i) => byte === b[i])).toBe(true);
  await store.remove("webllm/model", url);
});


/** For each weight shard the store takes: whether it handed the buffer back (the worker's transfer) rather than keeping it. */
function watchHandBacks(store: Awaited<ReturnType<CacheManager["store"]>>): boolean[] {
  const submit = store.submit!.bind(store);
  const handedBack: boolean[] = [];
  store.submit = async (...args) => {
    const result = await submit(...args);
    if (args[1].includes("params_shard_")) handedBack.push(result.buffer !== undefined);
    return result;
  };
  return handedBack;
}
it("IndexedDB: where no worker can start, large files are put on the download's thread and the model is complete", async () => {
  vi.stubGlobal("Worker", class {
    constructor() {
      throw new DOMException("Refused by the page's Content-Security-Policy.", "SecurityError");
    }
  });
  const model = await serveModel(server, { shards: 3, shardBytes: 2 * MiB });
  const manager = new CacheManager("indexeddb");
  const store = await manager.store();
  const handedBack = watchHandBacks(store);
  const result = await manager.ensure(model.record);
  expect(handedBack).toEqual([false, false, false]);
  expect(result.sizes.get(`${model.baseUrl}params_shard_2.bin`)).toBe(2 * MiB);
  expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "indexeddb"))).toBe(true);
  await manager.delete(model.record.model_id, model.record);
});

it("IndexedDB: shards of 2 MiB go through the worker, every one verified and stored (the pool reuses the buffers handed back)", async () => {
  const model = await serveModel(server, { shards: 6, shardBytes: 2 * MiB });
  const manager = new CacheManager("indexeddb");
  const store = await manager.store();
  const handedBack = watchHandBacks(store);
  const result = await manager.ensure(model.record, { maxBufferedBytes: 4 * MiB });
  expect(handedBack).toEqual(Array(6).fill(true));
  expect(result.totalBytes).toBeGreaterThan(12 * MiB);
  for (let i = 0; i < 6; i++) expect(result.sizes.get(`${model.baseUrl}params_shard_${i}.bin`)).toBe(2 * MiB);
  expect(result.peakBufferedBytes).toBeLessThanOrEqual(4 * MiB + 128 * 1024);
  expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "indexeddb"))).toBe(true);
  await manager.delete(model.record.model_id, model.record);
});

it("Cache API: the next shard downloads while the previous one's commit is still running (one stream)", async () => {
  const model = await serveModel(server, { shards: 3, shardBytes: 256 * 1024 });
  const manager = new CacheManager("cache");
  const store = await manager.store();
  const openWrite = store.openWrite!.bind(store);
  let releaseFirst!: () => void;
  const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
  // Without the overlap the second shard never starts before the first commits: the hold ends after 3 s, and the test fails.
  const giveUp = setTimeout(releaseFirst, 3000);
  let overlapped = false;
  const opened: string[] = [];
  let firstCommitted = false;
  store.openWrite = async (...args) => {
    const url = args[1];
    const name = url.slice(url.lastIndexOf("/") + 1);
    opened.push(name);
    // The second shard starting while the first's commit is held is the overlap; let the first finish then.
    if (name === "params_shard_1.bin" && !firstCommitted) {
      overlapped = true;
      releaseFirst();
    }
    const sink = await openWrite(...args);
    if (name !== "params_shard_0.bin") return sink;
    return {
      ...sink,
      commit: async () => {
        await firstMayCommit;
        await sink.commit();
        firstCommitted = true;
      },
    };
  };
  const result = await manager.ensure(model.record, { concurrency: 1 });
  clearTimeout(giveUp);
  expect(overlapped).toBe(true);
  expect(firstCommitted).toBe(true);
  expect(opened.filter((n) => n.startsWith("params_shard_"))).toEqual(["params_shard_0.bin", "params_shard_1.bin", "params_shard_2.bin"]);
  expect(result.sizes.get(`${model.baseUrl}params_shard_0.bin`)).toBe(256 * 1024);
  expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "cache"))).toBe(true);
  await manager.delete(model.record.model_id, model.record);
});
