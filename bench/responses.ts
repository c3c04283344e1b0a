/**
 * Bench variants for the Responses API face: the same scripted tokens as the
 * chat variants of pipeline.ts, streamed as Responses events
 * (`response.output_text.delta`) through the worker, and through client.fetch
 * + SSE + the unchanged OpenAI SDK (v7) `responses.create({ stream: true })`.
 */
import OpenAI from "openai-v7";
import { createClient, type Client } from "../src/index.js";
import { createScriptedEngine } from "../src/testing.js";
import { BENCH_MODEL, benchRecord, benchText } from "./tokens.js";

type Variant = (count: number) => Promise<{ seconds: number; text: string }>;

const now = () => performance.now();

/** A worker client whose scripted engine answers `calls` Responses requests with `count` tokens each. */
export async function responsesClient(calls: number, count: number): Promise<Client> {
  const engine = createScriptedEngine({ replies: Array.from({ length: calls }, () => benchText(count)), tokenDelayMs: 0 });
  const client = createClient({ engine, worker: true, models: [benchRecord] });
  await client.models.load(BENCH_MODEL);
  return client;
}

/** client.responses.create({ stream: true }) through the worker: output_text deltas concatenated. */
export function responsesWorkerVariant(client: Client): Variant {
  return async (count) => {
    const started = now();
    let text = "";
    const stream = await client.responses.create({ model: BENCH_MODEL, input: "go", stream: true, max_output_tokens: count, store: false });
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    return { seconds: (now() - started) / 1000, text };
  };
}

/** client.fetch → SSE → the OpenAI SDK v7's responses.create stream. */
export function responsesSdkVariant(client: Client): Variant {
  const openai = new OpenAI({ apiKey: "unused", baseURL: "http://localhost.webgpu/v1", fetch: client.fetch, dangerouslyAllowBrowser: true, maxRetries: 0 });
  return async (count) => {
    const started = now();
    let text = "";
    const stream = await openai.responses.create({ model: BENCH_MODEL, input: "go", stream: true, max_output_tokens: count, store: false });
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    return { seconds: (now() - started) / 1000, text };
  };
}
