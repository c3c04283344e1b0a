/**
 * Prompt-cache cases: request sequences with the reuse each step must get.
 * Shared by the pure policy's tests (test/unit/prompt-cache-policy.test.ts) and
 * the web-llm adapter's, which runs the same steps on its KV binding through a
 * `CacheDriver`. Token ids are small integers (block·1000 + i, < 100 000) so
 * they are valid ids for a real tokenizer's vocabulary too.
 *
 * A step's reply is generated after the prompt: the sequence then holds the
 * prompt and the reply's tokens but the last (sampled, never fed back); the
 * next prompt carries the whole reply plus the turn's closing markup, as a
 * chat template renders it.
 */
import type { PromptCacheOptions } from "../../../src/engine/prompt-cache/policy.js";

/** `n` distinct token ids of block `b`. */
export const t = (b: number, n: number): number[] => Array.from({ length: n }, (_, i) => b * 1000 + i);

export interface RequestStep {
  /** What the step shows (for failure messages). */
  say: string;
  prompt: number[];
  key?: string;
  reusableUpTo?: number;
  maxNewTokens?: number;
  /** Tokens generated (default one). */
  reply?: number[];
  /** `done`: the sequence holds prompt + reply but its last token; `abort-prefill` / `error`: contents uncertain, dropped. */
  end?: "done" | "abort-prefill" | "error";
  /** What must happen; omitted fields are not checked. */
  expect: Partial<StepResult> & { reused: number };
}

export type CaseStep = RequestStep | { say: string; clear: true };

export interface PromptCacheCase {
  name: string;
  options: PromptCacheOptions;
  steps: CaseStep[];
}

export interface StepResult {
  reused: number;
  prefill: number;
  from: "same" | "fork" | "new";
  seq: number;
  parent?: number;
  evict: number[];
}

/** What a cache implementation must do for the cases: run a request end to end, and clear. */
export interface CacheDriver {
  run(step: RequestStep): StepResult | Promise<StepResult>;
  clear(): void | Promise<void>;
}

/** Tokens the sequence holds after a step that finished: prompt + reply but the last. */
export const fedTokens = (step: RequestStep): number[] => [...step.prompt, ...(step.reply ?? [90_000]).slice(0, -1)];

/** Plays a case; returns one entry per request step with what was expected and what happened. */
export async function playCase(c: PromptCacheCase, driver: CacheDriver): Promise<Array<{ say: string; expected: RequestStep["expect"]; actual: StepResult }>> {
  const out = [];
  for (const step of c.steps) {
    if ("clear" in step) {
      await driver.clear();
      continue;
    }
    out.push({ say: step.say, expected: step.expect, actual: await driver.run(step) });
  }
  return out;
}

// Building blocks: a system prompt, user turns, replies, the closing markup of an assistant turn.
const SYS = t(1, 40);
const END = t(2, 2);
const u = (b: number, n = 5) => t(10 + b, n);
const r = (b: number, n = 6) => t(50 + b, n);
const big = 10_000;

const A1 = [...SYS, ...u(1)];
const A2 = [...A1, ...r(1), ...END, ...u(2)];
const A3 = [...A2, ...r(2), ...END, ...u(3)];
const B1 = [...SYS, ...u(4)];
const B2 = [...B1, ...r(4), ...END, ...u(5)];
const B3 = [...B2, ...r(5), ...END, ...u(6)];

export const promptCacheCases: PromptCacheCase[] = [
  {
    name: "a chat continues in place: the reply's tokens but the last are reused",
    options: { budgetTokens: big },
    steps: [
      { say: "A1 cold", prompt: A1, reply: r(1), expect: { reused: 0, prefill: A1.length, from: "new", seq: 0 } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5, from: "same", seq: 0, evict: [] } },
      { say: "A3", prompt: A3, reply: r(3), expect: { reused: A2.length + 5, from: "same", seq: 0 } },
    ],
  },
  {
    name: "regenerate forks before the last prompt token; the old reply stays until evicted",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5 } },
      { say: "regenerate A2", prompt: A2, reply: r(7), expect: { reused: A2.length - 1, prefill: 1, from: "fork", parent: 0, seq: 1 } },
      { say: "regenerate again", prompt: A2, reply: r(8), expect: { reused: A2.length - 1, prefill: 1 } },
      { say: "A3 after the first reply (the old branch)", prompt: A3, reply: r(3), expect: { reused: A2.length + 5, seq: 0, from: "same" } },
    ],
  },
  {
    name: "editing an earlier message reuses up to the edit",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5 } },
      { say: "edit A1's message", prompt: [...SYS, ...u(9)], reply: r(9), expect: { reused: SYS.length, from: "fork", parent: 0 } },
      { say: "edit A2's message", prompt: [...A1, ...r(1), ...END, ...u(8)], expect: { reused: A1.length + 6 + END.length, from: "fork" } },
    ],
  },
  {
    name: "a new chat shares the system prompt; the first chat keeps its cache",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "B1 (new chat)", prompt: B1, reply: r(4), expect: { reused: SYS.length, from: "fork", parent: 0, seq: 1 } },
      { say: "A2 (back to A)", prompt: A2, reply: r(2), expect: { reused: A1.length + 5, from: "same", seq: 0 } },
      { say: "B2", prompt: B2, reply: r(5), expect: { reused: B1.length + 5, from: "same", seq: 1 } },
      { say: "C1 (another new chat)", prompt: [...SYS, ...u(7)], expect: { reused: SYS.length, from: "fork", seq: 2 } },
    ],
  },
  {
    name: "two chats interleaved keep both caches",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "B1", prompt: B1, reply: r(4), expect: { reused: SYS.length } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5 } },
      { say: "B2", prompt: B2, reply: r(5), expect: { reused: B1.length + 5 } },
      { say: "A3", prompt: A3, reply: r(3), expect: { reused: A2.length + 5 } },
      { say: "B3", prompt: B3, reply: r(6), expect: { reused: B2.length + 5 } },
    ],
  },
  {
    name: "a shared system prompt counts once against the budget",
    // SYS (40) + A's own part (5 + 5 fed, then + 8 + 5) + B's own part (5 + 5 fed) = 68 ≤ 70; counted twice it would not fit.
    options: { budgetTokens: 70 },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "B1", prompt: B1, reply: r(4), maxNewTokens: 1, expect: { reused: SYS.length, from: "fork", evict: [] } },
      { say: "A2 still cached", prompt: A2, expect: { reused: A1.length + 5, evict: [] } },
    ],
  },
  {
    name: "over budget the least recently used sequence is evicted; the shared prefix survives in the others",
    options: { budgetTokens: 100 },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0, seq: 0 } },
      { say: "B1", prompt: B1, reply: r(4), expect: { reused: SYS.length, seq: 1, evict: [] } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5, seq: 0, evict: [] } },
      // Storage 73 (SYS 40, A 23, B 10); A3's 8 new tokens + 30 reserved for the reply need B's 10: B is least recently used.
      { say: "A3 evicts B", prompt: A3, maxNewTokens: 30, reply: r(3), expect: { reused: A2.length + 5, seq: 0, evict: [1] } },
      { say: "B2 comes back to the system prompt only", prompt: B2, expect: { reused: SYS.length, from: "fork", parent: 0 } },
    ],
  },
  {
    name: "the sequence count is bounded: the least recently used goes",
    options: { budgetTokens: big, maxSequences: 2 },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0, seq: 0 } },
      { say: "B1", prompt: B1, reply: r(4), expect: { reused: SYS.length, seq: 1 } },
      { say: "A2", prompt: A2, reply: r(2), expect: { reused: A1.length + 5, seq: 0 } },
      { say: "C1 evicts B", prompt: [...SYS, ...u(7)], expect: { reused: SYS.length, from: "fork", parent: 0, seq: 1, evict: [1] } },
      { say: "B2 finds only the system prompt", prompt: B2, expect: { reused: SYS.length } },
    ],
  },
  {
    name: "a fork whose parent would be evicted anyway truncates the parent in place",
    options: { budgetTokens: 60 },
    steps: [
      { say: "A1", prompt: A1, reply: r(1, 16), expect: { reused: 0, seq: 0 } },
      // Keeping A1's 15-token reply beside a regenerate does not fit 60 with 20 reserved: popn it instead.
      { say: "regenerate A1", prompt: A1, maxNewTokens: 20, expect: { reused: A1.length - 1, prefill: 1, from: "same", seq: 0, evict: [] } },
    ],
  },
  {
    name: "at least one token is always prefilled",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0 } },
      { say: "the same prompt again", prompt: A1, reply: r(1), expect: { reused: A1.length - 1, prefill: 1 } },
      { say: "a prompt that is a prefix of the cached tokens", prompt: SYS, expect: { reused: SYS.length - 1, prefill: 1 } },
      { say: "a one-token prompt", prompt: [SYS[0]], expect: { reused: 0, prefill: 1 } },
    ],
  },
  {
    name: "an image ends the reusable prefix, for this request and for later ones",
    options: { budgetTokens: big },
    steps: [
      { say: "A1 with an image at 42", prompt: A1, reusableUpTo: 42, reply: r(1), expect: { reused: 0 } },
      { say: "A2 with the same image", prompt: A2, reusableUpTo: 42, reply: r(2), expect: { reused: 42 } },
      { say: "a later request without a bound still stops at the image", prompt: A3, expect: { reused: 42 } },
      { say: "a new chat shares the text before it", prompt: B1, expect: { reused: SYS.length } },
    ],
  },
  {
    name: "an uncertain sequence is dropped; clear forgets everything",
    options: { budgetTokens: big },
    steps: [
      { say: "A1", prompt: A1, reply: r(1), expect: { reused: 0, seq: 0 } },
      { say: "A2 aborted during prefill", prompt: A2, end: "abort-prefill", expect: { reused: A1.length + 5, seq: 0 } },
      { say: "A2 again: nothing cached", prompt: A2, reply: r(2), expect: { reused: 0, from: "new", seq: 0 } },
      { say: "B1 fails", prompt: B1, end: "error", expect: { reused: SYS.length, seq: 1 } },
      { say: "B1 again forks from A", prompt: B1, expect: { reused: SYS.length, parent: 0, seq: 1 } },
      { say: "unload", clear: true },
      { say: "A3 after clear", prompt: A3, expect: { reused: 0, from: "new", seq: 0 } },
    ],
  },
  {
    name: "keys are a boundary: a request reuses only sequences of its own key; unkeyed requests only unkeyed ones",
    options: { budgetTokens: big },
    steps: [
      { say: "X: A1", prompt: A1, key: "x", reply: r(1), expect: { reused: 0, seq: 0 } },
      { say: "Y: A1 too (same prompt, other key): nothing reused, no fork of X's", prompt: A1, key: "y", reply: r(2), expect: { reused: 0, from: "new", seq: 1 } },
      { say: "Y: new user turn → forks Y's own sequence", prompt: [...A1, ...u(6)], key: "y", reply: r(3), expect: { reused: A1.length, from: "fork", parent: 1, seq: 2 } },
      { say: "no key: X's turn extended → nothing reused", prompt: A2, expect: { reused: 0, from: "new", seq: 3 } },
      { say: "no key again: the unkeyed sequence serves", prompt: [...A2, ...u(3)], expect: { reused: A2.length, from: "same", seq: 3 } },
      { say: "X: its turn extended → its own sequence, in place", prompt: A2, key: "x", expect: { reused: A1.length + 5, from: "same", seq: 0 } },
    ],
  },
  {
    name: "keys: eviction is least recently used across all keys, whoever asks",
    options: { budgetTokens: 100 },
    steps: [
      { say: "X: 30 tokens", prompt: t(81, 30), key: "x", expect: { reused: 0, seq: 0 } },
      { say: "Y: 30 tokens", prompt: t(82, 30), key: "y", expect: { reused: 0, seq: 1 } },
      { say: "X: 30 more", prompt: t(83, 30), key: "x", expect: { reused: 0, seq: 2 } },
      { say: "X: 30 more do not fit → the least recently used goes, X's own", prompt: t(84, 30), key: "x", expect: { reused: 0, seq: 0, evict: [0] } },
      { say: "no key: 30 more → Y's, now the oldest", prompt: t(85, 30), expect: { reused: 0, seq: 1, evict: [1] } },
    ],
  },
];
