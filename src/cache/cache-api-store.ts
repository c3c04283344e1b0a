/**
 * web-llm's Cache API layout (`ArtifactCache`, bundle L6512–6595): one cache
 * per scope, named like the scope, keyed by the file's full URL. web-llm
 * reads the response body as bytes or JSON, so the stored response needs only
 * the bytes and a content type.
 */
import type { StoreType } from "./artifacts.js";
import type { Scope } from "./layout.js";
import type { ArtifactStore, StoredValue } from "./store.js";

export class CacheApiArtifactStore implements ArtifactStore {
  readonly backend = "cache" as const;

  async has(scope: Scope, url: string): Promise<boolean> {
    return (await (await caches.open(scope)).match(url)) !== undefined;
  }

  async read(scope: Scope, url: string): Promise<StoredValue | undefined> {
    const response = await (await caches.open(scope)).match(url);
    return response ? { kind: "bytes", data: await response.arrayBuffer() } : undefined;
  }

  async write(scope: Scope, url: string, bytes: Uint8Array, storeType: StoreType, contentType?: string): Promise<void> {
    const type = contentType ?? (storeType === "json" ? "application/json" : "application/octet-stream");
    const response = new Response(bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: { "content-type": type, "content-length": String(bytes.byteLength) } });
    await (await caches.open(scope)).put(url, response);
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
