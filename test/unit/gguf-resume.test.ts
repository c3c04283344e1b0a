/**
 * A GGUF resumed inside the file, in Node (cache/gguf-parts.ts,
 * cache/resumable-fetch.ts), with an in-memory store that streams writes and
 * reads Blobs back as the browser's three do: the parts are committed as they
 * fill, so a page closed mid-download keeps them; the quota counts only the
 * rest of a resumed file; the stall watchdog still ends a stalled attempt,
 * whose bytes then stay. The browser test (test/browser/gguf-resume.test.ts)
 * runs the same in each real backend, with wllama on the result.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { downloadModel } from "../../src/cache/downloader.js";
import { ggufPlan } from "../../src/cache/gguf-artifacts.js";
import { PartsWrite, readStoredGguf, storedPrefix } from "../../src/cache/gguf-parts.js";
import type { Scope } from "../../src/cache/layout.js";
import type { ArtifactStore, StoredValue, StreamingWrite } from "../../src/cache/store.js";
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
const HALF = FILE.length / 2;
const sha256 = (bytes: Uint8Array) => `sha256-${createHash("sha256").update(bytes).digest("base64")}`;

let server: Server;
let base: string;
const requests: Array<{ path: string; range?: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ path, range: req.headers.range });
    const first = requests.filter((r) => r.path === path).length === 1;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const start = range ? Number(range[1]) : 0;
    const headers = { etag: '"v1"', "content-type": "application/octet-stream", "content-length": String(FILE.length - start) };
    res.writeHead(range ? 206 : 200, range ? { ...headers, "content-range": `bytes ${start}-${FILE.length - 1}/${FILE.length}` } : headers);
    if (path.startsWith("/stall/") && first) {
      // The first response sends half the file, then nothing.
      res.write(FILE.subarray(0, HALF));
      req.on("close", () => res.destroy());
      return;
    }
    res.end(FILE.subarray(start));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => {
  requests.length = 0;
  vi.unstubAllGlobals();
});

/** Streams writes (committed on `commit`, gone on `abort`) and reads Blobs back, as the browser stores do. */
class StreamingMemoryStore implements ArtifactStore {
  readonly backend = "cache" as const;
  readonly files = new Map<string, Uint8Array>();
  async has(scope: Scope, url: string) {
    return this.files.has(`${scope} ${url}`);
  }
  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const bytes = this.files.get(`${scope} ${url}`);
    return bytes ? { kind: "bytes", data: bytes.slice().buffer } : undefined;
  }
  async readBlob(scope: Scope, url: string) {
    const bytes = this.files.get(`${scope} ${url}`);
    return bytes ? new Blob([bytes.slice()]) : undefined;
  }
  async write(scope: Scope, url: string, bytes: Uint8Array) {
    this.files.set(`${scope} ${url}`, bytes.slice());
  }
  async openWrite(scope: Scope, url: string): Promise<StreamingWrite> {
    const chunks: BlobPart[] = [];
    return {
      write: async (chunk) => void chunks.push(chunk.slice()),
      commit: async () => void this.files.set(`${scope} ${url}`, new Uint8Array(await new Blob(chunks).arrayBuffer())),
      abort: async () => void (chunks.length = 0),
    };
  }
  async remove(scope: Scope, url: string) {
    this.files.delete(`${scope} ${url}`);
  }
  async urls(scope: Scope) {
    return [...this.files.keys()].filter((key) => key.startsWith(`${scope} `)).map((key) => key.slice(scope.length + 1));
  }
  async clear() {
    this.files.clear();
  }
  /** Bytes held, as the browser's usage would count them. */
  get usage(): number {
    return [...this.files.values()].reduce((sum, b) => sum + b.length, 0);
  }
}

const gguf = (model: string, extra: Partial<ModelRecord> = {}): ModelRecord => ({ model, model_id: "g", model_lib: "", engine: { kind: "wllama", wasm: "x" }, ...extra });

describe("a GGUF stored in parts", () => {
  it("each part is committed as it fills, without waiting for the end: a page closed mid-download keeps them", async () => {
    const store = new StreamingMemoryStore();
    const [artifact] = ggufPlan(gguf(`${base}/m/tiny.gguf`)).artifacts;
    const write = new PartsWrite(store, artifact, { total: FILE.length, validator: { etag: '"v1"' } }, [], 1000);
    await write.write(FILE.subarray(0, 2500));
    // Nothing more is called (the page went away): the two full parts are there for the next load.
    const stored = await storedPrefix(store, artifact);
    expect(stored?.prefix).toEqual({ bytes: 2000, total: FILE.length, validator: { etag: '"v1"' } });
    expect(new Uint8Array(await new Blob(stored?.blobs).arrayBuffer())).toEqual(FILE.subarray(0, 2000));
    expect(await store.has(artifact.scope, artifact.url)).toBe(false);
  });
});

describe("a resumed download", () => {
  it("a stalled attempt keeps its bytes; the next load asks for the rest only, counts only the rest against the quota, and passes the file's SHA-256", async () => {
    const store = new StreamingMemoryStore();
    const record = gguf(`${base}/stall/tiny.gguf`, { integrity: { "tiny.gguf": sha256(FILE) } });
    const stalled = await downloadModel(record, { store, layout: "gguf", retries: 0, stallTimeoutMs: 300 }).catch((e) => e);
    expect(stalled).toMatchObject({ status: 503, code: "download_failed" });
    expect(stalled.message).toMatch(/no data arrived/);
    expect(store.usage).toBeGreaterThanOrEqual(HALF);

    // Room for the rest of the file (and a little), not for the whole of it.
    vi.stubGlobal("navigator", { storage: { estimate: async () => ({ usage: store.usage, quota: store.usage + HALF + 4096 }) } });
    const result = await downloadModel(record, { store, layout: "gguf", retries: 0 });
    expect(requests.map((r) => r.range)).toEqual([undefined, `bytes=${HALF}-`]);
    expect(result.fetchedBytes).toBe(HALF);
    expect(result.totalBytes).toBe(FILE.length);
    const blob = await readStoredGguf(store, "wllama/gguf", record.model);
    expectSameBytes(new Uint8Array(await (blob as Blob).arrayBuffer()), FILE);
  });

  it("a stored prefix that does not match the pinned SHA-256 fails the file's check, and the file is then fetched whole", async () => {
    const store = new StreamingMemoryStore();
    const record = gguf(`${base}/stall/bad.gguf`, { integrity: { "bad.gguf": sha256(FILE) } });
    await downloadModel(record, { store, layout: "gguf", retries: 0, stallTimeoutMs: 300 }).catch(() => undefined);
    // The stored bytes are corrupted on disk.
    const [key] = (await store.urls("wllama/gguf")).filter((url) => url.endsWith("part=0"));
    store.files.get(`wllama/gguf ${key}`)![10] ^= 0xff;
    const result = await downloadModel(record, { store, layout: "gguf", retries: 1 });
    expect(requests.map((r) => r.range)).toEqual([undefined, `bytes=${HALF}-`, undefined]);
    expect(result.fetchedBytes).toBe(FILE.length - HALF + FILE.length);
    const blob = await readStoredGguf(store, "wllama/gguf", record.model);
    expectSameBytes(new Uint8Array(await (blob as Blob).arrayBuffer()), FILE);
  });
});
