/**
 * The tiny generated GGUF (test/support/gguf-writer.ts, served by
 * test/support/gguf-server.ts) as the wllama engine's browser tests use it:
 * a record of it, and wllama run directly in the page on the same file, the
 * oracle each test checks the library's reply, usage and logprobs against
 * (greedy decoding of a random model is deterministic).
 */
import { inject } from "vitest";
// @ts-ignore -- wllama's package `main` is missing; Vite resolves its ESM build.
import { Wllama } from "@wllama/wllama";
import type { ModelRecord } from "../../../src/index.js";
import type { WllamaInstance, WllamaModule } from "../../../src/engine/wllama/wllama-api.js";
import { tinyVocabulary } from "../../support/gguf-writer.js";

export const server = inject("ggufServer");
export const wasm = `${server}/wllama/esm/wasm/wllama.wasm`;

/**
 * A record of the tiny GGUF, its own model id (and settings) on top. Its file
 * is served from a folder of its own (`/m/<id>/`), so its cache entry is its
 * own: browser test files run side by side in one origin, and another file's
 * download of `/tiny.gguf` must not meet this one's.
 */
export function tinyRecord(model_id: string, extra: Partial<ModelRecord> = {}): ModelRecord {
  return { model: `${server}/m/${model_id}/tiny.gguf`, model_id, model_lib: "", overrides: { context_window_size: 2048 }, engine: { kind: "wllama", wasm }, ...extra };
}

export interface OracleLogprob {
  token: string;
  logprob: number;
  top_logprobs: Array<{ token: string; logprob: number }>;
}

export interface OracleReply {
  content: string;
  finish: string;
  prompt: number;
  completion: number;
  logprobs: OracleLogprob[] | null;
}

/** wllama's own calls (non-streamed), typed as the tests read them. */
interface DirectCalls {
  createChatCompletion(o: unknown): Promise<{ choices: Array<{ message: { content: string }; finish_reason: string; logprobs: { content: OracleLogprob[] | null } | null }>; usage: { prompt_tokens: number; completion_tokens: number } }>;
  createCompletion(o: unknown): Promise<{ choices: Array<{ text: string; finish_reason: string }>; usage: { prompt_tokens: number; completion_tokens: number } }>;
}

export interface Direct {
  instance: WllamaInstance;
  /** llama.cpp's reply to `messages`, rendered by the GGUF's own template (greedy unless `params` says otherwise). */
  chat(messages: Array<{ role: string; content: string }>, params: Record<string, unknown>): Promise<OracleReply>;
  /** llama.cpp's reply to `prompt` taken as is. */
  raw(prompt: string, params: Record<string, unknown>): Promise<OracleReply>;
  /** llama.cpp's token count of `prompt` taken as is. */
  promptTokensOf(prompt: string): Promise<number>;
}

/** Loads the tiny GGUF (or the server's file of that name, e.g. `tiny-r1.gguf`) into wllama directly, in this page. */
export async function startDirect(file = "tiny.gguf"): Promise<Direct> {
  const instance = new (Wllama as WllamaModule["Wllama"])({ default: wasm }, { suppressNativeLog: true, logger: { debug: () => {}, log: () => {}, warn: console.warn, error: console.error } });
  await instance.loadModel([await (await fetch(`${server}/${file === "tiny.gguf" ? "" : "m/direct/"}${file}`)).blob()], { n_ctx: 2048 });
  const calls = instance as unknown as DirectCalls;
  return {
    instance,
    async chat(messages, params) {
      const r = await calls.createChatCompletion({ messages, temperature: 0, ...params });
      return { content: r.choices[0].message.content, finish: r.choices[0].finish_reason, prompt: r.usage.prompt_tokens, completion: r.usage.completion_tokens, logprobs: r.choices[0].logprobs?.content ?? null };
    },
    async raw(prompt, params) {
      const r = await calls.createCompletion({ prompt, temperature: 0, ...params });
      return { content: r.choices[0].text, finish: r.choices[0].finish_reason, prompt: r.usage.prompt_tokens, completion: r.usage.completion_tokens, logprobs: null };
    },
    async promptTokensOf(prompt) {
      return (await calls.createCompletion({ prompt, max_tokens: 1, temperature: 0 })).usage.prompt_tokens;
    },
  };
}

/** The tiny vocabulary's id of a word token (`"water"` → the id of `▁water`), for `logit_bias`. */
export function wordTokenId(word: string): number {
  const id = tinyVocabulary().tokens.indexOf(`▁${word}`);
  if (id < 0) throw new Error(`"${word}" is not a word of the tiny vocabulary`);
  return id;
}

/** The size of the tiny vocabulary (llama.cpp's n_vocab for this model). */
export const TINY_VOCAB_SIZE = tinyVocabulary().tokens.length;
