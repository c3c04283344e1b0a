/**
 * The shared worker's stream against the dedicated worker's, in the same page
 * and run, round-robin: the same scripted tokens through
 * createClient({ worker: true }) and createClient({ worker: "shared" }).
 * Called by bench/run.mjs as benchSharedWorker(); goal: shared ≥ 90 % of dedicated
 * (the paired ratio: each round's two runs share the machine's state).
 */
import { createClient, type Client } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";
import { BENCH_MODEL, benchRecord, benchText } from "./tokens.js";

const messages = [{ role: "user" as const, content: "go" }];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export interface SharedWorkerBench {
  tokens: number;
  runs: number;
  /** Median tokens per second reaching the consumer. */
  dedicated: number;
  shared: number;
  /** shared / dedicated, the medians' ratio. */
  ratio: number;
  /** The median of each round's shared / dedicated (the two runs of a round share the machine's state). */
  pairedRatio: number;
  /** What served the "shared" client (`dedicated` where this browser has no SharedWorker). */
  sharedKind: string;
}

export async function benchSharedWorker({ tokens = 20_000, runs = 5 }: { tokens?: number; runs?: number } = {}): Promise<SharedWorkerBench> {
  const expected = benchText(tokens);
  const make = async (worker: true | "shared") => {
    const engine = createScriptedEngine({ replies: Array.from({ length: runs + 1 }, () => expected), tokenDelayMs: 0 });
    const client = createClient({ engine, worker, models: [benchRecord] });
    await client.models.load(BENCH_MODEL);
    return client;
  };
  const run = async (client: Client) => {
    const started = performance.now();
    let text = "";
    for await (const chunk of await client.chat.completions.create({ model: BENCH_MODEL, messages, stream: true, max_tokens: tokens })) text += chunk.choices[0]?.delta.content ?? "";
    if (text !== expected) throw new Error(`the consumer received ${text.length} characters, expected ${expected.length}`);
    return tokens / ((performance.now() - started) / 1000);
  };
  const dedicated = await make(true);
  const shared = await make("shared");
  const samples = { dedicated: [] as number[], shared: [] as number[] };
  for (let i = 0; i <= runs; i++) {
    // Alternate which goes first, so neither always runs on a warmer or a busier machine.
    const first = i % 2 === 0;
    const d = first ? await run(dedicated) : 0;
    const s = await run(shared);
    const d2 = first ? d : await run(dedicated);
    if (i > 0) {
      // run 0 warms up
      samples.dedicated.push(d2);
      samples.shared.push(s);
    }
  }
  const sharedKind = (await shared.workerInfo()).worker;
  dedicated.terminate();
  shared.terminate();
  const result = { tokens, runs, dedicated: median(samples.dedicated), shared: median(samples.shared), sharedKind };
  const paired = samples.shared.map((s, i) => s / samples.dedicated[i]);
  return { ...result, ratio: result.shared / result.dedicated, pairedRatio: median(paired) };
}
