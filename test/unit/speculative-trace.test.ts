/**
 * The speculative-decoding goals, on the bench's tasks (bench/speculative.ts)
 * on the scripted engine: passes per generated token ≤ 0.35 for an edit with
 * `prediction`, ≤ 0.5 for grounded tasks without one, ≤ 0.3 for a greedy
 * regenerate; open chat never takes more passes than tokens and wastes at
 * most a quarter of its tokens' worth on rejected drafts; every output is the
 * one speculation off gives, which takes one pass per token. Grounded tasks
 * are held to plain prompt lookup on the same tokens (issue 34).
 */
import { describe, expect, it } from "vitest";
import { SPECULATIVE_GOALS, benchAgainstPlainLookup, benchSpeculative, type SpeculativeTask } from "../../bench/speculative.js";

describe("speculative trace (scripted engine)", () => {
  let tasks: SpeculativeTask[] = [];
  it("runs every task", async () => {
    tasks = (await benchSpeculative()).tasks;
    expect(tasks.map((t) => t.kind).sort()).toEqual(["edit+prediction", "grounded", "grounded", "grounded", "grounded", "open", "regenerate"]);
  }, 60_000);

  it("every output is the same as with speculation off, which takes one pass per token", () => {
    for (const t of tasks) {
      expect(t.sameOutput, t.task).toBe(true);
      expect(t.passesOff, t.task).toBe(t.tokens);
    }
  });

  it("meets the goals", () => {
    for (const t of tasks) {
      const goal = SPECULATIVE_GOALS[t.kind];
      expect(t.passesPerToken, `${t.task}: passes per token`).toBeLessThanOrEqual(goal.passesPerToken);
      expect(t.rejectedPerToken, `${t.task}: rejected drafts per token`).toBeLessThanOrEqual(goal.rejectedPerToken);
      expect(t.acceptedDraftTokens, t.task).toBeLessThanOrEqual(t.draftTokens);
    }
  });

  it("grounded tasks: each within 0.03 passes per token of plain prompt lookup (n = 3..1, k = 8) or better, at most 0.5 together", () => {
    const grounded = tasks.filter((t) => t.kind === "grounded");
    for (const t of grounded) expect(t.passesPerToken, `${t.task}: ours against plain lookup's ${t.plainLookupPassesPerToken}`).toBeLessThanOrEqual(t.plainLookupPassesPerToken! + 0.03);
    const together = grounded.reduce((n, t) => n + t.passes, 0) / grounded.reduce((n, t) => n + t.tokens, 0);
    expect(together).toBeLessThanOrEqual(0.5);
  });

  it("every recorded grounded task, the short copies too (renamed keys, short quotes), within 0.03 passes per token of plain prompt lookup or better", async () => {
    const rows = await benchAgainstPlainLookup();
    expect(rows.map((r) => r.task)).toContain("answer quoting short phrases");
    for (const r of rows) expect(r.ours, `${r.task}: ours against plain lookup's ${r.plain}`).toBeLessThanOrEqual(r.plain + 0.03);
  }, 60_000);

  it("reports the prediction's tokens for the edit", () => {
    const edit = tasks.find((t) => t.kind === "edit+prediction")!;
    expect(edit.acceptedPredictionTokens).toBeGreaterThan(0.8 * edit.tokens);
    expect(edit.rejectedPredictionTokens).toBeGreaterThan(0);
  });
});
