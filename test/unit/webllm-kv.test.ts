import { describe, expect, it } from "vitest";
import { KvTracker } from "../../src/engine/webllm/webllm-kv.js";
import type { EngineMessage } from "../../src/engine/types.js";

const sys: EngineMessage = { role: "system", content: "S" };
const u1: EngineMessage = { role: "user", content: "Hi" };
const u2: EngineMessage = { role: "user", content: "More" };

describe("cached tokens under web-llm's multi-turn KV reuse rule", () => {
  it("the next turn reuses the previous prompt plus all generated tokens but the last (never fed back)", () => {
    const kv = new KvTracker();
    kv.record({ messages: [sys, u1] }, "Hello!", "stop", 20, 3);
    expect(kv.reusedTokens({ messages: [sys, u1, { role: "assistant", content: "Hello!" }, u2], continueFinalMessage: false })).toBe(22);
  });

  it("the pipeline's own KV length wins over the estimate when known", () => {
    const kv = new KvTracker();
    kv.record({ messages: [u1] }, "A", "stop", 10, 2, 11);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, { role: "tool", content: "{}" }], continueFinalMessage: false })).toBe(11);
  });

  it("no reuse when the reply sent back differs by a byte (e.g. think block stripped)", () => {
    const kv = new KvTracker();
    kv.record({ messages: [u1] }, "<think>\n\n</think>\n\nA", "stop", 10, 6);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2], continueFinalMessage: false })).toBe(0);
  });

  it("no reuse after abort or length, for two new messages, a final assistant message, or a system-only history", () => {
    const kv = new KvTracker();
    kv.record({ messages: [u1] }, "A", "abort", 10, 2);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2], continueFinalMessage: false })).toBe(0);
    kv.record({ messages: [u1] }, "A", "length", 10, 2);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2], continueFinalMessage: false })).toBe(0);
    kv.record({ messages: [u1] }, "A", "stop", 10, 2);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2, u2], continueFinalMessage: false })).toBe(0);
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2, { role: "assistant", content: "B" }], continueFinalMessage: true })).toBe(0);
    const fresh = new KvTracker();
    fresh.record({ messages: [sys] }, "x", "stop", 3, 1);
    expect(fresh.reusedTokens({ messages: [sys, u1], continueFinalMessage: false })).toBe(0);
  });

  it("forget() (reload, text completion, error) ends reuse", () => {
    const kv = new KvTracker();
    kv.record({ messages: [u1] }, "A", "stop", 10, 2);
    kv.forget();
    expect(kv.reusedTokens({ messages: [u1, { role: "assistant", content: "A" }, u2], continueFinalMessage: false })).toBe(0);
  });
});
