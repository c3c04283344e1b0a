/**
 * llama-server's echo of a continued final assistant message (its reply starts
 * with the message, after a closed think block on reasoning templates): the
 * engine yields only what follows. The real-engine replies are in
 * test/browser/wllama-continue.test.ts.
 */
import { describe, expect, it } from "vitest";
import { PrefillEcho } from "../../src/engine/wllama/prefill-echo.js";

const lp = (token: string) => ({ token, logprob: -1, bytes: [], top_logprobs: [] });

describe("PrefillEcho", () => {
  it("drops the echo and what precedes it, across chunks; the held chunks' logprobs go with the first generated text", () => {
    const echo = new PrefillEcho("the water");
    expect(echo.take({ text: "<think></think>the wa", logprobs: [lp("a")] })).toBeNull();
    expect(echo.take({ text: "ters", logprobs: [lp("b")] })).toEqual({ text: "s", logprobs: [lp("a"), lp("b")] });
    expect(echo.take({ text: " come" })).toEqual({ text: " come" });
    expect(echo.flush()).toBeNull();
  });

  it("a reply that never echoes the message keeps all its text (flushed at the end)", () => {
    const echo = new PrefillEcho("the water");
    expect(echo.take({ text: "other" })).toBeNull();
    expect(echo.flush()).toEqual({ text: "other" });
  });

  it("holds a chunk with hundreds of thousands of logprobs (no spread into call arguments)", () => {
    const echo = new PrefillEcho("the water");
    const many = Array.from({ length: 300_000 }, () => lp("x"));
    expect(echo.take({ text: "x", logprobs: many })).toBeNull();
    expect(echo.flush()?.logprobs).toHaveLength(300_000);
  });
});
