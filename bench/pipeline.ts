/**
 * The benchmark page (bench/pipeline.html, driven by bench/run.mjs through
 * Playwright). Every figure comes from this page in one run, so the variants
 * share the machine's noise: `window.bench.pipeline()` pushes the same
 * scripted tokens through each path, round-robin; `window.bench.ttft()`
 * measures create() → first chunk in-process and through the worker.
 */
import OpenAI from "openai-v7";
import { CreateWebWorkerMLCEngine, type ChatCompletionChunk as WebLlmChunk } from "@mlc-ai/web-llm";
import { createClient, type Client } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";
import { BENCH_MODEL, benchRecord, benchText } from "./tokens.js";
import { responsesClient, responsesSdkVariant, responsesWorkerVariant } from "./responses.js";

export interface PipelineOptions {
  tokens: number;
  /** Timed runs per variant (after one warm-up each). */
  runs: number;
}

/** Seconds for one run of `count` tokens, and the text the consumer saw. */
type Variant = (count: number) => Promise<{ seconds: number; text: string }>;

const messages = [{ role: "user" as const, content: "go" }];
const now = () => performance.now();

/** Replies for a scripted engine that must answer `n` requests. */
const replies = (n: number, text: string) => Array.from({ length: n }, () => text);

/** Bare postMessage-per-token from a worker. */
async function baselineVariant(): Promise<Variant> {
  const worker = new Worker(new URL("./baseline-worker.ts", import.meta.url), { type: "module" });
  return (count) =>
    new Promise((resolve) => {
      const parts: string[] = [];
      const started = now();
      worker.onmessage = (event: MessageEvent<string | null>) => {
        if (event.data !== null) parts.push(event.data);
        else resolve({ seconds: (now() - started) / 1000, text: parts.join("") });
      };
      worker.postMessage({ count });
    });
}

/** web-llm's WebWorkerMLCEngine ↔ WebWorkerMLCEngineHandler protocol (see webllm-worker.ts). */
async function webLlmVariant(): Promise<Variant> {
  const worker = new Worker(new URL("./webllm-worker.ts", import.meta.url), { type: "module" });
  // reload() reaches the stand-in engine, which loads nothing.
  const engine = await CreateWebWorkerMLCEngine(worker, "Qwen3-0.6B-q4f32_1-MLC");
  return async (count) => {
    const started = now();
    let text = "";
    const stream = (await engine.chat.completions.create({ messages, stream: true, max_tokens: count })) as AsyncIterable<WebLlmChunk>;
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    return { seconds: (now() - started) / 1000, text };
  };
}

async function streamText(client: Client, count: number): Promise<string> {
  let text = "";
  for await (const chunk of await client.chat.completions.create({ model: BENCH_MODEL, messages, stream: true, max_tokens: count })) text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

/** (a) and (b): createClient's stream, in this thread or through the worker. */
async function clientVariant(worker: boolean, calls: number, count: number): Promise<{ variant: Variant; client: Client }> {
  const engine = createScriptedEngine({ replies: replies(calls, benchText(count)), tokenDelayMs: 0 });
  const client = createClient({ engine, worker, models: [benchRecord] });
  await client.models.load(BENCH_MODEL);
  const variant: Variant = async (n) => {
    const started = now();
    const text = await streamText(client, n);
    return { seconds: (now() - started) / 1000, text };
  };
  return { variant, client };
}

/**
 * client.fetch → SSE read with a minimal parser (split events, JSON.parse each):
 * what the HTTP-shaped path costs before any SDK, to tell our share of (c) from the SDK's.
 */
function rawSseVariant(client: Client): Variant {
  return async (count) => {
    const started = now();
    const response = await client.fetch("http://localhost.webgpu/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: BENCH_MODEL, messages, stream: true, max_tokens: count }) });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    let pending = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      const events = pending.split("\n\n");
      pending = events.pop() ?? "";
      for (const event of events) {
        const data = event.slice(6);
        if (data !== "[DONE]") text += (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "";
      }
    }
    return { seconds: (now() - started) / 1000, text };
  };
}

/** (c) client.fetch → SSE → the unchanged OpenAI SDK (v7). */
function sdkVariant(client: Client): Variant {
  const openai = new OpenAI({ apiKey: "unused", baseURL: "http://localhost.webgpu/v1", fetch: client.fetch, dangerouslyAllowBrowser: true, maxRetries: 0 });
  return async (count) => {
    const started = now();
    let text = "";
    const stream = await openai.chat.completions.create({ model: BENCH_MODEL, messages, stream: true, max_tokens: count });
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    return { seconds: (now() - started) / 1000, text };
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export interface PipelineResult {
  tokens: number;
  runs: number;
  /** Median tokens per second reaching the consumer, per variant. */
  tokensPerS: Record<string, number>;
  /** Every run's tokens per second, per variant. */
  samples: Record<string, number[]>;
}

async function pipeline({ tokens, runs }: PipelineOptions): Promise<PipelineResult> {
  const calls = runs + 1;
  const expected = benchText(tokens);
  const inProcess = await clientVariant(false, calls, tokens);
  // The worker client answers (b), the raw SSE read and (c): one warm-up + runs each.
  const inWorker = await clientVariant(true, 3 * calls, tokens);
  // The Responses face through the worker (stream, and SDK over client.fetch): one warm-up + runs each.
  const responses = await responsesClient(2 * calls, tokens);
  const variants: Record<string, Variant> = {
    baseline: await baselineVariant(),
    webllm: await webLlmVariant(),
    inProcess: inProcess.variant,
    worker: inWorker.variant,
    rawSse: rawSseVariant(inWorker.client),
    sdk: sdkVariant(inWorker.client),
    responsesWorker: responsesWorkerVariant(responses),
    responsesSdk: responsesSdkVariant(responses),
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let run = 0; run <= runs; run++) {
    for (const [name, variant] of Object.entries(variants)) {
      const { seconds, text } = await variant(tokens);
      if (text !== expected) throw new Error(`${name}: the consumer received ${text.length} characters, expected ${expected.length}; the variants must carry the same tokens.`);
      if (run > 0) samples[name].push(tokens / seconds); // run 0 warms up
    }
  }
  inProcess.client.terminate();
  inWorker.client.terminate();
  responses.terminate();
  return { tokens, runs, samples, tokensPerS: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) };
}

export interface TtftResult {
  requests: number;
  /** Median milliseconds from create() to the first chunk. */
  inProcessMs: number;
  workerMs: number;
  inProcessP90Ms: number;
  workerP90Ms: number;
}

async function ttft({ requests }: { requests: number }): Promise<TtftResult> {
  const text = "Hello there, how are you?";
  const measure = async (worker: boolean) => {
    const engine = createScriptedEngine({ replies: replies(requests + 5, text), tokenDelayMs: 0 });
    const client = createClient({ engine, worker, models: [benchRecord] });
    await client.models.load(BENCH_MODEL);
    const times: number[] = [];
    for (let i = 0; i < requests + 5; i++) {
      const started = now();
      const stream = await client.chat.completions.create({ model: BENCH_MODEL, messages, stream: true });
      let first = 0;
      for await (const _chunk of stream) if (first === 0) first = now() - started;
      if (i >= 5) times.push(first); // five warm-ups
    }
    client.terminate();
    return times.sort((a, b) => a - b);
  };
  const inProcess = await measure(false);
  const worker = await measure(true);
  const p90 = (v: number[]) => v[Math.floor(v.length * 0.9)];
  return { requests, inProcessMs: median(inProcess), workerMs: median(worker), inProcessP90Ms: p90(inProcess), workerP90Ms: p90(worker) };
}

/** Imports a module of the project by path (bench/parser-ratio.ts, bench/cache.ts) and calls one export. */
async function callExport(path: string, name: string, ...args: unknown[]): Promise<unknown> {
  const module = (await import(/* @vite-ignore */ path)) as Record<string, unknown>;
  const fn = module[name];
  if (typeof fn !== "function") throw new Error(`${path} does not export ${name}() (exports: ${Object.keys(module).join(", ") || "none"})`);
  return (fn as (...a: unknown[]) => unknown)(...args);
}

declare global {
  interface Window {
    bench: { pipeline: typeof pipeline; ttft: typeof ttft; callExport: typeof callExport; ready: true };
  }
}

window.bench = { pipeline, ttft, callExport, ready: true };
