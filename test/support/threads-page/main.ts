/**
 * The page of test/unit/wllama-threads.test.ts: served with or without the two
 * cross-origin isolation headers, it runs a GGUF through createClient's
 * default (dedicated) worker and tells what the library reports of wllama's
 * threads, the greedy reply, and the decode rate. `direct()` runs wllama in
 * the page with its own default `n_threads`, to show what wllama does alone.
 */
import { createClient } from "../../../src/index.js";
// @ts-ignore -- the ESM build by its path, as the engine imports it.
import { Wllama } from "@wllama/wllama/esm/index.js";

interface RunOptions {
  gguf: string;
  wasm: string;
  maxTokens: number;
  /** The record's `engine.threads`. */
  threads?: number;
}

async function run({ gguf, wasm, maxTokens, threads }: RunOptions) {
  const engine = { kind: "wllama" as const, wasm, ...(threads !== undefined ? { threads } : {}) };
  const client = createClient({ models: [{ model_id: "m", model: gguf, model_lib: "", overrides: { context_window_size: 512 }, engine }] });
  try {
    const before = { status: await client.models.status("m"), info: (await client.gpu.info()).wllama };
    await client.models.load("m");
    const after = { status: await client.models.status("m"), info: (await client.gpu.info()).wllama };
    const messages = [{ role: "user" as const, content: "hello world, count to ten" }];
    // One warm-up turn, then the timed one (same prompt: its prefix is reused, so the time is mostly decoding).
    await client.chat.completions.create({ model: "m", messages, max_tokens: 4, temperature: 0 });
    const started = performance.now();
    const reply = await client.chat.completions.create({ model: "m", messages, max_tokens: maxTokens, temperature: 0 });
    const seconds = (performance.now() - started) / 1000;
    return {
      isolated: crossOriginIsolated,
      hardwareConcurrency: navigator.hardwareConcurrency,
      before,
      after,
      content: reply.choices[0].message.content,
      finish: reply.choices[0].finish_reason,
      completionTokens: reply.usage?.completion_tokens ?? 0,
      tokensPerS: (reply.usage?.completion_tokens ?? 0) / seconds,
    };
  } finally {
    client.terminate();
  }
}

/** wllama alone, with its own default n_threads (floor(hardwareConcurrency / 2)). */
async function direct({ gguf, wasm }: RunOptions) {
  const wllama = new Wllama({ default: wasm }, { suppressNativeLog: true, logger: { debug() {}, log() {}, warn: console.warn, error: console.error } });
  await wllama.loadModel([await (await fetch(gguf)).blob()], { n_ctx: 512 });
  const said = { multithread: wllama.isMultithread() as boolean, n_threads: wllama.getNumThreads() as number };
  await wllama.exit();
  return said;
}

Object.assign(globalThis, { threadsPage: { run, direct } });
