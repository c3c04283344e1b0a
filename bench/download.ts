/**
 * The first load, side by side in one page and one run (headless Chromium,
 * the artifact server on loopback): how fast a generated model's shards
 * arrive by
 *   - raw `fetch` of the same files, 4 at a time, bodies read and dropped
 *     (the ceiling: what the browser and the server can do at all);
 *   - raw `fetch` + MD5 of every chunk on the same thread, in JavaScript and
 *     in WebAssembly (what hashing costs), and fetch + MD5 in four workers
 *     (what hashing off the page's thread would give);
 *   - each store's floor: the bytes fetched and stored the cheapest way the
 *     browser allows, and never checked (what web-llm's loader does): the
 *     store's cost, which with the MD5 row tells the least CPU a verified
 *     download can take;
 *   - the library's download per backend (`CacheManager.ensure`: fetch,
 *     verify, store, committed);
 *   - web-llm 0.2.86's own loader into its cache (webllm-loader.ts), when the
 *     server has a real model library to give it.
 * Variants run in rotating order for `rounds` rounds; each figure is the
 * median. `benchThrottled` paces the server at a given line speed and checks
 * the download keeps the line busy and its ETA is right.
 */
import { createMD5 } from "hash-wasm";
import { CacheManager } from "../src/cache/manager.js";
import { committed, promised } from "../src/idb/requests.js";
import { Md5 } from "../src/cache/md5.js";
import type { CacheBackend } from "../src/cache/layout.js";
import type { LoadProgress } from "../src/engine/types.js";
import type { ModelRecord } from "../src/models/record.js";
import { timeWebLlmDownload } from "./webllm-loader.js";

const MB = 1024 * 1024;

export interface DownloadBenchOptions {
  serverUrl: string;
  /** Default 256 MiB. */
  modelBytes?: number;
  /** Default 32 MiB (MLC's usual shard size). */
  shardBytes?: number;
  /** Default ["indexeddb", "cache", "opfs"]. */
  backends?: CacheBackend[];
  /** Default 3. */
  rounds?: number;
  /** The library's download memory budget. Default 64 MiB (its default). */
  maxBufferedBytes?: number;
  /** Run web-llm's own loader into these backends (the server must have been started with a model library). Default none. */
  webllmBackends?: CacheBackend[];
  /** Also time raw fetch + MD5 in JS and in WebAssembly. Default true. */
  hashing?: boolean;
  /** Also time each of `backends`' floor (indexeddb, cache): stored, never checked. Default true. */
  floors?: boolean;
}

export interface DownloadBenchRow {
  variant: string;
  /** Median over rounds, shard bytes per second / 2^20. */
  MBps: number;
  runs: number[];
  /** The library only: most bytes of download buffers held at once (max over rounds). */
  peakBufferedBytes?: number;
  /** The library only: most files downloading at once (max over rounds). */
  peakConcurrency?: number;
  /**
   * Median CPU seconds per 100 MiB of shards, of the browser's processes (every thread of the page, its
   * workers, the network and storage services) and of the bench's Node process (the server), over the
   * timed download only (web-llm's: with its engine's start and stop): what the variant costs the
   * machine, which its other load does not change the way it changes MB/s. Absent where the server
   * cannot tell (not Linux).
   */
  cpu?: { browser: number; server: number };
  error?: string;
}

interface CpuTimes {
  self: number;
  children: number;
}

/** Brackets the part of a variant its CPU is counted for: the timed download, not the model's creation or deletion. */
interface CpuMeter {
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function cpuTimes(serverUrl: string): Promise<CpuTimes | null> {
  try {
    return await (await fetch(`${serverUrl}/__control/cpu`, { cache: "no-store" })).json();
  } catch {
    return null;
  }
}

interface Served {
  record: ModelRecord;
  shardUrls: string[];
  bytes: number;
}

async function serve(serverUrl: string, spec: Record<string, unknown>): Promise<Served> {
  const created = await (await fetch(`${serverUrl}/__control/model`, { method: "POST", body: JSON.stringify(spec) })).json();
  const shards = spec.shards as number;
  return {
    record: created.record,
    shardUrls: Array.from({ length: shards }, (_, i) => `${created.baseUrl}params_shard_${i}.bin`),
    bytes: shards * (spec.shardBytes as number),
  };
}

async function setFault(serverUrl: string, record: ModelRecord, fault: Record<string, unknown>): Promise<void> {
  await fetch(`${serverUrl}/__control/fault?name=${encodeURIComponent(record.model_id)}`, { method: "POST", body: JSON.stringify(fault) });
}

/** Seconds to fetch every URL, `streams` at a time, each chunk given to `onChunk`. */
async function rawFetch(urls: string[], streams: number, perFile?: () => Promise<(chunk: Uint8Array) => void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const loop = async () => {
    while (next < urls.length) {
      const url = urls[next++];
      const onChunk = perFile ? await perFile() : null;
      const reader = (await fetch(url, { cache: "no-store" })).body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onChunk?.(value);
      }
    }
  };
  await Promise.all(Array.from({ length: streams }, loop));
  return (performance.now() - started) / 1000;
}

/** A store written its cheapest way, for the floor rows: `stream` gives each of 4 streams its own fetch-and-store loop. */
interface FloorTarget {
  stream(shardBytes: number): (url: string) => Promise<void>;
  /** Resolves once every write has landed. */
  settled(): Promise<void>;
  drop(): Promise<void>;
}

const FLOOR_SCOPE = "webgpu-openai-bench-floor";

const FLOORS: Partial<Record<CacheBackend, { how: string; open(): Promise<FloorTarget> }>> = {
  cache: {
    how: "cache.put(fetch response), bytes never read",
    async open() {
      await caches.delete(FLOOR_SCOPE);
      const cache = await caches.open(FLOOR_SCOPE);
      // The body goes from the network to the cache inside the browser, as with web-llm's `cache.add`.
      return {
        stream: () => async (url) => cache.put(url, await fetch(url, { cache: "no-store" })),
        settled: async () => undefined,
        drop: async () => void (await caches.delete(FLOOR_SCOPE)),
      };
    },
  },
  indexeddb: {
    how: "read into a buffer, put, not hashed",
    async open() {
      const opening = indexedDB.open(FLOOR_SCOPE, 1);
      opening.onupgradeneeded = () => opening.result.createObjectStore("urls", { keyPath: "url" });
      const db = await promised(opening);
      const commits: Array<Promise<void>> = [];
      return {
        stream: (shardBytes) => {
          // One buffer per stream, reused: put clones it synchronously (as the library's pool does).
          let buffer = new ArrayBuffer(shardBytes);
          return async (url) => {
            const reader = (await fetch(url, { cache: "no-store" })).body!.getReader({ mode: "byob" });
            let length = 0;
            while (length < shardBytes) {
              const { done, value } = await reader.read(new Uint8Array(buffer, length, Math.min(shardBytes - length, 1 << 20)));
              if (value) buffer = value.buffer as ArrayBuffer;
              if (done || !value) break;
              length += value.byteLength;
            }
            // The body's end, read as the library reads it (the connection is then free for the next file).
            await reader.read(new Uint8Array(1));
            reader.releaseLock();
            const transaction = db.transaction("urls", "readwrite");
            commits.push(committed(transaction));
            transaction.objectStore("urls").put({ url, data: buffer });
            // Two commits in flight at most, as the library allows.
            while (commits.length > 2) await commits.shift();
          };
        },
        settled: async () => void (await Promise.all(commits.splice(0))),
        drop: async () => {
          db.close();
          await promised(indexedDB.deleteDatabase(FLOOR_SCOPE)).catch(() => undefined);
        },
      };
    },
  },
};

const round2 = (n: number) => Math.round(n * 100) / 100;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function benchDownload(options: DownloadBenchOptions): Promise<DownloadBenchRow[]> {
  const modelBytes = options.modelBytes ?? 256 * MB;
  const shardBytes = options.shardBytes ?? 32 * MB;
  const shards = Math.max(1, Math.round(modelBytes / shardBytes));
  const spec = { shards, shardBytes };
  const variants: Array<{ name: string; run: (meter: CpuMeter) => Promise<{ seconds: number; bytes: number; peakBufferedBytes?: number; peakConcurrency?: number }> }> = [];
  const timed = (name: string, perFile?: () => Promise<(chunk: Uint8Array) => void>) =>
    variants.push({
      name,
      run: async (meter) => {
        const model = await serve(options.serverUrl, spec);
        await meter.start();
        const seconds = await rawFetch(model.shardUrls, 4, perFile);
        await meter.stop();
        return { seconds, bytes: model.bytes };
      },
    });
  timed("raw fetch (ceiling)");
  if (options.hashing ?? true) {
    timed("raw fetch + MD5 in JS on the thread", async () => {
      const md5 = new Md5();
      return (chunk) => void md5.update(chunk);
    });
    timed("raw fetch + MD5 in WebAssembly on the thread", async () => {
      const md5 = (await createMD5()).init();
      return (chunk) => void md5.update(chunk);
    });
    variants.push({
      name: "raw fetch + MD5 in WebAssembly, in 4 workers",
      run: async (meter) => {
        const model = await serve(options.serverUrl, spec);
        const workers = Array.from({ length: 4 }, () => new Worker(new URL("./fetch-hash-worker.ts", import.meta.url), { type: "module" }));
        try {
          const ask = (worker: Worker, url: string) =>
            new Promise<void>((resolve, reject) => {
              worker.onmessage = ({ data }) => (data.error ? reject(new Error(data.error)) : resolve());
              worker.onerror = (event) => reject(new Error(event.message));
              worker.postMessage({ url });
            });
          // Started and warm before the clock (a worker that has hashed once has its WebAssembly instantiated).
          await Promise.all(workers.map((w) => ask(w, model.shardUrls[0]).catch(() => undefined)));
          let next = 0;
          await meter.start();
          const started = performance.now();
          await Promise.all(workers.map(async (w) => {
            while (next < model.shardUrls.length) await ask(w, model.shardUrls[next++]);
          }));
          const seconds = (performance.now() - started) / 1000;
          await meter.stop();
          return { seconds, bytes: model.bytes };
        } finally {
          for (const w of workers) w.terminate();
        }
      },
    });
  }
  const backends = options.backends ?? ["indexeddb", "cache", "opfs"];
  if (options.floors ?? true) {
    for (const backend of backends) {
      const store = FLOORS[backend];
      if (!store) continue;
      variants.push({
        name: `floor → ${backend}: ${store.how}`,
        run: async (meter) => {
          const model = await serve(options.serverUrl, spec);
          const target = await store.open();
          try {
            await meter.start();
            const started = performance.now();
            let next = 0;
            await Promise.all(Array.from({ length: 4 }, async () => {
              const stream = target.stream(shardBytes);
              while (next < model.shardUrls.length) await stream(model.shardUrls[next++]);
            }));
            await target.settled();
            const seconds = (performance.now() - started) / 1000;
            await meter.stop();
            return { seconds, bytes: model.bytes };
          } finally {
            await target.drop();
          }
        },
      });
    }
  }
  for (const backend of backends) {
    variants.push({
      name: `library → ${backend}`,
      run: async (meter) => {
        const model = await serve(options.serverUrl, spec);
        const manager = new CacheManager(backend);
        await meter.start();
        const started = performance.now();
        const result = await manager.ensure(model.record, { maxBufferedBytes: options.maxBufferedBytes });
        const seconds = (performance.now() - started) / 1000;
        await meter.stop();
        await manager.delete(model.record.model_id, model.record);
        return { seconds, bytes: model.bytes, peakBufferedBytes: result.peakBufferedBytes, peakConcurrency: result.peakConcurrency };
      },
    });
  }
  for (const backend of options.webllmBackends ?? []) {
    variants.push({
      name: `web-llm 0.2.86 loader → ${backend}`,
      run: async (meter) => {
        const model = await serve(options.serverUrl, { ...spec, realLib: true, validTokenizer: true });
        try {
          // Its CPU includes the engine's start (model library, WebGPU device) and stop around the download.
          await meter.start();
          const { seconds } = await timeWebLlmDownload(model.record, backend);
          await meter.stop();
          return { seconds, bytes: model.bytes };
        } finally {
          await new CacheManager(backend).delete(model.record.model_id, model.record).catch(() => undefined);
        }
      },
    });
  }

  const runs = new Map<string, DownloadBenchRow>(variants.map((v) => [v.name, { variant: v.name, MBps: 0, runs: [] }]));
  const rounds = options.rounds ?? 3;
  const cpuRuns = new Map<string, Array<{ browser: number; server: number }>>();
  for (let round = 0; round < rounds; round++) {
    // Rotating order: no variant always runs first (cold) or right after the heaviest one.
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + round) % variants.length];
      const row = runs.get(variant.name) as DownloadBenchRow;
      if (row.error) continue;
      try {
        const span: { before: CpuTimes | null; after: CpuTimes | null } = { before: null, after: null };
        const r = await variant.run({ start: async () => void (span.before = await cpuTimes(options.serverUrl)), stop: async () => void (span.after = await cpuTimes(options.serverUrl)) });
        const { before, after } = span;
        if (before && after) {
          const per100 = (100 * MB) / r.bytes;
          (cpuRuns.get(variant.name) ?? cpuRuns.set(variant.name, []).get(variant.name))?.push({ browser: (after.children - before.children) * per100, server: (after.self - before.self) * per100 });
        }
        row.runs.push(r.bytes / MB / r.seconds);
        if (r.peakBufferedBytes !== undefined) row.peakBufferedBytes = Math.max(row.peakBufferedBytes ?? 0, r.peakBufferedBytes);
        if (r.peakConcurrency !== undefined) row.peakConcurrency = Math.max(row.peakConcurrency ?? 0, r.peakConcurrency);
      } catch (error) {
        row.error = String((error as Error)?.message ?? error);
      }
    }
  }
  for (const row of runs.values()) {
    row.MBps = row.runs.length ? median(row.runs) : NaN;
    const cpu = cpuRuns.get(row.variant);
    if (cpu?.length) row.cpu = { browser: round2(median(cpu.map((c) => c.browser))), server: round2(median(cpu.map((c) => c.server))) };
  }
  return [...runs.values()];
}

export interface ThrottledOptions {
  serverUrl: string;
  /** Line speeds to try, MB/s (2^20 bytes). Default [10, 100]. */
  ratesMBps?: number[];
  /** Each model lasts about this long at its line speed. Default 4. */
  seconds?: number;
  backend?: CacheBackend;
  maxBufferedBytes?: number;
  /** Keep every progress report in the row's `events`. Default false. */
  keepEvents?: boolean;
}

export interface ThrottledRow {
  lineMBps: number;
  modelBytes: number;
  /** Raw fetch through the same paced line. */
  rawMBps: number;
  /** The library's download, first byte to commit. */
  libraryMBps: number;
  /** Worst |ETA − actual time left| over reports after the first 5 % of bytes, as a share of the download's duration. */
  etaWorstError: number;
  /** Median over the same reports of |ETA − actual time left| / actual time left (reports with ≥ 0.5 s left). */
  etaMedianError: number;
  /** The rate the last progress report gave, MB/s. */
  reportedMBps: number | null;
  peakBufferedBytes: number;
  /** Every ~5 % of bytes: [seconds since the first byte, fraction, ETA s, actual seconds left]. */
  trace: Array<[number, number, number | null, number]>;
  /** The report with the worst ETA, in the same form. */
  worst: [number, number, number | null, number] | null;
  /** With `keepEvents`: every report, [ms since the first byte, bytes, total bytes, ETA s, actual s left]. */
  events?: Array<[number, number, number, number | null, number]>;
}

export async function benchThrottled(options: ThrottledOptions): Promise<ThrottledRow[]> {
  const rows: ThrottledRow[] = [];
  const seconds = options.seconds ?? 4;
  for (const lineMBps of options.ratesMBps ?? [10, 100]) {
    const shardBytes = lineMBps >= 50 ? 32 * MB : 4 * MB;
    const shards = Math.max(4, Math.round((lineMBps * seconds * MB) / shardBytes));
    const spec = { shards, shardBytes };
    const rate = { rateBytesPerS: lineMBps * MB };

    const raw = await serve(options.serverUrl, spec);
    await setFault(options.serverUrl, raw.record, rate);
    const rawMBps = raw.bytes / MB / (await rawFetch(raw.shardUrls, 4));

    const model = await serve(options.serverUrl, spec);
    await setFault(options.serverUrl, model.record, rate);
    const manager = new CacheManager(options.backend ?? "indexeddb");
    const events: Array<{ at: number; p: LoadProgress }> = [];
    const result = await manager.ensure(model.record, { maxBufferedBytes: options.maxBufferedBytes, onProgress: (p) => events.push({ at: performance.now(), p }) });
    const end = performance.now();
    await manager.delete(model.record.model_id, model.record);

    const downloading = events.filter((e) => e.p.phase === "download");
    const first = downloading.find((e) => e.p.loadedBytes > 0 && e.p.loadedBytes < e.p.totalBytes) ?? downloading[0];
    const duration = (end - first.at) / 1000;
    const judged = downloading.filter((e) => e.p.etaS !== null && e.p.loadedBytes >= 0.05 * e.p.totalBytes && e.p.loadedBytes < e.p.totalBytes);
    const errors = judged.map((e) => Math.abs((e.p.etaS as number) - (end - e.at) / 1000));
    const worstAt = judged[errors.indexOf(Math.max(...errors))];
    const point = (e: { at: number; p: LoadProgress }): [number, number, number | null, number] => [round2((e.at - first.at) / 1000), round2(e.p.fraction), e.p.etaS === null ? null : round2(e.p.etaS), round2((end - e.at) / 1000)];
    const relative = judged.filter((e) => (end - e.at) / 1000 >= 0.5).map((e) => Math.abs((e.p.etaS as number) - (end - e.at) / 1000) / ((end - e.at) / 1000));
    const lastRate = [...downloading].reverse().find((e) => typeof e.p.bytesPerS === "number")?.p.bytesPerS ?? null;
    rows.push({
      lineMBps,
      modelBytes: model.bytes,
      rawMBps,
      libraryMBps: model.bytes / MB / duration,
      etaWorstError: errors.length ? Math.max(...errors) / duration : NaN,
      etaMedianError: relative.length ? median(relative) : NaN,
      reportedMBps: lastRate === null ? null : lastRate / MB,
      peakBufferedBytes: result.peakBufferedBytes,
      trace: downloading
        .filter((e, i, all) => i === 0 || Math.floor(e.p.fraction * 20) > Math.floor(all[i - 1].p.fraction * 20))
        .map(point),
      worst: worstAt ? point(worstAt) : null,
      ...(options.keepEvents ? { events: downloading.map((e): [number, number, number, number | null, number] => [e.at - first.at, e.p.loadedBytes, e.p.totalBytes, e.p.etaS, (end - e.at) / 1000]) } : {}),
    });
  }
  return rows;
}
