/**
 * web-llm's Cache API layout (`ArtifactCache`, bundle L6512–6595): one cache
 * per scope, named like the scope, keyed by the file's full URL. web-llm
 * reads the response body as bytes or JSON, so the stored response needs only
 * the bytes and a content type.
 */
import type { StoreType } from "./artifacts.js";
import type { Scope } from "./layout.js";
import { contentTypeOf, type ArtifactStore, type StoredValue, type StreamingWrite } from "./store.js";

export class CacheApiArtifactStore implements ArtifactStore {
  readonly backend = "cache" as const;

  async has(scope: Scope, url: string): Promise<boolean> {
    return (await (await caches.open(scope)).match(url)) !== undefined;
  }

  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const response = await (await caches.open(scope)).match(url);
    return response ? { kind: "bytes", data: await response.arrayBuffer() } : undefined;
  }

  async readBlob(scope: Scope, url: string): Promise<Blob | undefined> {
    return (await (await caches.open(scope)).match(url))?.blob();
  }

  async write(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType): Promise<void> {
    const response = new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: { "content-type": contentTypeOf(storeType), "content-length": String(bytes.byteLength) } });
    await (await caches.open(scope)).put(url, response);
  }

  /** `cache.put` of a response whose body is fed chunk by chunk: the entry exists only once the body ends without error. */
  async openWrite(scope: Scope, url: string, storeType: StoreType, size: number | null): Promise<StreamingWrite> {
    const cache = await caches.open(scope);
    const pipe = new TransformStream<Uint8Array, Uint8Array>(undefined, undefined, { highWaterMark: 4 });
    const writer = pipe.writable.getWriter();
    const headers: Record<string, string> = { "content-type": contentTypeOf(storeType) };
    if (size !== null) headers["content-length"] = String(size);
    const put = cache.put(url, new Response(pipe.readable as ReadableStream<Uint8Array<ArrayBuffer>>, { status: 200, headers }));
    // Seen by commit(); an early rejection must not go unhandled meanwhile.
    put.catch(() => undefined);
    return {
      write: async (chunk) => {
        await writer.ready;
        void writer.write(chunk).catch(() => undefined);
      },
      commit: async () => {
        await writer.close();
        await put;
      },
      abort: async () => {
        await writer.abort(new DOMException("The download was discarded.", "AbortError")).catch(() => undefined);
        await put.catch(() => undefined);
      },
    };
  }

  async remove(scope: Scope, url: string): Promise<void> {
    await (await caches.open(scope)).delete(url);
  }

  async urls(scope: Scope): Promise<string[]> {
    return (await (await caches.open(scope)).keys()).map((request) => request.url);
  }

  async clear(scope: Scope): Promise<void> {
    await caches.delete(scope);
  }
}
