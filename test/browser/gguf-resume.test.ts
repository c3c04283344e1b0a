/**
 * A GGUF download resumes inside the file, in real Chromium, in each cache
 * backend (cache/resumable-fetch.ts, cache/gguf-parts.ts,
 * cache/range-resume.ts): the bytes an interrupted download stored stay, the
 * next load asks the server for the rest with `Range: bytes=N-`, the stored
 * file is byte-identical to the server's and passes its SHA-256, and wllama
 * then runs a chat on it. A server that ignores Range, or whose file changed
 * meanwhile, gets the file fetched again from its start, never spliced.
 *
 * The GGUF server (test/support/gguf-server.ts) counts, per path, the bytes
 * it sent and the Range requests; a folder named `hang<N>…` stops its first
 * response after N bytes (this test then aborts the load), `cut<N>…` drops
 * the connection there.
 */
import { describe, expect, it } from "vitest";
import { CacheManager } from "../../src/cache/manager.js";
import { createClient, type LoadProgress, type ModelRecord } from "../../src/index.js";
import { server, tinyRecord } from "./support/tiny-gguf.js";

/** Where the first response stops: past the header and vocabulary, inside the weights (the two versions differ there). */
const CUT = 300_000;
const BACKENDS = ["indexeddb", "opfs", "cache"] as const;

async function stats(): Promise<Record<string, number>> {
  return (await fetch(`${server}/__stats`)).json();
}

async function bytesOf(url: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(url)).arrayBuffer());
}

async function sri(bytes: Uint8Array | Blob): Promise<string> {
  const buffer = bytes instanceof Blob ? await bytes.arrayBuffer() : bytes;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer as ArrayBuffer));
  return `sha256-${btoa(String.fromCharCode(...digest))}`;
}

/** The tiny GGUF as served (the first version of a `changes` folder's file). */
const tiny = bytesOf(`${server}/tiny.gguf`);

/** A record of the tiny GGUF in a folder of its own (`folder` asks the server for faults). */
function record(folder: string, extra: Partial<ModelRecord> = {}): { record: ModelRecord; path: string } {
  const id = `${folder}-${Date.now()}`;
  const path = `/m/${id}/tiny.gguf`;
  return { record: { ...tinyRecord(id), model: `${server}${path}`, ...extra }, path };
}

/** Starts a load that the server stops after CUT bytes, and aborts it once those bytes were sent (and had time to arrive). */
async function interruptedLoad(manager: CacheManager, rec: ModelRecord, path: string): Promise<void> {
  const controller = new AbortController();
  const load = manager.ensure(rec, { layout: "gguf", signal: controller.signal });
  load.catch(() => undefined);
  for (let i = 0; i < 200 && ((await stats())[`${path} bytes`] ?? 0) < CUT; i++) await new Promise((r) => setTimeout(r, 25));
  expect((await stats())[`${path} bytes`]).toBe(CUT);
  await new Promise((r) => setTimeout(r, 500));
  controller.abort();
  await expect(load).rejects.toMatchObject({ name: "AbortError" });
  // The abort ends the request itself: the server sees its connection closed (a leaked one stays open for good).
  for (let i = 0; i < 200 && !(await stats())[`${path} hang closed`]; i++) await new Promise((r) => setTimeout(r, 25));
  expect((await stats())[`${path} hang closed`]).toBe(1);
}

/** Progress never goes back, and ends at 1. */
function expectMonotonic(events: LoadProgress[]): void {
  for (let i = 1; i < events.length; i++) {
    expect(events[i].fraction).toBeGreaterThanOrEqual(events[i - 1].fraction);
    expect(events[i].loadedBytes).toBeGreaterThanOrEqual(events[i - 1].loadedBytes);
  }
  expect(events.at(-1)?.fraction).toBe(1);
}

describe.each(BACKENDS)("%s", (backend) => {
  it("an aborted download resumes with a Range request for the rest only; the file is identical, passes its SHA-256, and wllama chats on it", async () => {
    const file = await tiny;
    const { record: rec, path } = record(`hang${CUT}.${backend}`, { integrity: { "tiny.gguf": await sri(file) }, require_integrity: true });
    const manager = new CacheManager(backend);
    try {
      await interruptedLoad(manager, rec, path);
      expect((await manager.list()).find((m) => m.id === rec.model_id)).toMatchObject({ complete: false });

      const events: LoadProgress[] = [];
      const result = await manager.ensure(rec, { layout: "gguf", onProgress: (p) => events.push(p) });
      const counts = await stats();
      // One Range request, from the first byte not stored; only the rest crossed the network.
      expect(counts[`${path} range asked`]).toBe(1);
      expect(counts[`${path} range`]).toBe(1);
      expect(counts[`${path} range from`]).toBe(CUT);
      expect(counts[`${path} bytes`]).toBe(file.length);
      expect(result.fetchedBytes).toBe(file.length - CUT);
      // The progress starts where the first load left off, counts the stored bytes as loaded, and has no rate from them.
      expect(events[0]).toMatchObject({ loadedBytes: CUT, totalBytes: file.length, etaS: null, bytesPerS: null });
      expect(events[0].fraction).toBeCloseTo(CUT / file.length, 6);
      expectMonotonic(events);

      const [blob] = await manager.readGguf(rec);
      expect(blob.size).toBe(file.length);
      expect(await sri(blob)).toBe(await sri(file));
      expect((await manager.list()).find((m) => m.id === rec.model_id)).toMatchObject({ complete: true, bytes: file.length });

      // wllama loads the stored file, with no request, and answers.
      const client = createClient({ cache: backend, models: [rec] });
      try {
        const reply = await client.chat.completions.create({ model: rec.model_id, messages: [{ role: "user", content: "hello world" }], max_tokens: 6, temperature: 0 });
        expect(reply.usage.completion_tokens).toBeGreaterThan(0);
        expect(reply.choices[0].message.content?.length).toBeGreaterThan(0);
        expect((await stats())[path]).toBe(counts[path]);
      } finally {
        client.terminate();
      }
    } finally {
      await manager.delete(rec.model_id, rec, "gguf");
    }
    // Delete removes the parts too: nothing of the file is left in the scope.
    const store = await manager.store();
    expect((await store.urls("wllama/gguf")).filter((url) => url.startsWith(rec.model))).toEqual([]);
  }, 60_000);
});

describe.each(BACKENDS)("%s: a closed page", (backend) => {
  it("keeps the 16 MiB pieces its download had stored; the next load asks only for the rest", async () => {
    const MiB = 1024 * 1024;
    const { record: rec, path } = record(`big.hang${20 * MiB}.${backend}`);
    const file = await bytesOf(`${server}/m/big/x.gguf`);
    const manager = new CacheManager(backend);
    const worker = new Worker(new URL("./support/gguf-download-worker.ts", import.meta.url), { type: "module" });
    try {
      await new Promise((resolve) => (worker.onmessage = resolve));
      worker.postMessage({ record: rec, backend });
      for (let i = 0; i < 400 && ((await stats())[`${path} bytes`] ?? 0) < 20 * MiB; i++) await new Promise((r) => setTimeout(r, 25));
      // The first piece is committed as it fills (its meta entry says so); then the page goes away mid-piece, with no chance to save anything.
      const store = await manager.store();
      const meta = `${rec.model}?webgpu-openai-part=meta`;
      for (let i = 0; i < 400 && !(await store.urls("wllama/gguf")).includes(meta); i++) await new Promise((r) => setTimeout(r, 25));
      worker.terminate();
      await manager.ensure(rec, { layout: "gguf" });
      const counts = await stats();
      expect(counts[`${path} range from`]).toBe(16 * MiB);
      expect(counts[`${path} bytes`]).toBe(20 * MiB + file.length - 16 * MiB);
      expect(await sri((await manager.readGguf(rec))[0])).toBe(await sri(file));
      // The terminated worker's request ended with it (the server saw its connection close).
      for (let i = 0; i < 200 && !(await stats())[`${path} hang closed`]; i++) await new Promise((r) => setTimeout(r, 25));
      expect((await stats())[`${path} hang closed`]).toBe(1);
    } finally {
      worker.terminate();
      await manager.delete(rec.model_id, rec, "gguf");
    }
  }, 60_000);
});

describe("indexeddb", () => {
  it("a dropped connection is resumed within the same load, from the bytes that arrived", async () => {
    const file = await tiny;
    const { record: rec, path } = record(`cut${CUT}`, { integrity: { "tiny.gguf": await sri(file) } });
    const manager = new CacheManager("indexeddb");
    try {
      const events: LoadProgress[] = [];
      const result = await manager.ensure(rec, { layout: "gguf", onProgress: (p) => events.push(p) });
      const counts = await stats();
      expect(counts[`${path} range`]).toBe(1);
      expect(counts[`${path} range from`]).toBe(CUT);
      expect(counts[`${path} bytes`]).toBe(file.length);
      expect(result.fetchedBytes).toBe(file.length);
      expectMonotonic(events);
      expect(await sri((await manager.readGguf(rec))[0])).toBe(await sri(file));
    } finally {
      await manager.delete(rec.model_id, rec, "gguf");
    }
  });

  it("a server that ignores Range: its 200 is taken as the whole file, from byte 0, and nothing is spliced", async () => {
    const file = await tiny;
    const { record: rec, path } = record(`hang${CUT}.norange`, { integrity: { "tiny.gguf": await sri(file) } });
    const manager = new CacheManager("indexeddb");
    try {
      await interruptedLoad(manager, rec, path);
      const events: LoadProgress[] = [];
      const result = await manager.ensure(rec, { layout: "gguf", onProgress: (p) => events.push(p) });
      const counts = await stats();
      // The rest was asked for; the server sent the whole file, which is used as it is (no second request).
      expect(counts[`${path} range asked`]).toBe(1);
      expect(counts[`${path} range`]).toBeUndefined();
      expect(counts[path]).toBe(2);
      expect(counts[`${path} bytes`]).toBe(CUT + file.length);
      expect(result.fetchedBytes).toBe(file.length);
      expectMonotonic(events);
      const [blob] = await manager.readGguf(rec);
      expect(blob.size).toBe(file.length);
      expect(await sri(blob)).toBe(await sri(file));
    } finally {
      await manager.delete(rec.model_id, rec, "gguf");
    }
  });

  it("a file that changed on the server (another ETag) is fetched again from its start, not spliced onto the old bytes", async () => {
    const old = await tiny;
    const { record: rec, path } = record(`hang${CUT}.changes`);
    const manager = new CacheManager("indexeddb");
    try {
      await interruptedLoad(manager, rec, path);
      await manager.ensure(rec, { layout: "gguf" });
      const counts = await stats();
      expect(counts[`${path} range asked`]).toBe(1);
      // The 206 of the new version was refused, and the file asked for again without Range.
      expect(counts[path]).toBe(3);
      const [blob] = await manager.readGguf(rec);
      const current = await bytesOf(`${server}${path}`);
      // The versions have the same size and differ inside the stored prefix: a splice would be neither.
      expect(current.length).toBe(old.length);
      expect(await sri(current.subarray(0, CUT))).not.toBe(await sri(old.subarray(0, CUT)));
      expect(await sri(blob)).toBe(await sri(current));
    } finally {
      await manager.delete(rec.model_id, rec, "gguf");
    }
  });
});
