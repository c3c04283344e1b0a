/// <reference lib="webworker" />
/**
 * web-llm's own worker protocol carrying the benchmark's tokens: the real
 * `WebWorkerMLCEngineHandler` from @mlc-ai/web-llm, whose MLCEngine is
 * replaced by a stand-in. The stand-in's `reload()` loads nothing (there are
 * no weights here) and its `chatCompletion()` yields the same scripted tokens
 * as ChatCompletionChunks with no delay. Everything between that generator and
 * the page — one `completionStreamNextChunk` round trip per chunk — is
 * web-llm's code, unchanged.
 */
import { WebWorkerMLCEngineHandler } from "@mlc-ai/web-llm";
import { benchTokens } from "./tokens.js";

async function* chunks(request: { model?: string; max_tokens?: number }) {
  const created = Math.floor(Date.now() / 1000);
  const tokens = benchTokens(request.max_tokens ?? 0);
  for (let i = 0; i < tokens.length; i++) {
    yield {
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created,
      model: request.model ?? "bench",
      choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: tokens[i] } : { content: tokens[i] }, finish_reason: null, logprobs: null }],
    };
  }
  yield { id: "chatcmpl-bench", object: "chat.completion.chunk", created, model: request.model ?? "bench", choices: [{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }] };
}

const standIn = {
  async reload() {},
  async unload() {},
  setInitProgressCallback() {},
  setLogLevel() {},
  setAppConfig() {},
  interruptGenerate() {},
  async chatCompletion(request: { stream?: boolean; model?: string; max_tokens?: number }) {
    return chunks(request);
  },
};

const handler = new WebWorkerMLCEngineHandler();
(handler as unknown as { engine: typeof standIn }).engine = standIn;
self.onmessage = (event: MessageEvent) => handler.onmessage(event);
