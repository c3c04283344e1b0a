/** The worker's compact chunk wire form loses nothing: unpack(pack(chunks)) is the same chunks, key order included. */
import { describe, expect, it } from "vitest";
import { packChunks, unpackChunks } from "../../src/worker/chunk-wire.js";
import type { ChatCompletionChunk } from "../../src/index.js";

const envelope = { id: "chatcmpl-1", object: "chat.completion.chunk" as const, created: 1_700_000_000, model: "Qwen/Qwen3-0.6B" };
const chunk = (delta: ChatCompletionChunk["choices"][0]["delta"], extra: Partial<ChatCompletionChunk> = {}, choice: Partial<ChatCompletionChunk["choices"][0]> = {}): ChatCompletionChunk => ({
  ...envelope,
  choices: [{ index: 0, delta, finish_reason: null, logprobs: null, ...choice }],
  ...extra,
});
const roundTrip = (chunks: ChatCompletionChunk[]) => unpackChunks(structuredClone(packChunks(chunks)));

describe("chunk wire form", () => {
  it("sends content-only chunks as bare strings and rebuilds them exactly", () => {
    const chunks = [chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" }), chunk({ content: " world" }), chunk({}, {}, { finish_reason: "stop" })];
    const packed = packChunks(chunks);
    expect(packed.items.map((item) => typeof item)).toEqual(["object", "string", "string", "object"]);
    expect(JSON.stringify(roundTrip(chunks))).toBe(JSON.stringify(chunks));
  });

  it("keeps `usage: null` on every chunk when include_usage is on, and the usage chunk whole", () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
    const chunks = [chunk({ content: "a" }, { usage: null }), chunk({ content: "b" }, { usage: null }), { ...envelope, choices: [], usage }];
    expect(packChunks(chunks).items.map((item) => typeof item)).toEqual(["string", "string", "object"]);
    expect(JSON.stringify(roundTrip(chunks))).toBe(JSON.stringify(chunks));
  });

  it("sends reasoning-only chunks as one-string arrays", () => {
    const chunks = [chunk({ role: "assistant", reasoning_content: "" }), chunk({ reasoning_content: "let me" }), chunk({ reasoning_content: " think" }), chunk({ content: "Answer" })];
    expect(packChunks(chunks).items.map((item) => (Array.isArray(item) ? "array" : typeof item))).toEqual(["object", "array", "array", "string"]);
    expect(JSON.stringify(roundTrip(chunks))).toBe(JSON.stringify(chunks));
  });

  it("sends whole whatever is not a plain delta: both kinds at once, tool calls, logprobs, another envelope", () => {
    const chunks = [
      chunk({ content: "x" }),
      chunk({ reasoning_content: "thinking", content: "both" }),
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }),
      chunk({ content: "y" }, {}, { logprobs: { content: [{ token: "y", logprob: -0.1, bytes: [121], top_logprobs: [] }], refusal: null } }),
      { ...chunk({ content: "z" }), id: "chatcmpl-2" },
      chunk({ content: "w" }),
    ];
    expect(packChunks(chunks).items.map((item) => typeof item)).toEqual(["string", "object", "object", "object", "object", "string"]);
    expect(JSON.stringify(roundTrip(chunks))).toBe(JSON.stringify(chunks));
  });
});
