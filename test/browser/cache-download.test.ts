/**
 * The weight cache in real Chromium against the local artifact server: what
 * users rely on is that a model downloads once, survives, resumes, is
 * verified, and is what web-llm itself finds in its cache.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { hasModelInCache } from "@mlc-ai/web-llm";
import { CacheManager } from "../../src/cache/manager.js";
import { SCOPES, type CacheBackend } from "../../src/cache/layout.js";
import { openWebLlmDatabase } from "../../src/cache/idb-store.js";
import { ApiError } from "../../src/protocol/api-error.js";
import type { LoadProgress } from "../../src/engine/types.js";
import type { ModelRecord } from "../../src/models/record.js";
import { serveModel, type ServedModelHandle } from "../support/artifact-client.js";

const server = inject("artifactServer");
const appConfigFor = (record: ModelRecord, backend: CacheBackend) => ({ model_list: [record as never], cacheBackend: backend });

/** Every key stored in web-llm's IndexedDB databases that belongs to the model. */
async function idbKeysOf(model: ServedModelHandle): Promise<string[]> {
  const keys: string[] = [];
  for (const scope of SCOPES) {
    const db = await openWebLlmDatabase(scope);
    const all = await new Promise<IDBValidKey[]>((resolve, reject) => {
      const request = db.transaction("urls").objectStore("urls").getAllKeys();
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    db.close();
    keys.push(...all.map(String).filter((key) => key.includes(model.name)));
  }
  return keys;
}

function shardRequests(stats: { byFile: Record<string, number> }): Record<string, number> {
  return Object.fromEntries(Object.entries(stats.byFile).filter(([file]) => file.startsWith("params_shard_")));
}

describe.each(["indexeddb", "cache", "opfs"] as const)("cache backend %s", (backend) => {
  let manager: CacheManager;
  beforeEach(() => {
    manager = new CacheManager(backend);
  });

  it("downloads each file once with monotonic byte progress; the next load makes zero requests; web-llm agrees it is cached", async () => {
    const model = await serveModel(server, { shards: 8, shardBytes: 128 * 1024 });
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, backend))).toBe(false);

    const events: LoadProgress[] = [];
    const first = await manager.ensure(model.record, { onProgress: (p) => events.push(p) });
    const stats = await model.stats();
    expect(Object.values(stats.byFile).every((count) => count === 1)).toBe(true);
    expect(Object.keys(stats.byFile).sort()).toEqual(
      ["mlc-chat-config.json", "model.wasm", "tensor-cache.json", "tokenizer.json", ...Array.from({ length: 8 }, (_, i) => `params_shard_${i}.bin`)].sort(),
    );
    expect(events.length).toBeGreaterThan(2);
    for (let i = 1; i < events.length; i++) {
      expect(events[i].loadedBytes).toBeGreaterThanOrEqual(events[i - 1].loadedBytes);
      expect(events[i].fraction).toBeGreaterThanOrEqual(events[i - 1].fraction);
    }
    const last = events[events.length - 1];
    expect(last).toMatchObject({ phase: "download", fraction: 1 });
    expect(last.loadedBytes).toBe(last.totalBytes);
    expect(last.totalBytes).toBe(first.totalBytes);
    expect(first.totalBytes).toBeGreaterThan(model.totalBytes);

    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, backend))).toBe(true);
    expect(await manager.list()).toContainEqual(expect.objectContaining({ id: model.record.model_id, complete: true, bytes: first.totalBytes }));

    await model.fault({ stopped: true });
    const second = await manager.ensure(model.record);
    expect(second.fetchedBytes).toBe(0);
    expect((await model.stats()).total).toBe(stats.total);
  });

  it("a shard corrupted in transit is discarded (nothing of it stored) and fetched again", async () => {
    const model = await serveModel(server, { shards: 4, shardBytes: 128 * 1024 });
    await model.fault({ corruptOnce: ["params_shard_2.bin"] });
    await manager.ensure(model.record);
    expect(shardRequests(await model.stats())["params_shard_2.bin"]).toBe(2);
    const stored = await (await manager.store()).read("webllm/model", `${model.baseUrl}params_shard_2.bin`);
    const fresh = await (await fetch(`${model.baseUrl}params_shard_2.bin`)).arrayBuffer();
    expect(stored?.kind === "bytes" && new Uint8Array(stored.data)).toEqual(new Uint8Array(fresh));
  });

  it("a shard that fails its check after every attempt leaves no entry behind (a streamed write is discarded, not committed)", async () => {
    const model = await serveModel(server, { shards: 2, shardBytes: 64 * 1024, md5: false });
    const record = { ...model.record, integrity: { "params_shard_1.bin": "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" } };
    const error = await manager.ensure(record, { concurrency: 1 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "integrity_error" });
    const store = await manager.store();
    expect(await store.has("webllm/model", `${model.baseUrl}params_shard_1.bin`)).toBe(false);
    expect(await store.has("webllm/model", `${model.baseUrl}params_shard_0.bin`)).toBe(true);
  });

  it("a host that goes silent mid-shard fails the load with 503 naming the file after the stall period; the rest resumes later", async () => {
    const model = await serveModel(server, { shards: 3, shardBytes: 256 * 1024 });
    await model.fault({ stallAfter: 64 * 1024 });
    const started = performance.now();
    const error = await manager.ensure(model.record, { stallTimeoutMs: 300 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(error.message).toMatch(/params_shard_\d\.bin/);
    expect(error.message).toContain("no data arrived for 0.3 s");
    expect(performance.now() - started).toBeLessThan(10_000);
    await model.fault({ stallAfter: null });
    await manager.ensure(model.record);
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, backend))).toBe(true);
  });

  it("delete leaves no file of the model, tensor-cache.json and wasm included", async () => {
    const model = await serveModel(server, { shards: 3, shardBytes: 64 * 1024 });
    await manager.ensure(model.record);
    expect(await manager.delete(model.record.model_id, model.record)).toBe(true);
    const store = await manager.store();
    for (const scope of SCOPES) expect((await store.urls(scope)).filter((url) => url.includes(model.name))).toEqual([]);
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, backend))).toBe(false);
    expect((await manager.list()).map((m) => m.id)).not.toContain(model.record.model_id);
  });
});

describe("downloads that go wrong (indexeddb)", () => {
  const manager = new CacheManager("indexeddb");

  it("after a connection drops mid-shard, the next load requests only the missing shards", async () => {
    const model = await serveModel(server, { shards: 8, shardBytes: 128 * 1024 });
    await model.fault({ dropFrom: 4 });
    const error = await manager.ensure(model.record, { concurrency: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(await manager.list()).toContainEqual(expect.objectContaining({ id: model.record.model_id, complete: false }));
    const before = shardRequests(await model.stats());
    for (let i = 0; i < 4; i++) expect(before[`params_shard_${i}.bin`]).toBe(1);

    await model.fault({ dropFrom: null });
    await manager.ensure(model.record);
    const after = shardRequests(await model.stats());
    for (let i = 0; i < 4; i++) expect(after[`params_shard_${i}.bin`]).toBe(1);
    for (let i = 4; i < 8; i++) expect(after[`params_shard_${i}.bin`]).toBe((before[`params_shard_${i}.bin`] ?? 0) + 1);
    expect((await model.stats()).byFile["tensor-cache.json"]).toBe(1);
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "indexeddb"))).toBe(true);
  });

  it("an aborted download resumes with only the shards it had not stored", async () => {
    const model = await serveModel(server, { shards: 8, shardBytes: 128 * 1024 });
    await model.fault({ delayMs: 30 });
    const controller = new AbortController();
    const error = await manager
      .ensure(model.record, { concurrency: 1, signal: controller.signal, onProgress: (p) => p.loadedBytes > p.totalBytes / 2 && controller.abort() })
      .catch((e) => e);
    expect(error.name).toBe("AbortError");
    await model.fault({ delayMs: 0 });
    const before = shardRequests(await model.stats());
    const stored = Object.keys(before).length;
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(8);
    await manager.ensure(model.record);
    const after = shardRequests(await model.stats());
    expect(Object.keys(after).length).toBe(8);
    // Shards fully stored before the abort were not requested again; at most the one cut off was.
    const again = Object.keys(after).filter((file) => after[file] > 1);
    expect(again.length).toBeLessThanOrEqual(1);
  });

  it("a write that fails mid-way (quota) leaves the model marked incomplete, and says so with 507", async () => {
    const model = await serveModel(server, { shards: 6, shardBytes: 64 * 1024 });
    const failing = new CacheManager("indexeddb");
    const store = await failing.store();
    // The browser refuses the third shard's commit (IndexedDB hands shards over with submit(), committing after).
    const submit = store.submit!.bind(store);
    let writes = 0;
    store.submit = async (...args) => {
      if (args[1].includes("params_shard_") && ++writes === 3) return { committed: Promise.reject(new DOMException("The quota has been exceeded.", "QuotaExceededError")) };
      return submit(...args);
    };
    const error = await failing.ensure(model.record, { concurrency: 1 }).catch((e) => e);
    expect(error).toMatchObject({ status: 507, code: "insufficient_storage" });
    expect(error.message).toContain("stays marked incomplete");
    expect(await failing.list()).toContainEqual(expect.objectContaining({ id: model.record.model_id, complete: false }));
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "indexeddb"))).toBe(false);
  });

  it("keeps at most maxBufferedBytes of shards in memory while downloading", async () => {
    const model = await serveModel(server, { shards: 8, shardBytes: 256 * 1024 });
    const result = await manager.ensure(model.record, { concurrency: 4, maxBufferedBytes: 512 * 1024 });
    expect(result.peakBufferedBytes).toBeGreaterThanOrEqual(256 * 1024);
    // Two shards, plus the small files of undeclared size (tokenizer, wasm buffers).
    expect(result.peakBufferedBytes).toBeLessThanOrEqual(512 * 1024 + 128 * 1024);
    expect(await hasModelInCache(model.record.model_id, appConfigFor(model.record, "indexeddb"))).toBe(true);
  });

  it("detects a corrupted shard by its md5sum, discards it and fetches it again", async () => {
    const model = await serveModel(server, { shards: 4, shardBytes: 128 * 1024 });
    await model.fault({ corruptOnce: ["params_shard_2.bin"] });
    await manager.ensure(model.record);
    const stats = shardRequests(await model.stats());
    expect(stats["params_shard_2.bin"]).toBe(2);
    expect(stats["params_shard_1.bin"]).toBe(1);
    const store = await manager.store();
    const stored = await store.read("webllm/model", `${model.baseUrl}params_shard_2.bin`);
    const fresh = await (await fetch(`${model.baseUrl}params_shard_2.bin`)).arrayBuffer();
    expect(stored?.kind === "bytes" && new Uint8Array(stored.data)).toEqual(new Uint8Array(fresh));
  });

  it("verifies an SRI hash from the model record on weights and refuses a mismatch", async () => {
    const model = await serveModel(server, { shards: 2, shardBytes: 64 * 1024, md5: false });
    const record = { ...model.record, integrity: { "params_shard_1.bin": "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" } };
    const error = await manager.ensure(record, { concurrency: 1 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "integrity_error" });
    expect(error.message).toContain("params_shard_1.bin");
    expect(await hasModelInCache(record.model_id, appConfigFor(record, "indexeddb"))).toBe(false);
  });

  it("refuses with 507 naming bytes needed and free when the quota is too small, before any weight request, writing nothing", async () => {
    const model = await serveModel(server, { shards: 4, shardBytes: 256 * 1024 });
    const original = navigator.storage.estimate;
    navigator.storage.estimate = async () => ({ usage: 1000, quota: 1000 + 100_000 });
    try {
      const error = await manager.ensure(model.record).catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 507, code: "insufficient_storage", type: "insufficient_storage" });
      expect(error.message).toMatch(/needs \d+ more bytes/);
      expect(error.message).toContain("100000 bytes");
    } finally {
      navigator.storage.estimate = original;
    }
    const stats = await model.stats();
    expect(Object.keys(shardRequests(stats))).toEqual([]);
    expect(stats.byFile["tokenizer.json"]).toBeUndefined();
    expect(await idbKeysOf(model)).toEqual([]);
    expect((await manager.list()).map((m) => m.id)).not.toContain(model.record.model_id);
  });

  it("two loaders of the same model share one download through a Web Lock", async () => {
    const model = await serveModel(server, { shards: 6, shardBytes: 128 * 1024 });
    // Two managers: separate connections, as two tabs would have.
    const tabA = new CacheManager("indexeddb");
    const tabB = new CacheManager("indexeddb");
    await model.fault({ delayMs: 40 });
    const seenA: LoadProgress[] = [];
    const seenB: LoadProgress[] = [];
    const [a, b] = await Promise.all([tabA.ensure(model.record, { onProgress: (p) => seenA.push(p) }), tabB.ensure(model.record, { onProgress: (p) => seenB.push(p) })]);
    const stats = await model.stats();
    expect(Object.values(stats.byFile).every((count) => count === 1)).toBe(true);
    expect(Math.min(a.fetchedBytes, b.fetchedBytes)).toBe(0);
    // The waiting one fetched nothing itself, yet saw the download advance (relayed from the holder).
    const waited = a.fetchedBytes === 0 ? seenA : seenB;
    expect(waited.some((p) => p.loadedBytes < p.totalBytes)).toBe(true);
    for (let i = 1; i < waited.length; i++) expect(waited[i].fraction).toBeGreaterThanOrEqual(waited[i - 1].fraction);
  });

  it("a page and a worker loading the same model at once request each file once", async () => {
    const model = await serveModel(server, { shards: 8, shardBytes: 256 * 1024 });
    // Slow shards, so the page's download is surely still running when the worker asks.
    await model.fault({ delayMs: 100 });
    const worker = new Worker(new URL("../support/cache-worker.ts", import.meta.url), { type: "module" });
    try {
      await new Promise((resolve) => (worker.onmessage = resolve));
      const inWorker = new Promise<{ ok: boolean; fetchedBytes: number; message?: string }>((resolve) => (worker.onmessage = (event) => resolve(event.data)));
      worker.postMessage({ record: model.record });
      const inPage = new CacheManager("indexeddb").ensure(model.record);
      const [page, other] = await Promise.all([inPage, inWorker]);
      expect(other.ok, other.message).toBe(true);
      const stats = await model.stats();
      expect(Object.keys(stats.byFile).length).toBe(12);
      expect(Object.values(stats.byFile).every((count) => count === 1)).toBe(true);
      // One of the two fetched the model; the other found it cached.
      expect(Math.min(page.fetchedBytes, other.fetchedBytes)).toBe(0);
      expect(Math.max(page.fetchedBytes, other.fetchedBytes)).toBeGreaterThan(model.totalBytes);
    } finally {
      worker.terminate();
    }
  });

  it("follows a model package manifest (gemma-4 style) to the config and weights it names", async () => {
    const model = await serveModel(server, { shards: 3, shardBytes: 64 * 1024, packageManifest: true });
    const result = await manager.ensure(model.record);
    const stats = await model.stats();
    expect(Object.keys(stats.byFile).sort()).toEqual(
      ["config/mlc-chat-config.json", "mlc-model-manifest.json", "model.wasm", "tokenizer.json", "weights/params_shard_0.bin", "weights/params_shard_1.bin", "weights/params_shard_2.bin", "weights/tensor-cache.json"].sort(),
    );
    const store = await manager.store();
    expect(await store.has("webllm/config", `${model.baseUrl}mlc-model-manifest.json`)).toBe(true);
    expect(await store.has("webllm/model", `${model.baseUrl}weights/params_shard_2.bin`)).toBe(true);
    await model.fault({ stopped: true });
    expect((await manager.ensure(model.record)).fetchedBytes).toBe(0);
    expect(await manager.delete(model.record.model_id, model.record)).toBe(true);
    expect(await idbKeysOf(model)).toEqual([]);
    expect(result.plan.artifacts.length).toBe(8);
  });

  it("heals a mlc-chat-config.json cached as a JSON object by web-llm ≤0.2.79, which 0.2.86 cannot read", async () => {
    const model = await serveModel(server, { shards: 2, shardBytes: 64 * 1024 });
    const configUrl = `${model.baseUrl}mlc-chat-config.json`;
    const db = await openWebLlmDatabase("webllm/config");
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction("urls", "readwrite");
      tx.objectStore("urls").put({ url: configUrl, data: { tokenizer_files: ["tokenizer.json"], model_type: "llama" } });
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    const result = await manager.ensure(model.record);
    expect(result.healed).toEqual([configUrl]);
    expect((await model.stats()).byFile["mlc-chat-config.json"]).toBe(1);
    const stored = await (await manager.store()).read("webllm/config", configUrl);
    expect(stored?.kind).toBe("bytes");
    expect(JSON.parse(new TextDecoder().decode((stored as { data: ArrayBuffer }).data)).tokenizer_files).toEqual(["tokenizer.json"]);
  });
});
