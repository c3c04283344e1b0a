import { describe, expect, it } from "vitest";
import { PromptCachePolicy, commonPrefix } from "../../src/engine/prompt-cache/policy.js";
import { fedTokens, playCase, promptCacheCases, t, type CacheDriver, type RequestStep } from "./support/prompt-cache-cases.js";

/** The pure policy as a driver: plan, then record what the sequence holds (or drop it). */
function policyDriver(policy: PromptCachePolicy): CacheDriver {
  return {
    run(step: RequestStep) {
      const plan = policy.begin({ tokens: step.prompt, key: step.key, reusableUpTo: step.reusableUpTo, maxNewTokens: step.maxNewTokens });
      if ((step.end ?? "done") === "done") policy.record(plan.seq, fedTokens(step));
      else policy.drop(plan.seq);
      expect(policy.usedTokens(), "storage stays within the budget").toBeLessThanOrEqual(policy.budgetTokens);
      return plan;
    },
    clear: () => policy.clear(),
  };
}

describe("prompt-cache policy: the shared cases", () => {
  for (const c of promptCacheCases) {
    it(c.name, async () => {
      for (const { say, expected, actual } of await playCase(c, policyDriver(new PromptCachePolicy(c.options)))) {
        expect(actual, say).toMatchObject(expected);
        expect(actual.reused + actual.prefill, `${say}: reused + prefill = prompt`).toBeGreaterThan(actual.reused);
      }
    });
  }
});

describe("prompt-cache policy: storage and plans", () => {
  it("counts a forked prefix once and each branch's own tokens", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const a = p.begin({ tokens: t(1, 30) });
    p.record(a.seq, t(1, 30));
    const b = p.begin({ tokens: [...t(1, 20), ...t(2, 5)] });
    p.record(b.seq, [...t(1, 20), ...t(2, 5)]);
    expect(p.usedTokens()).toBe(35);
    p.drop(a.seq);
    expect(p.usedTokens(), "the fork keeps the shared prefix").toBe(25);
  });

  it("rounds each segment up to whole pages", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000, pageSize: 16 });
    const a = p.begin({ tokens: t(1, 30) });
    p.record(a.seq, t(1, 30));
    expect(p.usedTokens()).toBe(32);
    const b = p.begin({ tokens: [...t(1, 20), ...t(2, 5)] });
    p.record(b.seq, [...t(1, 20), ...t(2, 5)]);
    // Segments: 20 shared (32), A's 10 (16), B's 5 (16).
    expect(p.usedTokens()).toBe(64);
  });

  it("a busy sequence (between begin and record) is never chosen or evicted", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const a = p.begin({ tokens: t(1, 30) });
    const b = p.begin({ tokens: t(1, 30) });
    expect(b).toMatchObject({ reused: 0, from: "new", evict: [] });
    expect(b.seq).not.toBe(a.seq);
  });

  it("record after a shorter feed than planned (stop inside the prompt's tail) truncates", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const a = p.begin({ tokens: t(1, 30) });
    p.record(a.seq, t(1, 30));
    p.record(a.seq, t(1, 10));
    expect(p.usedTokens()).toBe(10);
    expect(p.sequences()[0].tokens).toEqual(t(1, 10));
  });

  it("a reply that outgrows the room reserved evicts as it grows (makeRoom) or at record", () => {
    const p = new PromptCachePolicy({ budgetTokens: 100 });
    const a = p.begin({ tokens: t(1, 40) });
    p.record(a.seq, t(1, 40));
    const b = p.begin({ tokens: t(2, 30) });
    expect(b.evict).toEqual([]);
    expect(p.makeRoom(b.seq, 20), "30 + 20 + A's 40 fit").toEqual([]);
    expect(p.makeRoom(b.seq, 40), "30 + 40 + 40 do not").toEqual([a.seq]);
    const c = p.begin({ tokens: t(3, 10) });
    expect(p.record(c.seq, t(3, 10))).toEqual([]);
    expect(p.record(b.seq, t(2, 95)), "B's reply outgrew the room: the idle C goes").toEqual([c.seq]);
    expect(p.usedTokens()).toBe(95);
  });

  it("commonPrefix compares token ids", () => {
    expect(commonPrefix([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefix([], [1])).toBe(0);
    expect(commonPrefix([5], [5])).toBe(1);
  });
});

describe("prompt-cache option and default budget", () => {
  it("budget = an eighth of device memory over the KV bytes per token, kept within 1–8 context windows", async () => {
    const { defaultBudgetTokens, kvBytesPerToken, promptCacheSettings, mergeSettings } = await import("../../src/engine/prompt-cache/config.js");
    const qwen3 = kvBytesPerToken({ layers: 28, kvHeads: 8, headDim: 128, bytesPerElement: 2 });
    expect(qwen3).toBe(114_688);
    expect(defaultBudgetTokens({ contextWindow: 4096, kvBytesPerToken: qwen3, deviceMemoryGb: 8 })).toBe(9362);
    expect(defaultBudgetTokens({ contextWindow: 4096, kvBytesPerToken: qwen3, deviceMemoryGb: 1 }), "never below one window").toBe(4096);
    expect(defaultBudgetTokens({ contextWindow: 1024, kvBytesPerToken: 1024, deviceMemoryGb: 8 }), "never above eight windows").toBe(8192);
    expect(defaultBudgetTokens({ contextWindow: 4096 }), "unknown shape and memory: 128 KiB per token, 4 GB").toBe(4096);
    expect(promptCacheSettings(false)).toEqual({ enabled: false });
    expect(promptCacheSettings(undefined, 8)).toEqual({ deviceMemoryGb: 8 });
    expect(promptCacheSettings({ budgetTokens: 5000 }, 8)).toEqual({ enabled: true, deviceMemoryGb: 8, budgetTokens: 5000 });
    expect(() => promptCacheSettings({ budgetTokens: -1 })).toThrow(/budgetTokens/);
    // The client's choice wins over the engine factory's; unsaid, the factory's stands.
    expect(mergeSettings(promptCacheSettings(undefined, 8), false)).toEqual({ enabled: false, deviceMemoryGb: 8 });
    expect(mergeSettings(promptCacheSettings(false), { budgetTokens: 100 })).toEqual({ enabled: false });
  });
});

describe("prompt-cache policy: continuations (a source of speculative drafts)", () => {
  it("returns what idle sequences hold after the whole prompt, most recent first", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const prompt = t(1, 10);
    const a = p.begin({ tokens: prompt });
    p.record(a.seq, [...prompt, ...t(50, 5)]);
    const b = p.begin({ tokens: prompt });
    p.record(b.seq, [...prompt, ...t(60, 3)]);
    const other = p.begin({ tokens: t(2, 10) });
    p.record(other.seq, [...t(2, 10), ...t(70, 4)]);
    expect(p.continuations(prompt)).toEqual([t(60, 3), t(50, 5)]);
    expect(p.continuations([...prompt, 999]), "a sequence that does not hold the whole prompt").toEqual([]);
  });

  it("gives a request only the replies cached under its own key (unkeyed: only unkeyed ones)", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const prompt = t(1, 10);
    for (const [key, reply] of [["x", t(50, 5)], ["y", t(60, 3)], [undefined, t(70, 4)]] as const) {
      const plan = p.begin({ tokens: prompt, key });
      p.record(plan.seq, [...prompt, ...reply]);
    }
    expect(p.continuations(prompt, "x")).toEqual([t(50, 5)]);
    expect(p.continuations(prompt, "y")).toEqual([t(60, 3)]);
    expect(p.continuations(prompt)).toEqual([t(70, 4)]);
    expect(p.continuations(prompt, "z"), "a key nobody used").toEqual([]);
  });

  it("skips a sequence in use", () => {
    const p = new PromptCachePolicy({ budgetTokens: 1000 });
    const prompt = t(1, 10);
    const a = p.begin({ tokens: prompt });
    p.record(a.seq, [...prompt, ...t(50, 5)]);
    p.begin({ tokens: [...prompt, ...t(50, 5), 7] });
    expect(p.continuations(prompt)).toEqual([]);
  });
});

/** Token ids of a text, one per character. */
const ids = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

describe("prompt-cache policy: a batching row's KV comes in (adopt)", () => {
  it("takes the row's prompt and reply under its key, replacing the earlier turn it covers, and the next turn reuses it", () => {
    const policy = new PromptCachePolicy({ budgetTokens: 64 });
    const turn1 = ids("system question-one");
    const first = policy.begin({ tokens: turn1, key: "chat" });
    policy.record(first.seq, turn1);
    const other = policy.begin({ tokens: ids("another key"), key: "other" });
    policy.record(other.seq, ids("another key"));
    // the row ran turn 1 + reply + turn 2 + its reply
    const rowTokens = ids("system question-one answer question-two answer2");
    const placed = policy.adopt(rowTokens, "chat");
    expect(placed?.evict).toEqual([first.seq]);
    expect(policy.sequences().map((s) => [s.key, s.tokens.length])).toEqual([
      ["chat", rowTokens.length],
      ["other", ids("another key").length],
    ]);
    // turn 3 starts from all of it
    const next = policy.begin({ tokens: ids("system question-one answer question-two answer2 question-three"), key: "chat" });
    expect(next.reused).toBe(rowTokens.length);
    expect(policy.usedTokens()).toBeLessThanOrEqual(policy.budgetTokens);
  });

  it("evicts least recently used sequences to fit, and refuses what exceeds the whole budget", () => {
    const policy = new PromptCachePolicy({ budgetTokens: 30 });
    const a = policy.begin({ tokens: ids("aaaaaaaaaaaaaaaaaaaa") });
    policy.record(a.seq, ids("aaaaaaaaaaaaaaaaaaaa"));
    expect(policy.adopt(ids("bbbbbbbbbbbbbbbbbbbb"), undefined)?.evict).toEqual([a.seq]);
    expect(policy.usedTokens()).toBeLessThanOrEqual(30);
    expect(policy.adopt(ids("c".repeat(31)), undefined)).toBeNull();
    expect(policy.sequences()).toHaveLength(1);
  });
});
