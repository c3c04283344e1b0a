/**
 * A model host and a weight store in memory, for the downloader's own tests
 * in Node: `fetch` is replaced by a function answering each file of a
 * generated MLC model, with per-file overrides (lying headers, stalls).
 */
import { createHash } from "node:crypto";
import type { Scope } from "../../../src/cache/layout.js";
import type { StoreType } from "../../../src/cache/artifacts.js";
import type { ArtifactStore, StoredValue } from "../../../src/cache/store.js";
import type { ModelRecord } from "../../../src/models/record.js";

export const MODEL_URL = "https://models.example/m/test/resolve/main/";

export function memoryStore(): ArtifactStore & { data: Map<string, Uint8Array> } {
  const data = new Map<string, Uint8Array>();
  const key = (scope: Scope, url: string) => `${scope} ${url}`;
  return {
    backend: "indexeddb",
    data,
    async has(scope, url) {
      return data.has(key(scope, url));
    },
    async read(scope, url): Promise<StoredValue | undefined> {
      const bytes = data.get(key(scope, url));
      return bytes ? { kind: "bytes", data: bytes.slice().buffer } : undefined;
    },
    async write(scope: Scope, url: string, bytes: Uint8Array, _type: StoreType) {
      data.set(key(scope, url), bytes.slice());
    },
    async remove(scope, url) {
      data.delete(key(scope, url));
    },
    async urls(scope) {
      return [...data.keys()].filter((k) => k.startsWith(`${scope} `)).map((k) => k.slice(scope.length + 1));
    },
    async clear(scope) {
      for (const k of [...data.keys()]) if (k.startsWith(`${scope} `)) data.delete(k);
    },
  };
}

export const record: ModelRecord = { model: "https://models.example/m/test", model_id: "test-model", model_lib: "https://models.example/lib/test.wasm" } as ModelRecord;

/** Bytes of shard `i` of `size`. */
export function shardBytes(i: number, size: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(size).map((_, j) => (i * 31 + j * 7) & 255);
}

/** One file's answer: a body and headers, or a custom Response. */
export type Answer = Response | (() => Response);

/** The files of a model of `shards` shards of `size` bytes (declared with md5sum), plus `overrides` by file name. */
export function modelFiles(shards: number, size: number, overrides: Record<string, Answer> = {}, declaredSize = size): Map<string, Answer> {
  const files = new Map<string, Answer>();
  const json = (value: unknown) => () => new Response(JSON.stringify(value), { headers: { "content-type": "application/json" } });
  files.set("mlc-chat-config.json", json({ tokenizer_files: ["tokenizer.json"] }));
  const records = Array.from({ length: shards }, (_, i) => ({ dataPath: `params_shard_${i}.bin`, nbytes: declaredSize, md5sum: createHash("md5").update(shardBytes(i, size)).digest("hex") }));
  files.set("tensor-cache.json", json({ records }));
  for (let i = 0; i < shards; i++) files.set(`params_shard_${i}.bin`, () => new Response(shardBytes(i, size)));
  files.set("tokenizer.json", json({ version: "1.0" }));
  files.set("test.wasm", () => new Response(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])));
  for (const [name, answer] of Object.entries(overrides)) files.set(name, answer);
  return files;
}

/** Installs `fetch` answering `files` by the URL's last path segment; returns the requests seen. */
export function serve(files: Map<string, Answer>): { requests: string[]; restore(): void } {
  const original = globalThis.fetch;
  const requests: string[] = [];
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    const name = url.split("/").pop() as string;
    requests.push(name);
    if (init?.signal?.aborted) throw new DOMException("aborted", "AbortError");
    const answer = files.get(name);
    if (!answer) return new Response("not found", { status: 404 });
    return typeof answer === "function" ? answer() : answer;
  }) as typeof fetch;
  return { requests, restore: () => (globalThis.fetch = original) };
}

/** A body stream: `chunks`, then (unless `hang`) the end; `onPull` sees each pull after the first chunk. */
export function body(chunks: Uint8Array[], options: { hang?: boolean; onPull?: () => void } = {}): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i > 0) options.onPull?.();
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else if (options.hang) return new Promise<void>(() => undefined);
      else controller.close();
    },
  });
}
