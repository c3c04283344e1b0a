/**
 * Prompt caching on the real engine (driven by scripts/smoke-real.mjs, step
 * `promptcache`): two clients on the same model, one with prompt caching
 * (a budget of a few windows) and one without (`promptCache: false`:
 * web-llm's own reuse only). The same greedy requests go to both, step by
 * step — a chat, its regenerate, its next turn, a new chat with the same
 * system prompt, an edit of the first chat's last user message, the new
 * chat's next turn (the two chats interleaved) — so the outputs can be
 * compared token for token, and the driver checks each request's cached
 * tokens against the common prefix it computes with the real tokenizer.
 * Replies that later turns send back are those of the cached client.
 */
import { createClient, type Client } from "../../src/index.js";
import type { ChatCompletionChunk } from "../../src/index.js";
import { chatRecord } from "./mixed-smoke.js";

type Json = Record<string, unknown>;
type Message = { role: "system" | "user" | "assistant"; content: string };

export interface PromptCacheSmokeOptions {
  modelId: string;
  budgetTokens: number;
  /** Steps to run (default all), by name. */
  only?: string[];
}

declare global {
  interface Window {
    smokePromptCache(options: PromptCacheSmokeOptions): Promise<Json>;
    smokePromptCacheReport: Json;
  }
}

function errorOf(error: unknown): Json {
  const e = error as { name?: string; message?: string; status?: number; code?: string };
  return { name: e?.name, status: e?.status, code: e?.code, message: String(e?.message ?? error).slice(0, 400) };
}

/** One streamed greedy request: its tokens (logprobs), text, usage, and the time to the first token. */
async function ask(client: Client, modelId: string, messages: Message[], maxTokens: number): Promise<Json> {
  const t0 = performance.now();
  const out: Json = {};
  try {
    const stream = await client.chat.completions.create({
      model: modelId,
      messages,
      max_tokens: maxTokens,
      temperature: 0,
      seed: 42,
      logprobs: true,
      top_logprobs: 2,
      stream: true,
      stream_options: { include_usage: true },
    } as never);
    const tokens: string[] = [];
    const top: unknown[] = [];
    let content = "";
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      const choice = chunk.choices[0];
      if (out.ttftMs === undefined && (choice?.delta?.content || choice?.logprobs?.content?.length)) out.ttftMs = Math.round(performance.now() - t0);
      if (choice?.delta?.content) content += choice.delta.content;
      for (const lp of choice?.logprobs?.content ?? []) {
        tokens.push(lp.token);
        top.push(lp.top_logprobs);
      }
      if (choice?.finish_reason) out.finish_reason = choice.finish_reason;
      if (chunk.usage) {
        out.usage = chunk.usage;
        out.x_webgpu = (chunk as { x_webgpu?: unknown }).x_webgpu;
      }
    }
    Object.assign(out, { content, tokens, top });
  } catch (error) {
    out.error = errorOf(error);
  }
  out.ms = Math.round(performance.now() - t0);
  return out;
}

async function load(client: Client, modelId: string): Promise<Json> {
  const t0 = performance.now();
  try {
    await client.models.load(modelId);
    return { ms: Math.round(performance.now() - t0) };
  } catch (error) {
    return { ms: Math.round(performance.now() - t0), error: errorOf(error) };
  }
}

export function definePromptCacheSmoke(): void {
  window.smokePromptCache = async (options) => {
    const { modelId } = options;
    const report: Json = { budgetTokens: options.budgetTokens, steps: [] };
    window.smokePromptCacheReport = report;
    const models = [chatRecord(modelId)];
    const cached = createClient({ models, cache: "indexeddb", promptCache: { budgetTokens: options.budgetTokens, maxSequences: 8 } });
    const plain = createClient({ models, cache: "indexeddb", promptCache: false });
    report.loadCached = await load(cached, modelId);
    report.loadPlain = await load(plain, modelId);
    console.info(`[prompt-cache] loaded: ${JSON.stringify([report.loadCached, report.loadPlain])}`);
    // Whether the requests run as rows of continuous batching: a row forks a cached prefix one token short of its sequence's end.
    report.batching = (await cached.stats()).batching;
    const steps = report.steps as Json[];
    const S: Message = { role: "system", content: "Be brief." };
    const replies: Record<string, string> = {};
    const run = async (name: string, messages: Message[], maxTokens: number) => {
      if (options.only && !options.only.includes(name)) return;
      const step: Json = { name, messages, maxTokens };
      steps.push(step);
      step.cached = await ask(cached, modelId, messages, maxTokens);
      console.info(`[prompt-cache] ${name} cached: ${JSON.stringify(step.cached)}`);
      step.plain = await ask(plain, modelId, messages, maxTokens);
      console.info(`[prompt-cache] ${name} plain: ${JSON.stringify(step.plain)}`);
      replies[name] = String((step.cached as Json).content ?? "");
    };
    const A1: Message[] = [S, { role: "user", content: "Hi" }];
    await run("A1", A1, 2);
    await run("regenerate A1", A1, 2);
    const A2: Message[] = [...A1, { role: "assistant", content: replies.A1 ?? "" }, { role: "user", content: "Ok" }];
    await run("A2", A2, 1);
    const C1: Message[] = [S, { role: "user", content: "Hey" }];
    await run("new chat C1 (same system prompt)", C1, 1);
    await run("edit A2's user message", [...A1, { role: "assistant", content: replies.A1 ?? "" }, { role: "user", content: "No" }], 1);
    const C2: Message[] = [...C1, { role: "assistant", content: replies["new chat C1 (same system prompt)"] ?? "" }, { role: "user", content: "Ok" }];
    await run("C2 (back to chat C)", C2, 1);
    cached.terminate();
    plain.terminate();
    report.done = true;
    return report;
  };
}
