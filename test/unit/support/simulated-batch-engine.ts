/**
 * A simulated engine for the step scheduler's tests: it runs each planned step
 * as a forward that costs what the cost model says, and samples each row's
 * next token from that row's own history only (its prompt seed and the
 * tokens it sampled before), as a model decoding a sequence does. A row's
 * script says when it ends by itself (its end-of-text token).
 */
import type { StepPlan, StepScheduler } from "../../../src/engine/batching/step-scheduler.js";

export interface SimRow {
  id: string;
  owner?: string;
  promptTokens: number;
  maxTokens: number;
  /** The row samples its end of text as token number `endsAfter` (1-based); absent: never. */
  endsAfter?: number;
  /** Seed of the row's "model state": different seeds give different tokens. */
  seed: number;
}

/** The next token of a sequence that holds `seed`'s prompt and `history`. */
export function nextToken(seed: number, history: readonly number[]): number {
  let h = (seed * 2654435761) >>> 0;
  for (const t of history) h = Math.imul(h ^ t, 16777619) >>> 0;
  return h % 50_000;
}

export interface SimTrace {
  /** Tokens per row, in order. */
  outputs: Map<string, number[]>;
  /** Step at which each row got each token (1-based). */
  tokenSteps: Map<string, number[]>;
  plans: StepPlan[];
  /** Simulated time, in cost units. */
  time: number;
  left: Map<string, string>;
}

export interface SimHooks {
  /** Called before each step is planned (submit late arrivals, cancel rows). `step` is the number the next plan gets. */
  beforePlan?: (step: number, trace: SimTrace) => void;
  /** Called between plan and commit (a cancel racing the forward). */
  duringStep?: (plan: StepPlan, trace: SimTrace) => void;
}

/** A row submitted once the row `after.id` has sampled `after.tokens` tokens. */
export type LateRow = SimRow & { after: { id: string; tokens: number } };

/** Submits `rows` (and `late` rows when due), then runs steps until the scheduler is empty. */
export function simulate(scheduler: StepScheduler, rows: SimRow[], hooks: SimHooks = {}, late: LateRow[] = []): SimTrace {
  const byId = new Map<string, SimRow>();
  const trace: SimTrace = { outputs: new Map(), tokenSteps: new Map(), plans: [], time: 0, left: new Map() };
  const submit = (row: SimRow) => {
    byId.set(row.id, row);
    trace.outputs.set(row.id, []);
    trace.tokenSteps.set(row.id, []);
    scheduler.submit({ id: row.id, owner: row.owner ?? row.id, promptTokens: row.promptTokens, maxTokens: row.maxTokens });
  };
  rows.forEach(submit);
  const due = (row: LateRow) => (trace.outputs.get(row.after.id)?.length ?? 0) >= row.after.tokens;
  late = [...late];
  for (let guard = 0; guard < 100_000; guard++) {
    hooks.beforePlan?.(guard + 1, trace);
    while (late.length > 0 && due(late[0])) submit(late.shift()!);
    const plan = scheduler.plan();
    if (!plan) {
      if (late.length > 0) {
        submit(late.shift()!);
        continue;
      }
      return trace;
    }
    trace.plans.push(plan);
    trace.time += plan.cost;
    hooks.duringStep?.(plan, trace);
    const ended: string[] = [];
    const sampledNow = new Map<string, number>();
    for (const stepRow of plan.rows) {
      if (!stepRow.samples) continue;
      const row = byId.get(stepRow.id)!;
      const history = trace.outputs.get(row.id)!;
      sampledNow.set(row.id, nextToken(row.seed, history));
      if (row.endsAfter !== undefined && history.length + 1 >= row.endsAfter) ended.push(row.id);
    }
    const outcome = scheduler.commit(plan, ended);
    for (const { id, index } of outcome.sampled) {
      const output = trace.outputs.get(id)!;
      if (index !== output.length) throw new Error(`row ${id}: token ${index} out of order (has ${output.length})`);
      output.push(sampledNow.get(id)!);
      trace.tokenSteps.get(id)!.push(plan.step);
    }
    for (const { id, reason } of outcome.left) trace.left.set(id, reason);
  }
  throw new Error("simulation did not end");
}

/** A row's output when it runs alone. */
export function alone(scheduler: StepScheduler, row: SimRow): number[] {
  return simulate(scheduler, [row]).outputs.get(row.id)!;
}
