/**
 * One page of the durable-responses tests (test/unit/durable-tabs.test.ts):
 * a client (dedicated or shared worker, scripted engine) and the unchanged
 * openai SDK (v6 or v7, as the test asks) on its `fetch`, driven with
 * page.evaluate across reloads. Streams are read into `window.tab.logs`, so
 * the test can reload a page in the middle of one and read what it had
 * received.
 */
import OpenAIv6 from "openai";
import OpenAIv7 from "openai-v7";
import { ApiError, createClient, type Client } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { IdbResponseStore } from "../../src/store/idb-response-store.js";

interface Log {
  events: Array<{ type: string; sequence_number: number; [key: string]: unknown }>;
  done: boolean;
  error: string | null;
}

let client: Client | null = null;
/** Either SDK: the calls made here have the same shape in v6 and v7. */
type OpenAI = OpenAIv7;
let openai: OpenAI | null = null;
const logs: Record<string, Log> = {};
/** The stores loggedThrough reads, by database name. */
const logStores: Record<string, IdbResponseStore> = {};
/** The page's console warnings (what the store reports a failed write with, from a dedicated worker's console too via the test). */
const warnings: string[] = [];
const originalWarn = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  warnings.push(args.map(String).join(" "));
  originalWarn(...args);
};

const sdkVersions: string[] = [];
/** What the client's onResponseStoreError received (from the worker, for worker-backed clients). */
const storeErrors: Array<{ isApiError: boolean; status: number; code: string | null | undefined; message: string }> = [];

/** `worker`, or the same kind of worker started from full-disk-worker.ts (the default worker on a full disk). */
function workerOf(worker: boolean | "shared", fullDisk: boolean | undefined): boolean | "shared" | Worker | SharedWorker {
  if (!fullDisk || worker === false) return worker;
  if (worker === "shared") return new SharedWorker(new URL("./full-disk-worker.ts", import.meta.url), { type: "module", name: "full-disk" });
  return new Worker(new URL("./full-disk-worker.ts", import.meta.url), { type: "module" });
}
const sdkVersionOf = (init?: RequestInit) => new Headers(init?.headers).get("x-stainless-package-version");

/** What followHelper read last: the helper's final response, by log name. */
const finals: Record<string, { id: string; status: string; output_text: string } | null> = {};

const sdk = () => {
  if (!openai) throw new Error("connect first");
  return openai;
};

const api = {
  ready: true,
  /** The SDK version of each request this page's client.fetch served (its X-Stainless-Package-Version header). */
  sdkVersions,
  storeErrors,
  logs,
  warnings,
  connect(options: { sdk?: "v6" | "v7"; worker: boolean | "shared"; fullDisk?: boolean; replies: string[]; tokenDelayMs?: number; databaseName: string }) {
    client = createClient({
      worker: workerOf(options.worker, options.fullDisk),
      engine: createScriptedEngine({ replies: options.replies, tokenDelayMs: options.tokenDelayMs }),
      responsesStore: { databaseName: options.databaseName },
      onResponseStoreError: (error) => storeErrors.push({ isApiError: error instanceof ApiError, status: error.status, code: error.code, message: error.message }),
    });
    const OpenAI = (options.sdk === "v6" ? OpenAIv6 : OpenAIv7) as typeof OpenAIv7;
    openai = new OpenAI({
      baseURL: "http://localhost.webgpu/v1",
      apiKey: "local",
      dangerouslyAllowBrowser: true,
      maxRetries: 0,
      fetch: (url: string | URL | Request, init?: RequestInit) => {
        const version = sdkVersionOf(init) ?? "none";
        if (!sdkVersions.includes(version)) sdkVersions.push(version);
        return client!.fetch(url, init);
      },
    });
    return true;
  },
  async create(body: Record<string, unknown>) {
    const response = await sdk().responses.create({ model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC", ...body } as never);
    return response as unknown as { id: string; status: string; output_text: string };
  },
  async retrieve(id: string) {
    return (await sdk().responses.retrieve(id)) as unknown as { id: string; status: string; output_text: string; incomplete_details: unknown; error: unknown };
  },
  async cancel(id: string) {
    return (await sdk().responses.cancel(id)) as unknown as { id: string; status: string; output_text: string };
  },
  /** Sends a request without waiting for it (the test reloads the page while it is being written). */
  send(body: Record<string, unknown>) {
    void sdk().responses.create({ model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC", ...body } as never).catch(() => {});
    return true;
  },
  async list() {
    const list = (await client!.responses.list({ limit: 100 })).data;
    return list.map((r) => ({ id: r.id, status: r.status }));
  },
  async inputLength(id: string) {
    const items = await sdk().responses.inputItems.list(id);
    return JSON.stringify(items.data).length;
  },
  async stream(body: Record<string, unknown>) {
    const stream = await sdk().responses.create({ model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC", stream: true, ...body } as never);
    const types: string[] = [];
    let id = "";
    for await (const event of stream as unknown as AsyncIterable<{ type: string; response?: { id: string } }>) {
      types.push(event.type);
      if (event.response) id = event.response.id;
    }
    return { id, types };
  },
  async usage() {
    const estimate = await navigator.storage.estimate();
    return estimate.usage ?? 0;
  },
  async delete(id: string) {
    await sdk().responses.delete(id);
    return true;
  },
  /** `api[name](...args)`: its value, or the fields of the error it threw (the SDK's APIError). */
  async attempt(name: "create" | "retrieve", ...args: unknown[]) {
    try {
      return { value: await (api[name] as (...a: unknown[]) => Promise<unknown>)(...args), error: null };
    } catch (error) {
      const { status, code, message } = error as { status?: number; code?: string; message?: string };
      return { value: null, error: { status: status ?? null, code: code ?? null, message: message ?? String(error) } };
    }
  },
  /**
   * The sequence number of the last event the event log of response `id` holds in `databaseName` (-1: none yet):
   * what a worker that stops now leaves to the next one. The log is written in batches (every 100 ms).
   */
  async loggedThrough(databaseName: string, id: string) {
    const store = (logStores[databaseName] ??= new IdbResponseStore(databaseName));
    return (await store.readEvents(id)).at(-1)?.sequence_number ?? -1;
  },
  /** Writes `record` over a response's record in the store's database, as a crash or another program could leave it. */
  async damage(databaseName: string, record: { id: string; [key: string]: unknown }) {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open(databaseName);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction("responses", "readwrite");
      tx.objectStore("responses").put(record);
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    return true;
  },
  /**
   * One run of an agent of the OpenAI Agents SDK (`@openai/agents`, its browser build, loaded only here),
   * its default model on the Responses API through this page's openai v7 client, so through client.fetch.
   */
  async agent(input: string, previousResponseId?: string) {
    const { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true); // no trace export over the network
    setOpenAIAPI("responses");
    setDefaultOpenAIClient(sdk() as never);
    const agent = new Agent({ name: "Memory", instructions: "Answer from what the user told you.", model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC" });
    const result = await run(agent, input, previousResponseId ? { previousResponseId } : {});
    return { lastResponseId: result.lastResponseId ?? null, finalOutput: String(result.finalOutput), inputTokens: result.rawResponses.at(-1)?.usage.inputTokens ?? null };
  },
  finals,
  /** The SDK's background streaming helper, `responses.stream({ response_id, starting_after })`, read into logs[name]; its final response in finals[name]. */
  followHelper(name: string, id: string, startingAfter: number) {
    const log: Log = { events: [], done: false, error: null };
    logs[name] = log;
    void (async () => {
      try {
        const stream = sdk().responses.stream({ response_id: id, starting_after: startingAfter });
        for await (const event of stream) log.events.push(event as never);
        const final = await stream.finalResponse();
        // Its text from the output items: v6's helper leaves output_text unset on a response it only retrieved.
        const text = final.output.flatMap((item) => (item.type === "message" ? item.content.map((part) => (part.type === "output_text" ? part.text : "")) : [])).join("");
        finals[name] = { id: final.id, status: final.status ?? "", output_text: text };
      } catch (error) {
        log.error = String(error);
      }
      log.done = true;
    })();
    return true;
  },
  /** Starts reading `GET /responses/{id}?stream=true&starting_after=N` into logs[name]. */
  follow(name: string, id: string, startingAfter?: number) {
    const log: Log = { events: [], done: false, error: null };
    logs[name] = log;
    void (async () => {
      try {
        const stream = await sdk().responses.retrieve(id, { stream: true, ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}) });
        for await (const event of stream) log.events.push(event as never);
      } catch (error) {
        log.error = String(error);
      }
      log.done = true;
    })();
    return true;
  },
};

(window as unknown as { tab: typeof api }).tab = api;
