/**
 * The weight cache as apps see it: `client.models.load` downloads before the
 * web-llm engine loads (progress in bytes, then the engine's phases), quota
 * failures are 507, and `client.cache.*` lists, measures and deletes, also
 * through the worker.
 */
import { describe, expect, inject, it } from "vitest";
import { hasModelInCache } from "@mlc-ai/web-llm";
import { createClient, ApiError } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { CacheManager } from "../../src/cache/manager.js";
import type { Engine, LoadOptions, LoadProgress } from "../../src/engine/types.js";
import type { ModelRecord } from "../../src/models/record.js";
import { serveModel } from "../support/artifact-client.js";

const server = inject("artifactServer");

/**
 * Stands in for the web-llm engine (which needs real weights and a real GPU):
 * it asks web-llm itself whether the model is cached when it is told to load.
 */
function gpuEngineStandIn() {
  const loads: Array<{ id: string; cachedPerWebLlm: boolean }> = [];
  const engine: Engine & { requiresGpu: true } = {
    requiresGpu: true,
    loadedModel: null,
    async load(record: ModelRecord, options: LoadOptions) {
      const cachedPerWebLlm = await hasModelInCache(record.model_id, { model_list: [record as never], cacheBackend: options.cacheBackend ?? "indexeddb" });
      loads.push({ id: record.model_id, cachedPerWebLlm });
      for (const fraction of [0.5, 1]) options.onProgress?.({ phase: fraction < 1 ? "load" : "compile", loadedBytes: 0, totalBytes: 0, fraction, etaS: null, file: null });
      (engine as { loadedModel: string | null }).loadedModel = record.model_id;
    },
    // eslint-disable-next-line require-yield
    async *generate() {
      throw new Error("not used");
    },
    async unload() {},
  };
  return { engine, loads };
}

describe("client.models.load with the web-llm engine", () => {
  it("downloads into web-llm's cache first, then loads; one progress stream in bytes whose fraction never goes back", async () => {
    const model = await serveModel(server, { shards: 6, shardBytes: 128 * 1024 });
    const { engine, loads } = gpuEngineStandIn();
    const client = createClient({ worker: false, engine, models: [model.record] });
    const events: LoadProgress[] = [];
    await client.models.load(model.record.model_id, { onProgress: (p) => events.push(p) });
    expect(loads).toEqual([{ id: model.record.model_id, cachedPerWebLlm: true }]);
    const downloads = events.filter((e) => e.phase === "download");
    expect(downloads.length).toBeGreaterThan(1);
    const lastDownload = downloads[downloads.length - 1];
    expect(lastDownload.loadedBytes).toBe(lastDownload.totalBytes);
    expect(lastDownload.totalBytes).toBeGreaterThan(model.totalBytes);
    for (let i = 1; i < events.length; i++) expect(events[i].fraction).toBeGreaterThanOrEqual(events[i - 1].fraction);
    expect(events[events.length - 1]).toMatchObject({ phase: "compile", fraction: 1 });
    expect(await client.cache.list()).toContainEqual(expect.objectContaining({ id: model.record.model_id, complete: true }));
  });

  it("fails with 507 before the engine loads when the quota is too small", async () => {
    const model = await serveModel(server, { shards: 4, shardBytes: 256 * 1024 });
    const { engine, loads } = gpuEngineStandIn();
    const client = createClient({ worker: false, engine, models: [model.record] });
    const original = navigator.storage.estimate;
    navigator.storage.estimate = async () => ({ usage: 5_000, quota: 50_000 });
    try {
      const error = await client.models.load(model.record.model_id).catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 507, code: "insufficient_storage" });
      expect(error.message).toContain("45000 bytes");
    } finally {
      navigator.storage.estimate = original;
    }
    expect(loads).toEqual([]);
    expect(Object.keys((await model.stats()).byFile).filter((f) => f.startsWith("params_shard_"))).toEqual([]);
  });

  it("leaves a scripted engine's loads alone (no download)", async () => {
    const model = await serveModel(server, { shards: 2, shardBytes: 64 * 1024 });
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }), models: [model.record] });
    await client.models.load(model.record.model_id);
    expect((await model.stats()).total).toBe(0);
  });
});

describe("client.cache through the worker", () => {
  it("lists, measures and deletes what the downloader cached", async () => {
    const model = await serveModel(server, { shards: 3, shardBytes: 64 * 1024 });
    const cached = await new CacheManager("indexeddb").ensure(model.record);
    const client = createClient({ engine: createScriptedEngine({ replies: [] }), models: [model.record] });
    try {
      expect(await client.cache.list()).toContainEqual(expect.objectContaining({ id: model.record.model_id, bytes: cached.totalBytes, complete: true }));
      const usage = await client.cache.usage();
      expect(usage.backend).toBe("indexeddb");
      expect(usage.models.find((m) => m.id === model.record.model_id)?.bytes).toBe(cached.totalBytes);
      expect(usage.storage.quota).toBeGreaterThan(0);
      expect(usage.storage.usage).toBeGreaterThan(0);
      expect([true, false, null]).toContain(usage.storage.persisted);
      expect(await client.cache.delete(model.record.model_id)).toEqual({ id: model.record.model_id, deleted: true });
      expect((await client.cache.list()).map((m) => m.id)).not.toContain(model.record.model_id);
      expect(await hasModelInCache(model.record.model_id, { model_list: [model.record as never], cacheBackend: "indexeddb" })).toBe(false);
    } finally {
      client.terminate();
    }
  });

  it("clear empties the backend", async () => {
    const model = await serveModel(server, { shards: 2, shardBytes: 64 * 1024 });
    await new CacheManager("cache").ensure(model.record);
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }), cache: "cache" });
    await client.cache.clear();
    expect(await client.cache.list()).toEqual([]);
    expect(await hasModelInCache(model.record.model_id, { model_list: [model.record as never], cacheBackend: "cache" })).toBe(false);
  });

  it("refuses an unknown backend with a message naming the choices", async () => {
    const client = createClient({ worker: false, engine: createScriptedEngine({ replies: [] }), cache: "sqlite" as never });
    const error = await client.cache.list().catch((e) => e);
    expect(error).toMatchObject({ status: 400, param: "cache" });
    expect(error.message).toContain('"indexeddb" (default), "cache" or "opfs"');
  });
});
