import { describe, expect, it } from "vitest";
import { kthLargest, RequestLogitProcessor, topLogprobsOf } from "../../src/engine/webllm/webllm-logits.js";

const logits = () => new Float32Array([1, 5, 3, 4, 2, 0]);
const kept = (out: Float32Array) => [...out].map((v, i) => (v === -Infinity ? null : i)).filter((i) => i !== null);

describe("the LogitProcessor: top_k, min_p, top_logprobs > 5, reasoning budget", () => {
  it("disarmed, it leaves logits untouched", () => {
    const p = new RequestLogitProcessor();
    expect([...p.processLogits(logits())]).toEqual([...logits()]);
    p.begin({ topK: 1 });
    p.end();
    expect([...p.processLogits(logits())]).toEqual([...logits()]);
  });

  it("top_k keeps the k highest logits", () => {
    const p = new RequestLogitProcessor();
    p.begin({ topK: 2 });
    expect(kept(p.processLogits(logits()))).toEqual([1, 3]);
    expect(kthLargest(logits(), 3)).toBe(3);
  });

  it("min_p drops tokens below min_p × the top probability (raw logits)", () => {
    const p = new RequestLogitProcessor();
    p.begin({ minP: Math.exp(-2.5) });
    expect(kept(p.processLogits(logits()))).toEqual([1, 2, 3]);
  });

  it("records N alternatives per generated token with normalized log probabilities", () => {
    const p = new RequestLogitProcessor();
    p.begin({ topLogprobs: 6, temperature: 1 });
    p.processLogits(logits());
    p.processSampledToken(1);
    expect(p.steps).toHaveLength(1);
    expect(p.steps[0].sampled).toBe(1);
    expect(p.steps[0].top.map((t) => t.id)).toEqual([1, 3, 2, 4, 0, 5]);
    const total = p.steps[0].top.reduce((s, t) => s + Math.exp(t.logprob), 0);
    expect(total).toBeCloseTo(1, 5);
    expect(topLogprobsOf(logits(), 2, 0.5)[0].logprob).toBeLessThan(0);
  });

  it("a spent reasoning budget forces the end marker's tokens, one per step", () => {
    const p = new RequestLogitProcessor();
    p.begin({ budget: { tokens: 2, endTokens: [4, 5] } });
    for (const t of [0, 2]) {
      expect(kept(p.processLogits(logits()))).toHaveLength(6);
      p.processSampledToken(t);
    }
    expect(kept(p.processLogits(logits()))).toEqual([4]);
    p.processSampledToken(4);
    expect(kept(p.processLogits(logits()))).toEqual([5]);
    p.processSampledToken(5);
    expect(kept(p.processLogits(logits()))).toHaveLength(6);
  });

  it("no forcing when the model closes its reasoning within budget", () => {
    const p = new RequestLogitProcessor();
    p.begin({ budget: { tokens: 3, endTokens: [4] } });
    for (const t of [0, 4, 1, 2, 3]) {
      expect(kept(p.processLogits(logits()))).toHaveLength(6);
      p.processSampledToken(t);
    }
  });
});
