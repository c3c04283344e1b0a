/**
 * What a model host cannot make the downloader do: allocate what a header or
 * an index merely claims, hold the queue forever by going silent, freeze the
 * page while planning a huge index, or pass an unknown quota off as room.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { downloadModel } from "../../src/cache/downloader.js";
import { ApiError } from "../../src/protocol/api-error.js";
import { body, memoryStore, modelFiles, record, serve } from "./support/model-host.js";

const GiB = 1024 * 1024 * 1024;
let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
  vi.unstubAllGlobals();
});

/** Highest `arrayBuffers` seen while a body streams (sampled at each pull after its first chunk). */
function sampler() {
  const base = process.memoryUsage().arrayBuffers;
  let peak = 0;
  return { sample: () => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), get peak() { return peak; } };
}

describe("buffers follow the bytes that arrive, not the sizes a host declares", () => {
  it("a tokenizer answered with content-length: 2 GiB and a 10-byte body: refused before reading, naming the file", async () => {
    const memory = sampler();
    const files = modelFiles(2, 1024, {
      "tokenizer.json": () => new Response(body([new Uint8Array(10)], { onPull: memory.sample }), { headers: { "content-length": String(2 * GiB) } }),
    });
    const host = serve(files);
    restore = host.restore;
    const error = await downloadModel(record, { store: memoryStore(), retries: 0 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503 });
    expect(error.message).toContain("tokenizer.json");
    expect(error.message).toMatch(/larger than the 64 MiB/);
    expect(memory.peak).toBeLessThan(16 * 1024 * 1024);
  });

  it("a file whose content-length overstates a 10-byte body (under the cap) is stored with a buffer the size of what came", async () => {
    const memory = sampler();
    const files = modelFiles(2, 1024, {
      "tokenizer.json": () => new Response(body([new TextEncoder().encode('{"a":"bc"}')], { onPull: memory.sample }), { headers: { "content-length": String(60 * 1024 * 1024) } }),
    });
    const host = serve(files);
    restore = host.restore;
    const store = memoryStore();
    const result = await downloadModel(record, { store });
    expect(result.sizes.get(`${"https://models.example/m/test/resolve/main/"}tokenizer.json`)).toBe(10);
    expect(memory.peak).toBeLessThan(8 * 1024 * 1024);
    expect(result.peakBufferedBytes).toBeLessThan(1024 * 1024);
  });

  it("a shard whose index entry declares 1.5 GiB but whose body is 10 bytes: 503 after what came, nothing preallocated", async () => {
    const memory = sampler();
    const files = modelFiles(1, 10, { "params_shard_0.bin": () => new Response(body([new Uint8Array(10)], { onPull: memory.sample })) }, 1.5 * GiB);
    const host = serve(files);
    restore = host.restore;
    const error = await downloadModel(record, { store: memoryStore(), retries: 0 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(error.message).toContain("params_shard_0.bin");
    expect(error.message).toContain("closed after 10 of");
    expect(memory.peak).toBeLessThan(16 * 1024 * 1024);
  });
});

describe("a host that stops sending", () => {
  it("a shard that stalls mid-body fails the download with 503 naming the file once the stall period passes", async () => {
    const files = modelFiles(2, 1024, { "params_shard_1.bin": () => new Response(body([new Uint8Array(100)], { hang: true })) });
    const host = serve(files);
    restore = host.restore;
    const started = performance.now();
    const error = await downloadModel(record, { store: memoryStore(), retries: 1, stallTimeoutMs: 200 }).catch((e) => e);
    const seconds = (performance.now() - started) / 1000;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(error.message).toContain("params_shard_1.bin");
    expect(error.message).toMatch(/no data arrived for 0.2 s/);
    // Two attempts of 0.2 s each and a short back-off, not forever.
    expect(seconds).toBeLessThan(3);
    expect(host.requests.filter((name) => name === "params_shard_1.bin")).toHaveLength(2);
  }, 10_000);

  it("a host that never answers the request is given up on too", async () => {
    const files = modelFiles(1, 1024, { "tokenizer.json": () => new Response(body([], { hang: true })) });
    const host = serve(files);
    restore = host.restore;
    const error = await downloadModel(record, { store: memoryStore(), retries: 0, stallTimeoutMs: 150 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(error.message).toContain("tokenizer.json");
  }, 10_000);
});

describe("planning a huge index", () => {
  it("an index of 40 000 shards is planned without blocking the event loop", async () => {
    const files = modelFiles(40_000, 4);
    const host = serve(files);
    restore = host.restore;
    const controller = new AbortController();
    let plannedAt = 0;
    let firstProgressAt = 0;
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const error = await downloadModel(record, {
      store: memoryStore(),
      signal: controller.signal,
      onPlanned: () => void (plannedAt = performance.now()),
      onProgress: () => {
        if (firstProgressAt) return;
        firstProgressAt = performance.now();
        controller.abort();
      },
    }).catch((e) => e);
    clearInterval(ticker);
    expect(error.name).toBe("AbortError");
    expect(plannedAt).toBeGreaterThan(0);
    // From the quota check to the first report: sums and sets over the index, not a scan per shard.
    expect(firstProgressAt - plannedAt).toBeLessThan(250);
    expect(longestGap).toBeLessThan(500);
  }, 30_000);
});

describe("the storage estimate", () => {
  const files = () => modelFiles(4, 256 * 1024);

  it("a quota without a usage figure still refuses a model larger than the quota, before any shard request", async () => {
    vi.stubGlobal("navigator", { storage: { estimate: async () => ({ quota: 100_000 }) } });
    const host = serve(files());
    restore = host.restore;
    const error = await downloadModel(record, { store: memoryStore() }).catch((e) => e);
    expect(error).toMatchObject({ status: 507, code: "insufficient_storage" });
    expect(host.requests.filter((name) => name.startsWith("params_shard_"))).toEqual([]);
  });

  it("an estimate that fails or says nothing is reported as unknown, and the download goes on", async () => {
    for (const estimate of [async () => Promise.reject(new Error("estimate unavailable")), async () => ({})]) {
      vi.stubGlobal("navigator", { storage: { estimate } });
      const host = serve(files());
      restore = host.restore;
      const result = await downloadModel(record, { store: memoryStore() });
      expect(result.quotaChecked).toBe(false);
      host.restore();
    }
  });

  it("a known estimate is checked and says so", async () => {
    vi.stubGlobal("navigator", { storage: { estimate: async () => ({ usage: 0, quota: 10 * GiB }) } });
    const host = serve(files());
    restore = host.restore;
    expect((await downloadModel(record, { store: memoryStore() })).quotaChecked).toBe(true);
  });
});
