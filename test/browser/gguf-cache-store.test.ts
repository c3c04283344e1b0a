/**
 * A GGUF's file in each cache backend, in real Chromium (cache/idb-store.ts,
 * cache/gguf-artifacts.ts): streamed into the store, never whole in the
 * downloader's buffers, and read back as a Blob of its size. The file is
 * over 127 MiB, the most Chromium takes as one IndexedDB value: held as an
 * ArrayBuffer record, as MLC's shards are, it could not be stored there at
 * all ("The serialized keys and/or value are too large").
 */
import { expect, inject, it } from "vitest";
import { CacheManager } from "../../src/cache/manager.js";
import type { ModelRecord } from "../../src/models/record.js";

const server = inject("artifactServer");
const MiB = 1024 * 1024;
const BYTES = 130 * MiB;

it.each(["indexeddb", "opfs", "cache"] as const)("%s: a 130 MiB GGUF is stored streamed (at most 4 MiB buffered) and read back as a Blob", async (backend) => {
  // The artifact server's shard file stands in for a .gguf (the downloader does not read its contents).
  const spec = (await (await fetch(`${server}/__control/model`, { method: "POST", body: JSON.stringify({ shards: 1, shardBytes: BYTES, md5: false }) })).json()) as { baseUrl: string };
  const record: ModelRecord = { model: `${spec.baseUrl}params_shard_0.bin`, model_id: `big-gguf-${backend}`, model_lib: "", engine: { kind: "wllama", wasm: "unused" } };
  const manager = new CacheManager(backend);
  try {
    const result = await manager.ensure(record, { layout: "gguf" });
    expect(result.fetchedBytes).toBe(BYTES);
    expect(result.peakBufferedBytes).toBeLessThanOrEqual(4 * MiB);
    const [blob] = await manager.readGguf(record);
    expect(blob.size).toBe(BYTES);
    // The stored bytes are the served ones (compared at both ends).
    const served = new Uint8Array(await (await fetch(record.model)).arrayBuffer());
    expect(new Uint8Array(await blob.slice(0, 64).arrayBuffer())).toEqual(served.slice(0, 64));
    expect(new Uint8Array(await blob.slice(BYTES - 64).arrayBuffer())).toEqual(served.slice(BYTES - 64));
    expect((await manager.list()).find((m) => m.id === record.model_id)).toMatchObject({ bytes: BYTES, complete: true });
  } finally {
    await manager.delete(record.model_id, record, "gguf");
  }
  expect((await manager.list()).some((m) => m.id === record.model_id)).toBe(false);
}, 120_000);
