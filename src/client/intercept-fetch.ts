/**
 * Routes `globalThis.fetch` calls under `baseURL` to a client, for libraries
 * that take no custom fetch. Every other URL reaches the original fetch with
 * its arguments untouched. Returns a function that restores the original.
 */
import type { Client } from "./types.js";
import { isOwnRequest, recordInterception } from "./real-fetch.js";

export interface InterceptOptions {
  /** e.g. `http://localhost.webgpu/v1`: requests to this URL and paths below it are served locally. */
  baseURL: string;
}

/**
 * Patches `globalThis.fetch`. Calling the returned function undoes it; if
 * another library patched fetch after us, our layer turns into a plain
 * pass-through instead of dropping theirs. Call it before constructing SDK
 * clients: some (the OpenAI SDK among them) read `globalThis.fetch` once, when
 * they are created.
 */
export function interceptFetch(client: Pick<Client, "fetch">, { baseURL }: InterceptOptions): () => void {
  const original = globalThis.fetch;
  const base = new URL(baseURL, documentBase());
  const basePath = base.pathname.replace(/\/+$/, "");
  let active = true;

  const matches = (href: string): boolean => {
    let url: URL;
    try {
      url = new URL(href, documentBase());
    } catch {
      return false;
    }
    // Scheme and host, not origin: a non-special scheme's origin is "null" for every URL, so `other://x/v1` would match.
    if (url.protocol !== base.protocol || url.host !== base.host) return false;
    return url.pathname === basePath || url.pathname === `${basePath}/` || url.pathname.startsWith(`${basePath}/`);
  };

  const patched = function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const href = input instanceof URL ? input.href : typeof input === "object" && typeof (input as Request).url === "string" ? (input as Request).url : String(input);
    // The fallback's own requests go to the network even when it targets this base URL (real-fetch.ts).
    if (active && !isOwnRequest(init) && matches(href)) return client.fetch(input, init);
    // Same arguments, same receiver: browsers throw "Illegal invocation" for a fetch called on anything but the global.
    return Reflect.apply(original, globalThis, arguments) as Promise<Response>;
  } as typeof fetch;

  const endRecord = recordInterception(patched, original);
  globalThis.fetch = patched;
  return () => {
    active = false;
    endRecord();
    if (globalThis.fetch === patched) globalThis.fetch = original;
  };
}

/** Relative URLs resolve against the page (or worker) location, as fetch resolves them. */
function documentBase(): string | undefined {
  return (globalThis as { location?: { href?: string } }).location?.href;
}
