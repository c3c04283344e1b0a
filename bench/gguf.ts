/**
 * The GGUF engine (issue 37) against wllama's own API, in one page: the tiny
 * generated GGUF (test/support/gguf-writer.ts, served by gguf-server.ts) run
 * through the library (a dedicated worker, and in-process) and through
 * `@wllama/wllama` called directly, on the same request, runs interleaved so
 * the three routes share the machine's noise. The figure is tokens per second
 * over a whole streamed request (greedy, so all three generate the same
 * tokens; the reply must run to `max_tokens` for the ratio to mean anything,
 * and the result says whether it did).
 *
 * Also the first load: the GGUF downloaded through the library's cache into
 * a loaded model (`models.load`, in a worker already started), against
 * `fetch()` of the same file plus wllama's own `loadModel`. The file is tiny
 * (~420 KiB), so this shows the fixed cost of the cache and the hand-off, not
 * a download rate (the `download` section measures that).
 */
// wllama's package `main` is missing; its ESM build is what the library imports too (engine/wllama/import-wllama.ts).
import { Wllama } from "@wllama/wllama/esm/index.js";
import { createClient, type Client, type ModelRecord } from "../src/index.js";
import type { WllamaChatChunk, WllamaInstance, WllamaModule } from "../src/engine/wllama/wllama-api.js";

export interface GgufBenchOptions {
  serverUrl: string;
  /** Tokens per request (`max_tokens`). */
  tokens?: number;
  /** Timed runs per route, after one warm-up each. */
  runs?: number;
}

export interface GgufRoute {
  route: "direct" | "worker" | "in-process";
  /** Median tokens per second of the timed runs. */
  tokensPerS: number;
  runs: number[];
  completionTokens: number;
  finish: string | null;
}

export interface GgufBench {
  tokens: number;
  routes: GgufRoute[];
  /** Library route ÷ wllama's own rate (goal ≥ 0.9). */
  workerVsDirect: number;
  inProcessVsDirect: number;
  /** The same text from every route (greedy decoding of one model). */
  sameText: boolean;
  firstLoad: { fileBytes: number; libraryMs: number; directMs: number };
}

const CONTEXT = 2048;
const messages = [{ role: "user" as const, content: "Tell me a long story about the sea." }];
const noLog = { debug: () => {}, log: () => {}, warn: () => {}, error: console.error };

/** One streamed request's wall time, completion tokens, finish reason and text. */
interface Run {
  seconds: number;
  completionTokens: number;
  finish: string | null;
  text: string;
}
type Route = () => Promise<Run>;

function directRoute(instance: WllamaInstance, tokens: number): Route {
  return async () => {
    const started = performance.now();
    let text = "";
    let finish: string | null = null;
    let completionTokens = 0;
    // The same call the library's engine makes for a record without a family: the GGUF's own template, streamed.
    const stream = await instance.createChatCompletion({ messages, stream: true, max_tokens: tokens, temperature: 0, cache_prompt: true, reasoning_format: "none" } as Parameters<WllamaInstance["createChatCompletion"]>[0]);
    for await (const chunk of stream as AsyncIterable<WllamaChatChunk>) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      // llama-server's exact counts are in `timings`, on the last chunk (as the library's engine reads them).
      completionTokens = chunk.timings?.predicted_n ?? completionTokens;
    }
    return { seconds: (performance.now() - started) / 1000, completionTokens, finish, text };
  };
}

function libraryRoute(client: Client, model: string, tokens: number): Route {
  return async () => {
    const started = performance.now();
    let text = "";
    let finish: string | null = null;
    let completionTokens = 0;
    const stream = await client.chat.completions.create({ model, messages, stream: true, max_tokens: tokens, temperature: 0, stream_options: { include_usage: true } });
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    }
    return { seconds: (performance.now() - started) / 1000, completionTokens, finish, text };
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function benchGguf(options: GgufBenchOptions): Promise<GgufBench> {
  const tokens = options.tokens ?? 256;
  const runs = options.runs ?? 5;
  const wasm = `${options.serverUrl}/wllama/esm/wasm/wllama.wasm`;
  const record = (id: string): ModelRecord => ({ model: `${options.serverUrl}/m/${id}/tiny.gguf`, model_id: id, model_lib: "", overrides: { context_window_size: CONTEXT }, engine: { kind: "wllama", wasm } });

  // First load: raw fetch + wllama's loadModel, against the library's download into its cache + load.
  const directStarted = performance.now();
  const blob = await (await fetch(`${options.serverUrl}/m/bench-direct/tiny.gguf`)).blob();
  const instance = new (Wllama as unknown as WllamaModule["Wllama"])({ default: wasm }, { suppressNativeLog: true, logger: noLog });
  await instance.loadModel([blob], { n_ctx: CONTEXT });
  const directMs = performance.now() - directStarted;

  const stamp = Date.now().toString(36);
  const workerModel = `bench-gguf-worker-${stamp}`;
  const inProcessModel = `bench-gguf-inprocess-${stamp}`;
  const worker = createClient({ models: [record(workerModel)] });
  const inProcess = createClient({ models: [record(inProcessModel)], worker: false });
  try {
    // The worker started and the library's modules loaded first: the figure is the download into the cache and the load.
    await worker.workerInfo();
    const libraryStarted = performance.now();
    await worker.models.load(workerModel);
    const libraryMs = performance.now() - libraryStarted;
    await inProcess.models.load(inProcessModel);

    const routes: Array<[GgufRoute["route"], Route]> = [
      ["direct", directRoute(instance, tokens)],
      ["worker", libraryRoute(worker, workerModel, tokens)],
      ["in-process", libraryRoute(inProcess, inProcessModel, tokens)],
    ];
    const seen = new Map<GgufRoute["route"], Run[]>(routes.map(([name]) => [name, []]));
    for (const [, run] of routes) await run(); // warm-up: the prompt's KV, the JIT, the worker's first message
    for (let i = 0; i < runs; i++) for (const [name, run] of routes) seen.get(name)!.push(await run());

    const out: GgufRoute[] = routes.map(([route]) => {
      const all = seen.get(route)!;
      const rates = all.map((r) => r.completionTokens / r.seconds);
      return { route, tokensPerS: median(rates), runs: rates, completionTokens: all[0].completionTokens, finish: all[0].finish };
    });
    const rate = (route: GgufRoute["route"]) => out.find((r) => r.route === route)!.tokensPerS;
    const texts = new Set([...seen.values()].flat().map((r) => r.text));
    return {
      tokens,
      routes: out,
      workerVsDirect: rate("worker") / rate("direct"),
      inProcessVsDirect: rate("in-process") / rate("direct"),
      sameText: texts.size === 1,
      firstLoad: { fileBytes: blob.size, libraryMs, directMs },
    };
  } finally {
    worker.terminate();
    inProcess.terminate();
    await instance.exit();
  }
}
