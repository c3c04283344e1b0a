/**
 * The network's fetch, as opposed to one interceptFetch put in place. The
 * fallback server may sit at the very base URL interceptFetch serves (the
 * drop-in setup: the OpenAI SDK pointed at the hosted API, served locally
 * where the device can, remotely where it cannot); its requests must reach the
 * network, never the client again, or one request loops without end.
 *
 * Two marks make that hold whatever else wrapped `fetch`: every patched fetch
 * records the fetch it replaced, so the fallback can step below our layers;
 * and the fallback's own `init` objects are remembered, so a patched fetch
 * reached anyway (through another library's wrapper, or a `fallback.fetch`
 * that calls the global) passes them on untouched.
 */

/** Each of our patched fetches → the fetch it replaced. */
const replaced = new WeakMap<object, typeof fetch>();
/** The `init` objects of requests the library sends to the network itself. */
const ownInits = new WeakSet<object>();

/** Records that `patched` stands in front of `original`. */
export function recordInterception(patched: typeof fetch, original: typeof fetch): void {
  replaced.set(patched, original);
}

/** `globalThis.fetch` with every layer interceptFetch added stripped off. */
export function fetchBelowInterception(): typeof fetch {
  let current = globalThis.fetch;
  for (let next = replaced.get(current); next; next = replaced.get(current)) current = next;
  return current;
}

/** Marks `init` as the library's own network request: no interception serves it. */
export function markOwnRequest<T extends object>(init: T): T {
  ownInits.add(init);
  return init;
}

export function isOwnRequest(init: unknown): boolean {
  return typeof init === "object" && init !== null && ownInits.has(init);
}
