/**
 * One page of the durable-responses tests (test/unit/durable-tabs.test.ts):
 * a client (dedicated or shared worker, scripted engine) and the unchanged
 * openai SDK v7 on its `fetch`, driven with page.evaluate across reloads.
 * Streams are read into `window.tab.logs`, so the test can reload a page in
 * the middle of one and read what it had received.
 */
import OpenAI from "openai-v7";
import { createClient, type Client } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

interface Log {
  events: Array<{ type: string; sequence_number: number; [key: string]: unknown }>;
  done: boolean;
  error: string | null;
}

let client: Client | null = null;
let openai: OpenAI | null = null;
const logs: Record<string, Log> = {};

const sdk = () => {
  if (!openai) throw new Error("connect first");
  return openai;
};

const api = {
  ready: true,
  logs,
  connect(options: { worker: true | "shared"; replies: string[]; tokenDelayMs?: number; databaseName: string }) {
    client = createClient({ worker: options.worker, engine: createScriptedEngine({ replies: options.replies, tokenDelayMs: options.tokenDelayMs }), responsesStore: { databaseName: options.databaseName } });
    openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", dangerouslyAllowBrowser: true, maxRetries: 0, fetch: (url: string | URL | Request, init?: RequestInit) => client!.fetch(url, init) });
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
