/**
 * Routes `globalThis.fetch` calls under `baseURL` to a client, for libraries
 * that take no custom fetch. Every other URL reaches the original fetch
 * untouched. Returns a function that restores the original.
 */
import type { Client } from "./create-client.js";

export interface InterceptOptions {
  /** e.g. `http://localhost.webgpu/v1`. */
  baseURL: string;
}

export function interceptFetch(client: Client, { baseURL }: InterceptOptions): () => void {
  const original = globalThis.fetch;
  const base = baseURL.replace(/\/+$/, "");
  const matches = (url: string) => url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`);
  const patched: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return matches(url) ? client.fetch(input, init) : original(input, init);
  };
  globalThis.fetch = patched;
  return () => {
    if (globalThis.fetch === patched) globalThis.fetch = original;
  };
}
