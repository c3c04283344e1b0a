/**
 * The goal on the chat-app traces of `npm run bench` (bench/prompt-cache.ts),
 * scripted engine + openai SDK v6: at least 85 % of the prompt tokens of every
 * request after a trace's cold start come from the cache; agent loops at least 90 %.
 */
import { describe, expect, it } from "vitest";
import { benchPromptCache } from "../../bench/prompt-cache.js";

describe("prompt-cache traces (bench/prompt-cache.ts)", () => {
  it("every request after the cold start is ≥ 85 % cached; agent loops ≥ 90 %", { timeout: 60_000 }, async () => {
    const { requests, summary } = await benchPromptCache();
    for (const r of requests) {
      if (r.cold) continue;
      const goal = r.trace.startsWith("agent") ? 0.9 : 0.85;
      expect(r.cached / r.prompt, `${r.trace} / ${r.step}: ${r.cached} of ${r.prompt}`).toBeGreaterThanOrEqual(goal);
      expect(r.cached).toBeLessThan(r.prompt);
    }
    expect(summary.map((s) => s.trace)).toEqual(["chat app", "two long chats interleaved", "agent loop, reasoning kept", "agent loop, reasoning dropped"]);
    console.log(requests.map((r) => `${r.trace} | ${r.step} | ${r.cached}/${r.prompt} | ${((100 * r.cached) / r.prompt).toFixed(1)} %`).join("\n"));
    console.log(summary.map((s) => `${s.trace}: ${s.cached}/${s.prompt} = ${(100 * s.ratioAfterFirst).toFixed(1)} % (min ${(100 * s.minAfterFirst).toFixed(1)} %)`).join("\n"));
  });
});
