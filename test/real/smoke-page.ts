/**
 * The real-engine smoke page (built and driven by scripts/smoke-real.mjs):
 * our library with its default worker, whose EngineHost uses the real web-llm
 * engine (web-llm aliased to the version under test). `window.smoke(options)`
 * runs every check and returns one report object; slow steps keep
 * `max_tokens` tiny (SwiftShader decodes ~1 token per 20 s).
 */
import OpenAI from "openai";
import { createClient, type Client } from "../../src/index.js";
import type { ChatCompletionChunk, LoadProgress, ModelRecord } from "../../src/index.js";
import { defineEmbedSmoke } from "./embed-smoke.js";
import { defineMixedSmoke } from "./mixed-smoke.js";
import { definePromptCacheSmoke } from "./prompt-cache-smoke.js";
import { defineAudioSmoke } from "./audio-smoke.js";
import { defineSpeculativeSmoke } from "./speculative-smoke.js";
import { defineGrammarSmoke } from "./grammar-smoke.js";
import { defineResumeSmoke } from "./resume-smoke.js";
import { defineBatchingSmoke } from "./batching-smoke.js";
import { defineMcpSmoke } from "./mcp-smoke.js";

export interface SmokeOptions {
  modelId: string;
  /** Server path counters the driver reads between steps. */
  countersUrl: string;
  maxTokens: number;
  only?: string[];
  /** `createClient({ speculative })` (default on): off, the forced call runs without drafts, jump-forward included. */
  speculative?: boolean;
}

type Json = Record<string, unknown>;
type Message = { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string };

const origin = location.origin;
const SYSTEM = { role: "system", content: "S" } as const;

async function served(countersUrl: string): Promise<number> {
  const res = await fetch(countersUrl, { cache: "no-store" });
  return ((await res.json()) as { modelRequests: number }).modelRequests;
}

function record(modelId: string): ModelRecord {
  return {
    model: `${origin}/model/`,
    model_id: modelId,
    model_lib: `${origin}/lib/model.wasm`,
    overrides: { context_window_size: 4096 },
    low_resource_required: true,
  };
}

function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string; param?: string };
  return { name: e?.name, status: e?.status, code: e?.code, param: e?.param, message: String(e?.message ?? error).slice(0, 400) };
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value?: T; error?: Json }> {
  const t0 = performance.now();
  try {
    const value = await work();
    return { ms: Math.round(performance.now() - t0), value };
  } catch (error) {
    return { ms: Math.round(performance.now() - t0), error: errorOf(error) };
  }
}

async function loadOnce(modelId: string, countersUrl: string, speculative?: boolean): Promise<{ client: Client; report: Json }> {
  const before = await served(countersUrl);
  const phases: string[] = [];
  let last: LoadProgress | null = null;
  let monotonic = true;
  const client = createClient({ models: [record(modelId)], cache: "indexeddb", ...(speculative === false ? { speculative: false } : {}) });
  const result = await timed(() =>
    client.models.load(modelId, {
      onProgress: (p) => {
        if (last && p.fraction < last.fraction) monotonic = false;
        if (phases[phases.length - 1] !== p.phase) phases.push(p.phase);
        last = p;
      },
    }),
  );
  const requests = (await served(countersUrl)) - before;
  return { client, report: { ms: result.ms, error: result.error, modelRequests: requests, phases, lastProgress: last, fractionMonotonic: monotonic } };
}

async function streamed(client: Client, body: Json, abortAfterChunks?: number): Promise<Json> {
  const t0 = performance.now();
  const out: Json = {};
  try {
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } } as never);
    let content = "";
    let contentChunks = 0;
    const tokens: string[] = [];
    const stamps: number[] = [];
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      const choice = chunk.choices[0];
      if (choice?.delta?.content) {
        content += choice.delta.content;
        contentChunks++;
        stamps.push(Math.round(performance.now() - t0));
      }
      for (const lp of choice?.logprobs?.content ?? []) tokens.push(lp.token);
      if (choice?.finish_reason) out.finish_reason = choice.finish_reason;
      if (chunk.usage) {
        out.usage = chunk.usage;
        out.x_webgpu = (chunk as { x_webgpu?: unknown }).x_webgpu;
      }
      if (abortAfterChunks !== undefined && contentChunks >= abortAfterChunks && !out.abortedAtMs) {
        out.abortedAtMs = Math.round(performance.now() - t0);
        (stream as { controller: AbortController }).controller.abort();
      }
    }
    Object.assign(out, { content, contentChunks, tokens, chunkStampsMs: stamps });
  } catch (error) {
    out.error = errorOf(error);
  }
  out.ms = Math.round(performance.now() - t0);
  return out;
}

/** A streamed request whose reply is tool calls: when each tool_calls delta came, and what the calls were. */
async function streamedCalls(client: Client, body: Json): Promise<Json> {
  const t0 = performance.now();
  const out: Json = {};
  try {
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } } as never);
    const calls: { name?: string; arguments: string }[] = [];
    const toolDeltaStampsMs: number[] = [];
    let content = "";
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      const choice = chunk.choices[0];
      content += choice?.delta?.content ?? "";
      for (const d of choice?.delta?.tool_calls ?? []) {
        calls[d.index] ??= { arguments: "" };
        if (d.function?.name) calls[d.index].name = d.function.name;
        calls[d.index].arguments += d.function?.arguments ?? "";
        toolDeltaStampsMs.push(Math.round(performance.now() - t0));
      }
      if (choice?.finish_reason) out.finish_reason = choice.finish_reason;
      if (chunk.usage) out.usage = chunk.usage;
      // decode_passes, draft_tokens, jump_forward_tokens (issue 34): on the usage chunk
      const stats = (chunk as { x_webgpu?: unknown }).x_webgpu;
      if (stats) out.x_webgpu = stats;
    }
    Object.assign(out, { content, calls, toolDeltaStampsMs });
  } catch (error) {
    out.error = errorOf(error);
  }
  out.ms = Math.round(performance.now() - t0);
  return out;
}

async function plain(client: Client, body: Json): Promise<Json> {
  const r = await timed(() => client.chat.completions.create({ ...body, stream: false } as never));
  if (r.error) return { ms: r.ms, error: r.error };
  const c = r.value as unknown as { choices: Array<{ message: Message; finish_reason: string }>; usage: unknown; x_webgpu: unknown };
  return { ms: r.ms, message: c.choices[0].message, finish_reason: c.choices[0].finish_reason, usage: c.usage, x_webgpu: c.x_webgpu };
}

/** One short tool (the tool block is the longest part of the prompt; prefill is ~0.4 tok/s), with an enum as in issue 20's forced call. */
const TOOLS = [{ type: "function", function: { name: "set_unit", description: "Set unit.", parameters: { type: "object", properties: { unit: { type: "string", enum: ["c", "f"] } }, required: ["unit"] } } }];

declare global {
  interface Window {
    smoke(options: SmokeOptions): Promise<Json>;
    /** The report so far: the driver reads it when its time limit hits mid-run. */
    smokeReport: Json;
    smokeReady: boolean;
  }
}

window.smoke = async (options) => {
  const { modelId, countersUrl, maxTokens } = options;
  const want = (step: string) => !options.only || options.only.includes(step);
  const report: Json = { modelId };
  window.smokeReport = report;
  const base = { model: modelId, temperature: 0, seed: 42 };
  const hi = [SYSTEM, { role: "user", content: "Hi" }];

  // 1. load from the network, then again in a fresh worker from IndexedDB
  const first = await loadOnce(modelId, countersUrl, options.speculative);
  report.loadFromNetwork = first.report;
  first.client.terminate();
  const second = await loadOnce(modelId, countersUrl, options.speculative);
  report.loadFromIndexedDB = second.report;
  const client = second.client;
  report.gpu = await client.gpu.info().then((g) => (g.available ? { vendor: g.info.vendor, architecture: g.info.architecture, features: g.info.features } : g)).catch(errorOf);

  // 2. a streamed completion of a few tokens, with usage and x_webgpu timings (multiturn reads its tokens)
  const stream1 = want("stream") || want("multiturn") ? await streamed(client, { ...base, messages: hi, max_tokens: maxTokens, logprobs: true, top_logprobs: 0 }) : {};
  if (want("stream") || want("multiturn")) report.stream = stream1;

  // 3. two turns of one conversation: the first ends with `stop` (a stop string
  //    = the second token greedy decoding produced above), the second must reuse its KV cache
  if (want("multiturn")) {
    const tokens = (stream1.tokens as string[] | undefined) ?? [];
    const stop = tokens.length >= 2 && tokens[1] !== "" ? [tokens[1]] : undefined;
    const turn1 = await plain(client, { ...base, messages: hi, max_tokens: maxTokens + 1, ...(stop ? { stop } : { logit_bias: { "151645": 100 } }) });
    report.multiTurn = { stopUsed: stop ?? "logit_bias <|im_end|>", turn1 };
    const reply = (turn1.message as Message | undefined) ?? { role: "assistant", content: "" };
    const turn2 = await plain(client, { ...base, messages: [...hi, { role: "assistant", content: reply.content ?? "" }, { role: "user", content: "Ok" }], max_tokens: 1 });
    const u1 = turn1.usage as { prompt_tokens: number; completion_tokens: number } | undefined;
    const u2 = turn2.usage as { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } } | undefined;
    report.multiTurn = {
      stopUsed: stop ?? "logit_bias <|im_end|>",
      turn1,
      turn2,
      cachedTokens: u2?.prompt_tokens_details.cached_tokens,
      firstTurnTokens: u1 ? u1.prompt_tokens + u1.completion_tokens : null,
      webllmPrefilledThisTurn: u2 ? u2.prompt_tokens - u2.prompt_tokens_details.cached_tokens : null,
    };
  }

  // 4. a tool message in the history: the template must accept it (tool role from the family's conv_config)
  if (want("tools")) {
    report.toolMessage = await plain(client, {
      ...base,
      messages: [
        { role: "user", content: "x?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: '{"x":1}' },
      ],
      max_tokens: 1,
    });
  }

  // 5. abort a stream after its first token, then a request that must succeed
  if (want("abort")) {
    const aborted = await streamed(client, { ...base, messages: [SYSTEM, { role: "user", content: "Go" }], max_tokens: 3 }, 1);
    report.abort = { aborted };
    const after = await plain(client, { ...base, messages: [SYSTEM, { role: "user", content: "Go" }], max_tokens: 1 });
    report.abort = { aborted, after, queue: await client.queueState() };
  }

  // 6. the same through client.fetch and the unchanged openai SDK (streamed; one prefill)
  if (want("sdk")) {
    const openai = new OpenAI({ apiKey: "unused", baseURL: "http://webgpu.local/v1", fetch: client.fetch, dangerouslyAllowBrowser: true });
    const sdk: Json = {};
    const t0 = performance.now();
    try {
      const stream = await openai.chat.completions.create({ ...base, messages: hi as never, max_tokens: 1, stream: true, stream_options: { include_usage: true } });
      const chunks: unknown[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      sdk.streamed = { ms: Math.round(performance.now() - t0), chunks: chunks.length, last: chunks[chunks.length - 1] };
    } catch (error) {
      sdk.streamed = { error: errorOf(error) };
    }
    report.sdk = sdk;
  }

  // 7. tools in the request (last: the tool definitions make the longest prompt)
  const ask = { ...base, messages: [{ role: "user", content: "x?" }], tools: TOOLS };
  if (want("tools")) report.tools = await plain(client, { ...ask, max_tokens: 1 });
  // 8. a forced call (same prompt: its prefill is reused) must complete within max_tokens: the grammar
  //    leaves no room for whitespace runs (issue 20, item 5), single call then parallel calls allowed
  //    (`--only forced`: the single call alone, streamed, the shortest run that shows it)
  if (want("tools")) report.toolForced = await plain(client, { ...ask, tool_choice: "required", parallel_tool_calls: false, max_tokens: maxTokens });
  if (want("tools")) report.toolForcedParallel = await plain(client, { ...ask, tool_choice: "required", max_tokens: maxTokens });
  // (A system message of its own: Qwen2.5's default system text would add prefill.)
  if (options.only?.includes("forced")) {
    report.toolForcedStreamed = await streamedCalls(client, { ...ask, messages: [SYSTEM, ...ask.messages], tool_choice: "required", parallel_tool_calls: false, max_tokens: maxTokens });
    // What the rows' cost model measured (step_ms by kind and size: a verify is a `prefill` of its tokens' bucket),
    // the figures its drafts were sized by.
    report.batchingAfterForced = await client.stats().then((s) => s.batching ?? null).catch(errorOf);
  }
  client.terminate();
  return report;
};
defineEmbedSmoke(); // window.smokeEmbed: the embedding model run
defineMixedSmoke(); // window.smokeMixed: chat + embedding model in one client
definePromptCacheSmoke(); // window.smokePromptCache: outputs and prefill with and without prompt caching
defineAudioSmoke(); // window.smokeAudio: audio (and an image) to a model that takes them
defineMcpSmoke(); // window.smokeMcp: a Responses request whose forced mcp call runs on a real MCP server
defineBatchingSmoke(); // window.smokeBatching: four greedy requests one after another, then at once as rows
defineSpeculativeSmoke(); // window.smokeSpeculative: greedy replies with and without speculative decoding
defineGrammarSmoke(); // window.smokeGrammar: a regex response_format and a Lark custom tool, enforced
defineResumeSmoke(); // window.smokeResume: a background response resumed after a page reload
window.smokeReady = true;
