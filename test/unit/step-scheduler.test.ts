import { describe, expect, it } from "vitest";
import { StepScheduler, type StepSchedulerOptions } from "../../src/engine/batching/step-scheduler.js";
import { WEIGHT_BOUND_COST, chooseForward, type StepCostModel } from "../../src/engine/batching/cost-model.js";
import { alone, simulate, type SimRow } from "./support/simulated-batch-engine.js";

/** A GPU-like device: a forward is bound by reading the weights, so rows share a pass for about the price of one. */
const gpu: StepCostModel = { single: (tokens) => 10 + tokens * 0.01, batch: (rows, tokens) => 11 + tokens * 0.01 + rows * 0.1 };
/**
 * SwiftShader, as the probe of web-llm's batch functions measured it (Qwen2-0.5B):
 * `decode` 13.5 s; `batch_decode` 26.6 s with one row, ~43 s with four (fitted linearly).
 */
const swiftshader: StepCostModel = { single: () => 13.5, batch: (rows) => 21.13 + 5.47 * rows };

const scheduler = (options: Partial<StepSchedulerOptions> = {}) => new StepScheduler({ maxRows: 8, prefillChunkTokens: 256, cost: gpu, ...options });
const row = (id: string, extra: Partial<SimRow> = {}): SimRow => ({ id, promptTokens: 40, maxTokens: 64, seed: id.charCodeAt(id.length - 1), ...extra });

describe("step scheduler: rows share forward passes", () => {
  it("four concurrent 64-token rows take ≤ 1.25 × 64 + 8 passes (one at a time: ≥ 256), each row as it is alone", () => {
    const rows = ["a", "b", "c", "d"].map((id) => row(id));
    const together = scheduler();
    const trace = simulate(together, rows);
    const counts = together.counters();
    expect(counts.forward_passes).toBeLessThanOrEqual(1.25 * 64 + 8);
    expect(counts.generated_tokens).toBe(256);
    expect(counts.prefill_tokens).toBe(4 * 40);
    expect(counts.max_rows).toBe(4);
    expect(counts.mean_rows).toBeGreaterThanOrEqual(3.9);

    const oneAtATime = scheduler({ maxRows: 1 });
    simulate(oneAtATime, rows.map((r) => ({ ...r, id: `${r.id}'` })));
    expect(oneAtATime.counters().forward_passes).toBeGreaterThanOrEqual(256);

    for (const r of rows) {
      expect(trace.outputs.get(r.id)).toEqual(alone(scheduler(), r));
      expect(trace.outputs.get(r.id)).toHaveLength(64);
      expect(trace.left.get(r.id)).toBe("length");
    }
    // Four rows ran for the time of about one.
    const aloneTime = simulate(scheduler(), [row("z")]).time;
    expect(trace.time).toBeLessThan(1.5 * aloneTime);
  });

  it("a row alone costs what it costs today: one pass per token, single forwards, max_rows 1", () => {
    const s = scheduler();
    const left: unknown[] = [];
    s.submit({ id: "solo", owner: "o", promptTokens: 40, maxTokens: 64 });
    for (let plan = s.plan(); plan; plan = s.plan()) {
      expect(plan.mode).toBe("single");
      left.push(...s.commit(plan).left);
    }
    expect(s.counters()).toMatchObject({ forward_passes: 64, generated_tokens: 64, max_rows: 1, mean_rows: 1 });
    expect(left).toEqual([{ id: "solo", reason: "length", report: { max_rows: 1, mean_rows: 1, passes: 64 } }]);
  });

  it("a late arrival after 20 tokens gets its first token before the other row ends", () => {
    const s = scheduler();
    const trace = simulate(s, [row("early")], {}, [{ ...row("late"), after: { id: "early", tokens: 20 } }]);
    const earlyLast = trace.tokenSteps.get("early")!.at(-1)!;
    const lateFirst = trace.tokenSteps.get("late")![0];
    expect(lateFirst).toBe(21); // the very next step: its prompt fits one chunk
    expect(lateFirst).toBeLessThan(earlyLast);
    // The early row never skipped a step for the newcomer's prefill.
    expect(trace.tokenSteps.get("early")).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(trace.outputs.get("late")).toEqual(alone(scheduler(), row("late")));
  });

  it("an abort of one of four ends it within a step; the others' tokens are unchanged", () => {
    const rows = ["a", "b", "c", "d"].map((id) => row(id));
    const s = scheduler();
    let cancelledAt = -1;
    const trace = simulate(s, rows, {
      beforePlan: (_step, t) => {
        if (cancelledAt < 0 && t.outputs.get("b")!.length === 10) {
          expect(s.cancel("b")).toMatchObject({ max_rows: 4 });
          cancelledAt = t.plans.length;
        }
      },
    });
    expect(trace.outputs.get("b")).toHaveLength(10);
    expect(trace.plans[cancelledAt].rows.map((r) => r.id)).toEqual(["a", "c", "d"]);
    expect(s.cancel("b")).toBeNull();
    for (const id of ["a", "c", "d"]) expect(trace.outputs.get(id)).toEqual(alone(scheduler(), rows.find((r) => r.id === id)!));
  });

  it("a row cancelled while its step runs gets no token from that step", () => {
    const s = scheduler();
    const trace = simulate(s, [row("a"), row("b")], {
      duringStep: (plan) => {
        if (plan.step === 5) s.cancel("a");
      },
    });
    expect(trace.outputs.get("a")).toHaveLength(4);
    expect(trace.outputs.get("b")).toEqual(alone(scheduler(), row("b")));
  });

  it("a long prompt is prefilled in chunks while running rows keep advancing", () => {
    const s = scheduler({ prefillChunkTokens: 256 });
    const trace = simulate(s, [row("running")], {}, [{ ...row("long", { promptTokens: 2000, maxTokens: 8 }), after: { id: "running", tokens: 5 } }]);
    const prefillSteps = trace.plans.filter((p) => p.rows.some((r) => r.id === "long" && r.phase === "prefill"));
    expect(prefillSteps).toHaveLength(Math.ceil(2000 / 256));
    for (const p of prefillSteps) {
      expect(p.rows.find((r) => r.id === "long")!.tokens).toBeLessThanOrEqual(256);
      // Every step of the long prefill also decodes the running row.
      expect(p.rows.find((r) => r.id === "running")).toMatchObject({ phase: "decode", samples: true });
    }
    expect(prefillSteps.filter((p) => p.rows.find((r) => r.id === "long")!.samples)).toHaveLength(1);
    expect(trace.tokenSteps.get("running")).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(s.counters().prefill_tokens).toBe(40 + 2000);
    expect(trace.outputs.get("long")).toEqual(alone(scheduler(), row("long", { promptTokens: 2000, maxTokens: 8 })));
  });

  it("caps the rows in flight; beyond the cap rows wait and join when one leaves", () => {
    const s = scheduler({ maxRows: 4 });
    const rows = ["a", "b", "c", "d", "e", "f"].map((id, i) => row(id, { maxTokens: 10 + i * 5 }));
    const trace = simulate(s, rows);
    expect(Math.max(...trace.plans.map((p) => p.rows.length))).toBe(4);
    // e joins the step after a (10 tokens) leaves, f the step after b (15 tokens) leaves.
    expect(trace.tokenSteps.get("e")![0]).toBe(11);
    expect(trace.tokenSteps.get("f")![0]).toBe(16);
    for (const r of rows) expect(trace.outputs.get(r.id)).toEqual(alone(scheduler(), r));
  });

  it("stop, end of text and max_tokens remove the row at the step that ends it", () => {
    const s = scheduler();
    const trace = simulate(s, [row("stops", { endsAfter: 7 }), row("long", { maxTokens: 30 })]);
    expect(trace.outputs.get("stops")).toHaveLength(7);
    expect(trace.left.get("stops")).toBe("ended");
    expect(trace.left.get("long")).toBe("length");
    expect(trace.plans.slice(7).every((p) => p.rows.length === 1 && p.rows[0].id === "long")).toBe(true);
    expect(trace.plans.slice(7).every((p) => p.mode === "single")).toBe(true);
  });

  it("admits owners in turns: a burst from one client does not starve the others", () => {
    const s = scheduler({ maxRows: 1 });
    const rows = [
      row("a1", { owner: "A", maxTokens: 2 }),
      row("a2", { owner: "A", maxTokens: 2 }),
      row("a3", { owner: "A", maxTokens: 2 }),
      row("b1", { owner: "B", maxTokens: 2 }),
      row("b2", { owner: "B", maxTokens: 2 }),
      row("c1", { owner: "C", maxTokens: 2 }),
    ];
    const trace = simulate(s, rows);
    const order = [...trace.tokenSteps.entries()].sort((x, y) => x[1][0] - y[1][0]).map(([id]) => id);
    expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
  });

  it("an owner that asks again as soon as its reply ends does not jump ahead of one waiting", () => {
    const s = scheduler({ maxRows: 1 });
    s.submit({ id: "a1", owner: "A", promptTokens: 1, maxTokens: 1 });
    s.submit({ id: "b1", owner: "B", promptTokens: 1, maxTokens: 1 });
    const first = s.plan()!;
    expect(first.rows.map((r) => r.id)).toEqual(["a1"]);
    s.commit(first);
    s.submit({ id: "a2", owner: "A", promptTokens: 1, maxTokens: 1 });
    expect(s.plan()!.rows.map((r) => r.id)).toEqual(["b1"]);
  });

  it("rows of a cancelled waiting request never start", () => {
    const s = scheduler({ maxRows: 1 });
    s.submit({ id: "a", owner: "A", promptTokens: 1, maxTokens: 3 });
    s.submit({ id: "b", owner: "B", promptTokens: 1, maxTokens: 3 });
    expect(s.cancel("b")).toEqual({ max_rows: 0, mean_rows: 0, passes: 0 });
    let plans = 0;
    for (let plan = s.plan(); plan; plan = s.plan()) {
      expect(plan.rows.map((r) => r.id)).toEqual(["a"]);
      s.commit(plan);
      plans++;
    }
    expect(plans).toBe(3);
  });
});

describe("step scheduler: the forward each step runs", () => {
  it("keeps the single-sequence decode for one row when a batched forward costs more", () => {
    expect(chooseForward([1], swiftshader)).toEqual({ mode: "single", passes: 1, cost: 13.5 });
    // Two rows: 2 × 13.5 = 27 against 32.07 batched.
    expect(chooseForward([1, 1], swiftshader)).toMatchObject({ mode: "single", passes: 2 });
    // Four rows: 54 against 43.
    expect(chooseForward([1, 1, 1, 1], swiftshader)).toMatchObject({ mode: "batch", passes: 1 });
    expect(chooseForward([1], gpu).mode).toBe("single");
    expect(chooseForward([1, 1], gpu).mode).toBe("batch");
    expect(chooseForward([1], WEIGHT_BOUND_COST).mode).toBe("single");
    expect(chooseForward([1, 1], WEIGHT_BOUND_COST).mode).toBe("batch");
  });

  it("chooses per step: rows batched while several are in flight, single once one is left", () => {
    const s = scheduler({ cost: swiftshader });
    const trace = simulate(s, [row("a", { maxTokens: 10 }), row("b", { maxTokens: 10 }), row("c", { maxTokens: 10 }), row("d", { maxTokens: 20 })]);
    expect(trace.plans.slice(0, 10).every((p) => p.mode === "batch" && p.passes === 1)).toBe(true);
    expect(trace.plans.slice(10).every((p) => p.mode === "single" && p.passes === 1)).toBe(true);
    expect(s.counters()).toMatchObject({ forward_passes: 20, max_rows: 4, mean_rows: (10 * 4 + 10) / 20 });
    // Run single, a step of two rows takes two passes of one row each.
    const two = scheduler({ cost: swiftshader });
    simulate(two, [row("x", { maxTokens: 5 }), row("y", { maxTokens: 5 })]);
    expect(two.counters()).toMatchObject({ forward_passes: 10, max_rows: 1, mean_rows: 1 });
  });
});

describe("step scheduler: misuse", () => {
  it("refuses a second plan before the first is committed, and nonsense limits", () => {
    const s = scheduler();
    s.submit({ id: "a", owner: "A", promptTokens: 1, maxTokens: 2 });
    s.plan();
    expect(() => s.plan()).toThrow(/commit it/);
    expect(() => s.submit({ id: "a", owner: "A", promptTokens: 1, maxTokens: 2 })).toThrow(/already scheduled/);
    expect(() => s.submit({ id: "z", owner: "A", promptTokens: 1, maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => scheduler({ maxRows: 0 })).toThrow(/maxRows/);
  });
});

describe("step scheduler: a step's token budget and prompts fed apart (web-llm)", () => {
  it("decoding rows come first; prefill rows take chunks from what is left, in admission order, and a row left with none sits the step out", () => {
    const s = scheduler({ prefillChunkTokens: 8, stepTokens: 20, prefillStepwise: true });
    s.submit({ id: "d", owner: "d", promptTokens: 1, maxTokens: 10 });
    s.commit(s.plan()!); // d's one-token prompt: it decodes from now on
    for (const id of ["p", "q", "r"]) s.submit({ id, owner: id, promptTokens: 12, maxTokens: 4 });
    const first = s.plan()!;
    // d's token, then 8 of p, 8 of q, and the 3 left for r: 20 in all
    expect(first.rows.map((r) => [r.id, r.phase, r.tokens])).toEqual([["d", "decode", 1], ["p", "prefill", 8], ["q", "prefill", 8], ["r", "prefill", 3]]);
    expect(first.tokens).toBe(20);
    expect(first.stepwise).toBe(true);
    s.commit(first);
    const second = s.plan()!;
    expect(second.rows.map((r) => [r.id, r.tokens, r.samples])).toEqual([["d", 1, true], ["p", 4, true], ["q", 4, true], ["r", 8, false]]);
    s.commit(second);
    // with a budget of 2 beside d: only the first prefill row still in its prompt gets a token; the other waits
    const tight = scheduler({ prefillChunkTokens: 8, stepTokens: 2 });
    tight.submit({ id: "d", owner: "d", promptTokens: 1, maxTokens: 10 });
    tight.commit(tight.plan()!);
    tight.submit({ id: "p", owner: "p", promptTokens: 5, maxTokens: 4 });
    tight.submit({ id: "q", owner: "q", promptTokens: 5, maxTokens: 4 });
    expect(tight.plan()!.rows.map((r) => [r.id, r.tokens])).toEqual([["d", 1], ["p", 1]]);
  });

  it("a row whose prompt runs apart (an image, fed by web-llm's own prefill) is outside the budget and the batch choice, and counts a pass of its own", () => {
    const s = scheduler({ prefillChunkTokens: 8, stepTokens: 10, prefillStepwise: true });
    s.submit({ id: "d", owner: "d", promptTokens: 1, maxTokens: 10 });
    s.commit(s.plan()!);
    s.submit({ id: "img", owner: "img", promptTokens: 600, maxTokens: 4, prefillChunkTokens: Infinity, prefillApart: true });
    s.submit({ id: "t", owner: "t", promptTokens: 30, maxTokens: 4 });
    const plan = s.plan()!;
    expect(plan.rows.map((r) => [r.id, r.tokens, r.apart ?? false])).toEqual([["d", 1, false], ["img", 600, true], ["t", 8, false]]);
    expect(plan).toMatchObject({ mode: "batch", apart: 1, passes: 2 });
    const before = s.counters().forward_passes;
    s.commit(plan);
    expect(s.counters().forward_passes - before).toBe(2);
    expect(s.rowReport("img")).toMatchObject({ max_rows: 1, passes: 1 });
    expect(s.rowReport("t")).toMatchObject({ max_rows: 2, passes: 1 });
  });
});

describe("step scheduler: decoding rows with speculative drafts", () => {
  it("a verify row is planned by its tokens (its token plus the draft), for the budget and the forward's cost, for its next step only", () => {
    const s = scheduler({ prefillChunkTokens: 8, stepTokens: 12, prefillStepwise: true });
    for (const id of ["v", "d"]) s.submit({ id, owner: id, promptTokens: 1, maxTokens: 50 });
    s.commit(s.plan()!);
    s.feed("v", 6); // its token and a draft of 5
    s.submit({ id: "p", owner: "p", promptTokens: 20, maxTokens: 4 });
    const plan = s.plan()!;
    expect(plan.rows.map((r) => [r.id, r.phase, r.tokens])).toEqual([["v", "decode", 6], ["d", "decode", 1], ["p", "prefill", 5]]);
    expect(plan.tokens).toBe(12);
    expect(plan.cost).toBe(chooseForward([6, 1, 5], gpu).cost);
    s.commit(plan);
    // the draft was that step's: the next one feeds one token again unless told
    expect(s.plan()!.rows.map((r) => [r.id, r.tokens])).toEqual([["v", 1], ["d", 1], ["p", 8]]);
  });

  it("draft tokens a row samples with no step of its own count as generated tokens, not passes", () => {
    const s = scheduler();
    s.submit({ id: "v", owner: "v", promptTokens: 3, maxTokens: 50 });
    s.commit(s.plan()!); // prefill: the first token
    s.feed("v", 5);
    s.commit(s.plan()!); // a verify of 4: its own token...
    for (let i = 0; i < 3; i++) s.served("v"); // ...and 3 accepted draft tokens
    expect(s.counters()).toMatchObject({ forward_passes: 2, generated_tokens: 5 });
    s.served("gone"); // a row not in flight: nothing
    expect(s.counters().generated_tokens).toBe(5);
  });
});
