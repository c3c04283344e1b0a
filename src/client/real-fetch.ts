/**
 * The network's fetch, as opposed to one interceptFetch put in place. The
 * fallback server may sit at the very base URL interceptFetch serves (the
 * drop-in setup: the OpenAI SDK pointed at the hosted API, served locally
 * where the device can, remotely where it cannot); its requests must reach the
 * network, never the client again, or one request loops without end.
 *
 * Two marks make that hold whatever else wrapped `fetch`: the fallback uses
 * the fetch that was in place before the first interception (wrappers added
 * later, which would lead back to ours, are passed by); and its own `init`
 * objects are remembered, so a patched fetch reached anyway (a
 * `fallback.fetch` that calls the global) passes them on untouched.
 */

/** Each of our patched fetches → the fetch it replaced. */
const replaced = new WeakMap<object, typeof fetch>();
/** Interceptions in force, oldest first, each with the fetch below all of our layers when it was installed. */
const active: Array<{ below: typeof fetch }> = [];
/** The `init` objects of requests the library sends to the network itself. */
const ownInits = new WeakSet<object>();

const unwrap = (fetchFn: typeof fetch): typeof fetch => {
  let current = fetchFn;
  for (let next = replaced.get(current); next; next = replaced.get(current)) current = next;
  return current;
};

/** Records that `patched` stands in front of `original`; the returned function ends the record (restore). */
export function recordInterception(patched: typeof fetch, original: typeof fetch): () => void {
  replaced.set(patched, original);
  const entry = { below: unwrap(original) };
  active.push(entry);
  return () => {
    const at = active.indexOf(entry);
    if (at >= 0) active.splice(at, 1);
  };
}

/**
 * The network's fetch: while an interception is in force, the fetch taken
 * before the first of them (a wrapper another library put on top later, which
 * would lead back into ours, is passed by); otherwise `globalThis.fetch`.
 */
export function fetchBelowInterception(): typeof fetch {
  return active[0]?.below ?? unwrap(globalThis.fetch);
}

/** Marks `init` as the library's own network request: no interception serves it. */
export function markOwnRequest<T extends object>(init: T): T {
  ownInits.add(init);
  return init;
}

export function isOwnRequest(init: unknown): boolean {
  return typeof init === "object" && init !== null && ownInits.has(init);
}
