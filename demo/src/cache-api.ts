/**
 * The demo's view of `client.cache` (list, delete, clear, usage). Read through
 * this one module so the rest of the page does not care whether the client
 * has a cache manager: without one, the panel says so and the rest still works.
 */
import type { Client } from "../../src/index.js";

export interface CachedModel {
  id: string;
  bytes: number;
  complete: boolean;
  lastUsed: number | null;
}

export interface StorageUsage {
  /** Bytes this origin uses, and its quota, as the browser reports them. */
  usage: number | null;
  quota: number | null;
  /** Whether the browser keeps this origin's data under storage pressure. */
  persisted: boolean | null;
}

export interface DemoCache {
  list(): Promise<CachedModel[]>;
  delete(id: string): Promise<void>;
  clear(): Promise<void>;
  usage(): Promise<StorageUsage>;
}

interface ClientCache {
  list(): Promise<unknown>;
  delete(id: string): Promise<unknown>;
  clear(): Promise<unknown>;
  usage(): Promise<unknown>;
}

/** `client.cache`, or null when this build of the client has no cache manager. */
export function cacheOf(client: Client): DemoCache | null {
  const cache = (client as unknown as { cache?: Partial<ClientCache> }).cache;
  if (!cache || typeof cache.list !== "function" || typeof cache.delete !== "function") return null;
  const api = cache as ClientCache;
  return {
    async list() {
      const listed = await api.list();
      const rows = Array.isArray(listed) ? listed : ((listed as { data?: unknown[] })?.data ?? []);
      return rows.map((row) => {
        const r = row as Record<string, unknown>;
        return {
          id: String(r.id ?? r.model ?? "?"),
          bytes: Number(r.bytes ?? r.size ?? 0),
          complete: r.complete !== false,
          lastUsed: typeof r.lastUsed === "number" ? r.lastUsed : null,
        };
      });
    },
    delete: async (id) => void (await api.delete(id)),
    clear: async () => void (await (api.clear ? api.clear() : Promise.resolve())),
    async usage() {
      const report = (typeof api.usage === "function" ? ((await api.usage()) as Record<string, unknown>) : {}) ?? {};
      const origin = (report.origin ?? report.storage ?? report) as Record<string, unknown>;
      const num = (v: unknown) => (typeof v === "number" ? v : null);
      const fromBrowser = await browserStorage();
      return {
        usage: num(origin.usage) ?? fromBrowser.usage,
        quota: num(origin.quota) ?? fromBrowser.quota,
        persisted: typeof origin.persisted === "boolean" ? origin.persisted : fromBrowser.persisted,
      };
    },
  };
}

/** What `navigator.storage` says directly (used when the cache manager leaves a field out). */
export async function browserStorage(): Promise<StorageUsage> {
  const storage = navigator.storage;
  const estimate = storage?.estimate ? await storage.estimate().catch(() => ({}) as StorageEstimate) : ({} as StorageEstimate);
  const persisted = storage?.persisted ? await storage.persisted().catch(() => null) : null;
  return { usage: estimate.usage ?? null, quota: estimate.quota ?? null, persisted };
}
