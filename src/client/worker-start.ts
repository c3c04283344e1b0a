/**
 * Starting the default engine worker, and saying why it did not start.
 *
 * A worker whose script cannot load (404, an HTML fallback page served for a
 * file the app's bundler never emitted, a CSP block) or that throws at startup
 * gets only a bare `error` event with no message and nothing in the console.
 * So the client turns it into a 503 `worker_unavailable` ApiError that names
 * the URL, what the server answered for it, and how to fix it.
 */
import { ApiError } from "../protocol/api-error.js";

/** How long the worker may take to answer its first message (`configure`) before requests fail. */
export const WORKER_START_TIMEOUT_MS = 20_000;

const FIX =
  "The default worker is webgpu-openai's dist/worker/entry.js, started with `new Worker(new URL(\"../worker/entry.js\", import.meta.url), { type: \"module\" })`: " +
  "the app's bundler must emit that file (Vite and webpack 5 do; for esbuild, Rollup, a Vite dev server or a page with no bundler see the README section \"Using it in your app\"), " +
  "and a Content-Security-Policy must allow it (`worker-src 'self'`). " +
  "Or host the worker yourself: a module that calls exposeEngineHost() from \"webgpu-openai/worker\", passed as createClient({ worker: new Worker(new URL(\"./my-worker.js\", import.meta.url), { type: \"module\" }) }).";

export function workerUnavailable(message: string): ApiError {
  return new ApiError({ status: 503, code: "worker_unavailable", message });
}

/**
 * Starts a default worker (dedicated or shared) and learns the URL the app's
 * bundler gave it. The `new Worker(new URL("…", import.meta.url))` expression
 * must stay literal (that is what bundlers look for and rewrite), so the URL
 * is read by a subclass of the constructor put in place for that one call,
 * not computed separately.
 */
export function startDefaultWorker<W extends Worker | SharedWorker>(
  name: string,
  construct: () => W,
  kind: "Worker" | "SharedWorker" = "Worker",
): { worker: W; url: string | undefined } {
  type AnyWorker = new (url: string | URL, options?: WorkerOptions) => object;
  const scope = globalThis as unknown as Record<string, AnyWorker | undefined>;
  const Original = scope[kind];
  if (typeof Original !== "function") {
    throw workerUnavailable(
      `This environment has no ${kind}, and createClient() runs the engine in a module worker unless told otherwise. ` +
        "Pass createClient({ worker: false }) to run it in this thread (Node, tests, server-side rendering).",
    );
  }
  let url: string | undefined;
  const Base: AnyWorker = Original;
  scope[kind] = class extends Base {
    constructor(scriptURL: string | URL, options?: WorkerOptions) {
      url = String(scriptURL);
      super(scriptURL, options);
    }
  };
  try {
    return { worker: construct(), url };
  } catch (error) {
    throw workerUnavailable(`The engine worker ${url ?? `"${name}"`} could not be created: ${error instanceof Error ? error.message : String(error)}. ${FIX}`);
  } finally {
    scope[kind] = Original;
  }
}

/** The 503 for a worker that never came up, after a look at what its URL serves. */
export async function describeStartFailure(failure: { url: string | undefined; custom: boolean; event?: Event; timeoutMs?: number }): Promise<ApiError> {
  const { url, custom, event, timeoutMs } = failure;
  const who = custom ? "The Worker passed to createClient({ worker })" : `The engine worker ${url ?? ""}`.trimEnd();
  const thrown = event && "message" in event && (event as ErrorEvent).message ? ` It reported: ${(event as ErrorEvent).message}.` : "";
  const fix = custom
    ? "Check its URL, that the app's bundler emits it, and that it calls exposeEngineHost() from \"webgpu-openai/worker\" when it starts; then create a new client with a new Worker."
    : FIX;
  if (timeoutMs !== undefined) {
    return workerUnavailable(`${who} did not answer within ${timeoutMs / 1000} s of starting (no exposeEngineHost() listening?).${thrown} ${fix}`);
  }
  return workerUnavailable(`${who} failed to start${url ? `: ${await whatServes(url)}` : "."}${thrown} ${fix}`);
}

/** What the server answers for the worker's URL: status and content type, or why it could not be fetched. */
async function whatServes(url: string): Promise<string> {
  if (EXTENSION_URL.test(url)) return whatTheExtensionHolds(url);
  if (!/^https?:/.test(url)) return `its script (${url}) did not load or threw at startup.`;
  try {
    const response = await fetch(url, { cache: "no-store", signal: AbortSignal.timeout(3_000) });
    void response.body?.cancel();
    const type = response.headers.get("content-type") ?? "no content type";
    if (!response.ok) return `${url} answered HTTP ${response.status} (${type}): the file is not where the page looks for it.`;
    if (/html/i.test(type)) {
      return `${url} answered HTTP ${response.status} with ${type}, not JavaScript: the server sent a page (typically an app's index.html fallback) because the worker file was never emitted there.`;
    }
    if (!/javascript|ecmascript/i.test(type)) return `${url} answered HTTP ${response.status} with ${type}, which browsers do not run as a module script.`;
    return loadsButFailed(url, `HTTP ${response.status}, ${type}`);
  } catch (error) {
    return `${url} could not be fetched (${error instanceof Error ? error.message : String(error)}): offline, blocked by CORS or by a Content-Security-Policy.`;
  }
}

const EXTENSION_URL = /^(?:chrome|moz|safari-web)-extension:/;

/**
 * A browser extension's file has no HTTP status: the extension's own fetch
 * either reads it from the package or fails (Chrome: net::ERR_FILE_NOT_FOUND,
 * a bare "Failed to fetch"). That still tells a missing file from one that
 * loads and then fails.
 */
async function whatTheExtensionHolds(url: string): Promise<string> {
  let type: string;
  try {
    const response = await fetch(url, { cache: "no-store", signal: AbortSignal.timeout(3_000) });
    void response.body?.cancel();
    if (!response.ok) throw new Error(`status ${response.status}`);
    type = response.headers.get("content-type") ?? "no content type";
  } catch (error) {
    const pageOrigin = (globalThis as { location?: { origin?: string } }).location?.origin;
    const foreign = pageOrigin !== undefined && pageOrigin !== new URL(url).origin;
    return (
      `${url} is not in the extension's package (fetching it failed: ${error instanceof Error ? error.message : String(error)}): ` +
      "the extension's build must put the worker file there (esbuild and Rollup do not emit the default worker; Vite does)" +
      (foreign ? `, and a page of ${pageOrigin} reaches an extension's file only when web_accessible_resources lists it (a worker must be of the page's own origin: start the client in an extension page).` : ".")
    );
  }
  return loadsButFailed(url, `in the extension's package, ${type}`);
}

function loadsButFailed(url: string, how: string): string {
  return `${url} loads (${how}) but failed to start: a syntax error, an import that does not resolve (bare imports need a bundler in a worker; import maps do not apply there), or an exception at startup. The worker's console shows which.`;
}
