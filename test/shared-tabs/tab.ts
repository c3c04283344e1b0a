/**
 * One "tab" of the shared-worker tests (test/unit/shared-worker-tabs.test.ts):
 * a page that makes a client and records what its requests see, with
 * timestamps on the shared clock (performance.timeOrigin + now), so the test
 * can compare several pages' streams. Driven with page.evaluate.
 */
import { ApiError, createClient, type Client, type ModelRecord, type ResponseObject } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const now = () => performance.timeOrigin + performance.now();

/** One stream as the tab saw it (read by the test through `tab.log(id)`). */
export interface StreamLog {
  sent: number;
  first: number | null;
  end: number | null;
  text: string;
  chunks: number;
  error: { name: string; status?: number; code?: string | null; param?: string | null; apiError: boolean } | null;
}

const errorOf = (e: unknown) => ({
  name: (e as Error)?.name,
  message: (e as Error)?.message,
  status: (e as ApiError).status,
  type: (e as ApiError).type,
  code: (e as ApiError).code,
  param: (e as ApiError).param,
  apiError: e instanceof ApiError,
});

let client: Client | null = null;
const progress: Array<{ phase: string; fraction: number; at: number }> = [];
const streams = new Map<string, StreamLog>();
const info: string[] = [];
const warnings: string[] = [];
const originalInfo = console.info.bind(console);
const originalWarn = console.warn.bind(console);
console.info = (...args: unknown[]) => {
  info.push(args.map(String).join(" "));
  originalInfo(...args);
};
console.warn = (...args: unknown[]) => {
  warnings.push(args.map(String).join(" "));
  originalWarn(...args);
};

const api = {
  ready: true,
  progress,
  info,
  warnings,
  /** `custom`: the test's own SharedWorker (its engine reports loads and requests on a BroadcastChannel). */
  connect(options: { replies?: string[]; tokenDelayMs?: number; loadDelayMs?: number; custom?: boolean; worker?: "shared" | true; maxQueue?: number; batch?: false | { maxRows: number }; models?: ModelRecord[] }) {
    const engine = options.replies ? createScriptedEngine({ replies: options.replies, tokenDelayMs: options.tokenDelayMs, loadDelayMs: options.loadDelayMs, batch: options.batch }) : undefined;
    const worker = options.custom
      ? new SharedWorker(new URL("./custom-shared-worker.ts", import.meta.url), { type: "module", name: "shared-tabs-custom" })
      : (options.worker ?? "shared");
    client = createClient({ worker, engine, maxQueue: options.maxQueue, ...(options.models ? { models: options.models } : {}), onProgress: (p) => progress.push({ phase: p.phase, fraction: p.fraction, at: now() }) });
    return true;
  },
  /** Starts a stream and records it under `id`; resolves once the request is sent (not when it ends). */
  stream(id: string, body: Record<string, unknown>) {
    const log: StreamLog = { sent: now(), first: null, end: null, text: "", chunks: 0, error: null };
    streams.set(id, log);
    void (async () => {
      try {
        const stream = await client!.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: id }], ...body, stream: true } as never);
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta?.content;
          if (delta) {
            log.first ??= now();
            log.text += delta;
            log.chunks++;
          }
        }
      } catch (e) {
        log.error = errorOf(e);
      }
      log.end = now();
    })();
    return log.sent;
  },
  log: (id: string) => streams.get(id) ?? null,
  async complete(body: Record<string, unknown>) {
    const sent = now();
    try {
      const completion = await client!.chat.completions.create({ model: "Qwen3-0.6B", messages: [{ role: "user", content: "hi" }], ...body, stream: false } as never);
      return { sent, done: now(), completion, error: null };
    } catch (e) {
      return { sent, done: now(), completion: null, error: errorOf(e) };
    }
  },
  async fetchStatus(body: Record<string, unknown>) {
    const response = await client!.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  },
  async respond(body: Record<string, unknown>) {
    try {
      if (body.stream) {
        const events: string[] = [];
        let text = "";
        for await (const event of await client!.responses.create({ model: "Qwen3-0.6B", input: "hi", ...body, stream: true } as never)) {
          events.push(event.type);
          if (event.type === "response.output_text.delta") text += event.delta;
        }
        return { events, text, error: null };
      }
      const response = (await client!.responses.create({ model: "Qwen3-0.6B", input: "hi", ...body, stream: false } as never)) as unknown as ResponseObject;
      return { id: response.id, text: response.output_text, error: null };
    } catch (e) {
      return { error: errorOf(e) };
    }
  },
  retrieveResponse: async (id: string) => (await client!.responses.retrieve(id)).output_text,
  async embed(input: string[]) {
    const result = await client!.embeddings.create({ model: "snowflake-arctic-embed-s-q0f32-MLC-b4", input });
    return result.data.map((d) => (d.embedding as number[]).length);
  },
  workerInfo: () => client!.workerInfo(),
  modelIds: async () => (await client!.models.list()).data.map((m) => m.id),
  cacheUsage: () => client!.cache.usage(),
  gpuInfo: () => client!.gpu.info(),
  queueState: () => client!.queueState(),
  stats: () => client!.stats(),
  terminate: () => client!.terminate(),
  /** Asks the custom worker's engine for its loads and requests (BroadcastChannel, answered by every engine of the origin). */
  engineReport(): Promise<{ loads: string[]; prompts: string[][] }> {
    return new Promise((resolve) => {
      const channel = new BroadcastChannel("shared-tabs-report");
      channel.onmessage = (event) => {
        channel.close();
        resolve(event.data);
      };
      channel.postMessage("report?");
    });
  },
};

(window as unknown as { tab: typeof api }).tab = api;
