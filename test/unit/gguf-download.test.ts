/**
 * A GGUF model's files through our downloader (cache/gguf-artifacts.ts, the
 * "gguf" layout of downloader.ts): the file list comes from the record's URL
 * (a split GGUF's parts beside the first), confined to its folder; the file
 * is stored in the `wllama/gguf` scope under its URL; its SHA-256 is checked
 * where the record pins one; its size is known (quota, progress total) as
 * soon as its response says; it is capped at 2 GiB; a stall fails it; a
 * stored file is not fetched again. Runs the real downloader in Node against
 * a local server, with an in-memory store standing in for the browser's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { downloadModel } from "../../src/cache/downloader.js";
import { ggufFileNames, ggufPlan } from "../../src/cache/gguf-artifacts.js";
import { MAX_FILE_BYTES } from "../../src/cache/limits.js";
import type { ArtifactStore, StoredValue } from "../../src/cache/store.js";
import type { Scope } from "../../src/cache/layout.js";
import type { LoadProgress } from "../../src/engine/types.js";
import type { ModelRecord } from "../../src/models/record.js";

/**
 * Byte-for-byte equality of a stored file. Not `toEqual`: vitest's deep
 * equality walks a 256 KiB array element by element (about 1 s alone, 8.5 s
 * measured on this loaded 2-core machine), so these tests passed alone and
 * timed out under load.
 */
function expectSameBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  expect(actual!.length).toBe(expected.length);
  const first = actual!.findIndex((byte, i) => byte !== expected[i]);
  expect(first, `first differing byte`).toBe(-1);
}

const FILE = new Uint8Array(256 * 1024).map((_, i) => (i * 7919) % 251);
const sha256 = (bytes: Uint8Array) => `sha256-${createHash("sha256").update(bytes).digest("base64")}`;
const part = (n: number) => FILE.map((b) => (b + n) % 256);

let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.push(path);
    if (path.startsWith("/huge/")) {
      // Declares more than a GGUF file may be, then sends nothing.
      res.writeHead(200, { "content-length": String(MAX_FILE_BYTES.gguf + 1) });
      res.flushHeaders();
      req.on("close", () => res.destroy());
      return;
    }
    const split = /-(\d{5})-of-\d{5}\.gguf$/.exec(path);
    const body = split ? part(Number(split[1])) : FILE;
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length) });
    if (path.startsWith("/stall/")) {
      res.write(body.subarray(0, 1024));
      return; // never ends
    }
    if (path.startsWith("/slow/")) {
      // Four quarters 80 ms apart: progress is reported while the file arrives.
      const quarter = body.length / 4;
      let at = 0;
      const next = () => {
        res.write(body.subarray(at * quarter, (at + 1) * quarter));
        if (++at < 4) setTimeout(next, 80);
        else res.end();
      };
      return next();
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => {
  hits.length = 0;
  vi.unstubAllGlobals();
});

class MemoryStore implements ArtifactStore {
  readonly backend = "indexeddb" as const;
  readonly files = new Map<string, Uint8Array>();
  async has(scope: Scope, url: string) {
    return this.files.has(`${scope} ${url}`);
  }
  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const bytes = this.files.get(`${scope} ${url}`);
    return bytes ? { kind: "bytes", data: bytes.slice().buffer } : undefined;
  }
  async write(scope: Scope, url: string, bytes: Uint8Array) {
    this.files.set(`${scope} ${url}`, bytes.slice());
  }
  async remove(scope: Scope, url: string) {
    this.files.delete(`${scope} ${url}`);
  }
  async urls(scope: Scope) {
    return [...this.files.keys()].filter((key) => key.startsWith(`${scope} `)).map((key) => key.slice(scope.length + 1));
  }
  async clear(scope: Scope) {
    for (const key of [...this.files.keys()]) if (key.startsWith(`${scope} `)) this.files.delete(key);
  }
}

const gguf = (model: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({ model, model_id: "g", model_lib: "", engine: { kind: "wllama", wasm: "x" }, ...extra });

describe("the GGUF file list", () => {
  it("one file, or every part of a split GGUF when the record names the first", () => {
    expect(ggufFileNames(gguf(`${base}/m/tiny.gguf`))).toEqual(["tiny.gguf"]);
    expect(ggufFileNames(gguf(`${base}/m/big-00001-of-00003.gguf`))).toEqual(["big-00001-of-00003.gguf", "big-00002-of-00003.gguf", "big-00003-of-00003.gguf"]);
    expect(ggufPlan(gguf(`${base}/m/big-00001-of-00003.gguf`)).artifacts.map((a) => a.url)).toEqual([1, 2, 3].map((n) => `${base}/m/big-0000${n}-of-00003.gguf`));
  });

  it.each([
    ["an encoded separator in its name", "/m/..%2F..%2Fadmin%2Fsecret.gguf"],
    ["an encoded backslash", "/m/..%5Csecret.gguf"],
    ["a query string", "/m/tiny.gguf?redirect=/admin"],
  ])("a GGUF URL with %s is refused (400) before anything is fetched", async (_what, path) => {
    const store = new MemoryStore();
    const error = await downloadModel(gguf(`${base}${path}`), { store, layout: "gguf", retries: 0 }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, code: "model_url_refused", param: "model" });
    expect(hits).toEqual([]);
    expect(store.files.size).toBe(0);
  });
});

describe("downloading a GGUF into the store", () => {
  it("stores the file under its URL in the wllama/gguf scope; a second download fetches nothing", async () => {
    const store = new MemoryStore();
    const record = gguf(`${base}/m/tiny.gguf`);
    const first = await downloadModel(record, { store, layout: "gguf" });
    expect(first.fetchedBytes).toBe(FILE.length);
    expect(first.totalBytes).toBe(FILE.length);
    expectSameBytes(store.files.get(`wllama/gguf ${base}/m/tiny.gguf`), FILE);
    hits.length = 0;
    const again = await downloadModel(record, { store, layout: "gguf" });
    expect(again.fetchedBytes).toBe(0);
    expect(hits).toEqual([]);
  });

  it("fetches and stores every part of a split GGUF", async () => {
    const store = new MemoryStore();
    await downloadModel(gguf(`${base}/m/big-00001-of-00002.gguf`), { store, layout: "gguf" });
    expectSameBytes(store.files.get(`wllama/gguf ${base}/m/big-00001-of-00002.gguf`), part(1));
    expectSameBytes(store.files.get(`wllama/gguf ${base}/m/big-00002-of-00002.gguf`), part(2));
  });

  it("the progress total is the file's size from the first report (so the ETA is too), not the bytes so far", async () => {
    const progress: LoadProgress[] = [];
    await downloadModel(gguf(`${base}/slow/tiny.gguf`), { store: new MemoryStore(), layout: "gguf", onProgress: (p) => progress.push(p) });
    const during = progress.filter((p) => p.loadedBytes > 0 && p.loadedBytes < FILE.length);
    expect(during.length).toBeGreaterThan(0);
    for (const p of progress) expect(p.totalBytes).toBe(FILE.length);
    expect(during.every((p) => p.fraction < 1)).toBe(true);
    expect(progress.at(-1)).toMatchObject({ loadedBytes: FILE.length, fraction: 1 });
  });

  it("checks the SHA-256 the record pins for the file name: a mismatch is stored nowhere", async () => {
    const good = new MemoryStore();
    await downloadModel(gguf(`${base}/m/tiny.gguf`, { integrity: { "tiny.gguf": sha256(FILE) }, require_integrity: true }), { store: good, layout: "gguf" });
    expect(good.files.size).toBe(1);
    const bad = new MemoryStore();
    const error = await downloadModel(gguf(`${base}/m/tiny.gguf`, { integrity: { "tiny.gguf": sha256(part(9)) } }), { store: bad, layout: "gguf", retries: 0 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "integrity_error" });
    expect(bad.files.size).toBe(0);
  });

  it("require_integrity without a hash for the file refuses before fetching", async () => {
    const error = await downloadModel(gguf(`${base}/m/tiny.gguf`, { require_integrity: true }), { store: new MemoryStore(), layout: "gguf" }).catch((e) => e);
    expect(error).toMatchObject({ status: 400, code: "integrity_missing" });
    expect(error.message).toContain("tiny.gguf");
    expect(hits).toEqual([]);
  });

  it("checks the quota once the response tells the size: 507 before a byte is stored", async () => {
    vi.stubGlobal("navigator", { storage: { estimate: async () => ({ usage: 0, quota: FILE.length - 1 }) } });
    const store = new MemoryStore();
    const error = await downloadModel(gguf(`${base}/m/tiny.gguf`), { store, layout: "gguf", retries: 0 }).catch((e) => e);
    expect(error).toMatchObject({ status: 507, code: "insufficient_storage" });
    expect(store.files.size).toBe(0);
  });

  it("the quota counts the parts of a split GGUF that download at once: each fits alone, both do not", async () => {
    const store = new MemoryStore();
    // The browser's usage: what the store holds (so a part stored counts once it is stored).
    const usage = () => [...store.files.values()].reduce((sum, bytes) => sum + bytes.length, 0);
    vi.stubGlobal("navigator", { storage: { estimate: async () => ({ usage: usage(), quota: FILE.length + FILE.length / 2 }) } });
    // Both parts arrive slowly (four quarters 80 ms apart), so both are declared before either is stored.
    const error = await downloadModel(gguf(`${base}/slow/big-00001-of-00002.gguf`), { store, layout: "gguf", retries: 0, concurrency: 2 }).catch((e) => e);
    expect(error).toMatchObject({ status: 507, code: "insufficient_storage" });
    expect(hits.filter((path) => path.startsWith("/slow/")).length).toBe(2);
  });

  it("refuses a file that declares more than 2 GiB (wllama's limit per file) without reading it", async () => {
    const error = await downloadModel(gguf(`${base}/huge/tiny.gguf`), { store: new MemoryStore(), layout: "gguf", retries: 0 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(error.message).toMatch(/larger than the 2048 MiB/);
  });

  it("a host that stops sending fails the download after the stall timeout", async () => {
    const store = new MemoryStore();
    const error = await downloadModel(gguf(`${base}/stall/tiny.gguf`), { store, layout: "gguf", retries: 0, stallTimeoutMs: 300 }).catch((e) => e);
    expect(error).toMatchObject({ status: 503, code: "download_failed" });
    expect(error.message).toMatch(/no data arrived/);
    expect(store.files.size).toBe(0);
  });
});
