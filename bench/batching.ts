/**
 * Continuous batching on the scripted engine (Node): forward passes and
 * tokens per second at 1, 2, 4 and 8 concurrent streams, with a row cap of 8
 * (batched) and without the scheduler (`batch: false`: one at a time, as
 * web-llm with `batching: false`), median of three runs each, and the
 * time to first token of a request that arrives while four others decode.
 *
 * The scripted engine waits `tokenDelayMs` per forward pass, whatever its row
 * count: the GPU-like case, where a decode step is bound by reading the
 * weights. So tokens/s here shows what the scheduler gives when a batched
 * step costs one step, not what a device gives (the real-engine smoke
 * reports that: `npm run smoke:real -- --steps batching`).
 */
import { createClient, type Client } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";

const MODEL = "Qwen3-0.6B";
const TOKENS = 64;
const STEP_MS = 2;

export interface BatchingLine {
  streams: number;
  rowCap: number;
  passes: number;
  tokens: number;
  wallMs: number;
  tokensPerS: number;
  meanRows: number;
}

export interface BatchingBench {
  lines: BatchingLine[];
  /** A request arriving after another streamed 20 of 256 tokens, with 4 streams in flight: its first token, and when the others end. */
  lateArrival: { ttftMs: number; aloneTtftMs: number; othersEndMs: number };
}

function client(rowCap: number, words: number): Client {
  const engine = createScriptedEngine({
    replies: (request) => Array.from({ length: words }, (_, i) => `${String(request.messages.at(-1)?.content ?? "")}${i}`).join(" "),
    tokenDelayMs: STEP_MS,
    // One at a time is the engine's own path without the scheduler (`batch: false`), as web-llm with `batching: false`.
    batch: rowCap > 1 ? { maxRows: rowCap } : false,
  });
  return createClient({ engine, worker: false, speculative: false, maxQueue: 64 });
}

/** Streams one reply; the time of its first token and of its end, from `t0`. */
async function stream(c: Client, q: string, maxTokens: number, t0: number, onToken?: (n: number) => void): Promise<{ firstMs: number; endMs: number }> {
  const s = await c.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: q }], stream: true, max_tokens: maxTokens });
  let firstMs = -1;
  let n = 0;
  for await (const chunk of s) {
    if (chunk.choices[0]?.delta.content) {
      if (firstMs < 0) firstMs = performance.now() - t0;
      onToken?.(++n);
    }
  }
  return { firstMs, endMs: performance.now() - t0 };
}

/** The median run of three (by tokens/s): a run lasts a few hundred ms, where one timer hiccup shows. */
async function streamsAtOnce(streams: number, rowCap: number): Promise<BatchingLine> {
  const runs = [await runOnce(streams, rowCap), await runOnce(streams, rowCap), await runOnce(streams, rowCap)];
  return runs.sort((a, b) => a.tokensPerS - b.tokensPerS)[1];
}

async function runOnce(streams: number, rowCap: number): Promise<BatchingLine> {
  const c = client(rowCap, TOKENS);
  await stream(c, "warm", 2, performance.now()); // the model loads before the timed part
  const before = await c.stats();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, (_, i) => stream(c, `q${i}`, TOKENS, t0)));
  const wallMs = performance.now() - t0;
  const after = await c.stats();
  const tokens = after.generated_tokens - before.generated_tokens;
  return { streams, rowCap, passes: after.forward_passes - before.forward_passes, tokens, wallMs: Math.round(wallMs), tokensPerS: Math.round((tokens / wallMs) * 1000), meanRows: after.mean_rows };
}

async function lateArrival(): Promise<BatchingBench["lateArrival"]> {
  const lone = client(8, 256);
  await stream(lone, "warm", 2, performance.now());
  const aloneTtftMs = (await stream(lone, "late", 16, performance.now())).firstMs;
  const c = client(8, 256);
  await stream(c, "warm", 2, performance.now());
  const t0 = performance.now();
  let late: Promise<{ firstMs: number; endMs: number }> | null = null;
  let lateStart = 0;
  const others = Array.from({ length: 4 }, (_, i) =>
    stream(c, `q${i}`, 256, t0, (n) => {
      if (i === 0 && n === 20 && !late) {
        lateStart = performance.now();
        late = stream(c, "late", 16, lateStart);
      }
    }),
  );
  const ends = await Promise.all(others);
  const lateResult = await (late as unknown as Promise<{ firstMs: number; endMs: number }>);
  return { ttftMs: Math.round(lateResult.firstMs), aloneTtftMs: Math.round(aloneTtftMs), othersEndMs: Math.round(Math.max(...ends.map((e) => e.endMs)) - (lateStart - t0)) };
}

export async function benchBatching(): Promise<BatchingBench> {
  const lines: BatchingLine[] = [];
  for (const streams of [1, 2, 4, 8]) {
    lines.push(await streamsAtOnce(streams, 8));
    lines.push(await streamsAtOnce(streams, 1));
  }
  return { lines, lateArrival: await lateArrival() };
}
