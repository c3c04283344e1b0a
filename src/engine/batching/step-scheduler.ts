/**
 * The step scheduler of continuous batching (issue 38), pure and engine-neutral:
 * it decides what each forward step holds; the engine runs the step and says
 * which rows ended.
 *
 * - Rows join and leave at step boundaries. `plan()` admits waiting rows up to
 *   `maxRows` and returns the step: every row in flight advances, a decoding
 *   row by one token, a row still in its prompt by a chunk of at most
 *   `prefillChunkTokens` (its last chunk gives its first token), so a long
 *   prompt never holds up the rows already streaming.
 * - Admission takes turns between owners (clients, tabs): the owner whose row
 *   was admitted least recently goes first, so one owner's burst cannot starve
 *   another's request.
 * - Each step runs as one batched forward or one single forward per row,
 *   whichever the caller's cost model says is cheaper (cost-model.ts).
 * - A decoding row may feed its token plus a speculative draft to verify
 *   (`feed()`): the step is planned by the tokens it holds, and the draft
 *   tokens the model accepts (the row samples them with no forward of its
 *   own, `served()`) count as generated tokens, as a pass's token does.
 * - `commit()` records the step; a row that reached `maxTokens`, or that the
 *   engine says ended (a stop, its end of text), leaves then. `cancel()` (abort,
 *   a closed tab) removes a row at once, waiting or in flight; a step already
 *   planned with it discards its token.
 */
import { chooseForward, type ForwardChoice, type StepCostModel } from "./cost-model.js";
import { RowsPerPass, type BatchCounters, type RowBatchReport } from "./counters.js";

export interface StepSchedulerOptions {
  /** Rows in flight at most; beyond it rows wait (in owner turns). */
  maxRows: number;
  /** Prompt tokens one row feeds per step at most (a few hundred). */
  prefillChunkTokens: number;
  cost: StepCostModel;
  /**
   * Rows in their prompt take part in every step of it: the engine feeds each
   * chunk in its step and waits for the next (web-llm), rather than waiting
   * only for the step that gives the first token (the scripted engine).
   * Default false.
   */
  prefillStepwise?: boolean;
  /**
   * Tokens one step's forward may hold, all rows together (web-llm: the
   * library's prefill chunk, which bounds `batch_prefill`). Decoding rows
   * come first; prefill rows then take chunks, in admission order, from what
   * is left, and a row left with none sits the step out. Default unbounded.
   */
  stepTokens?: number;
}

export interface RowRequest {
  /** Unique among rows waiting or in flight. */
  id: string;
  /** Who asked (a client, a tab): admission takes turns between owners. */
  owner: string;
  /** Prompt tokens to prefill (those not already in the KV cache); at least one is always fed. */
  promptTokens: number;
  /** Tokens the row may sample at most (≥ 1); it leaves when it has them. */
  maxTokens: number;
  /** This row's prefill chunk, when not the scheduler's (Infinity: the whole prompt in one step, e.g. a prompt with an image). */
  prefillChunkTokens?: number;
  /**
   * Its prefill runs as forwards of its own, outside the step's forward
   * (web-llm: a prompt with an image, fed by web-llm's own prefill): each
   * step of it counts one pass of one row, outside the batch-or-single choice
   * and the step's token budget.
   */
  prefillApart?: boolean;
}

/** One row's part in a step. */
export interface StepRow {
  id: string;
  owner: string;
  phase: "prefill" | "decode";
  /** Tokens this row feeds in the step. */
  tokens: number;
  /** Whether the step gives this row a token (a decode, or its prompt's last chunk). */
  samples: boolean;
  /** Its prefill chunk runs as a forward of its own (`RowRequest.prefillApart`). */
  apart?: boolean;
}

export interface StepPlan extends ForwardChoice {
  /** 1-based step number. */
  step: number;
  rows: StepRow[];
  /** Tokens fed in all. */
  tokens: number;
  /** Prefill rows that run as forwards of their own (`prefillApart`); counted in `passes`, one row each. */
  apart?: number;
  /** Prefill rows take part in every step of their prompt (`prefillStepwise`). */
  stepwise?: boolean;
}

export type LeaveReason = "length" | "ended" | "cancelled";

export interface StepOutcome {
  /** Rows that got a token in the step, with its 0-based index in their output. */
  sampled: Array<{ id: string; index: number }>;
  /** Rows that left at the end of the step, with how many rows shared their passes. */
  left: Array<{ id: string; reason: LeaveReason; report: RowBatchReport }>;
}

/** Owners whose last admission is remembered; beyond it the least recently served are forgotten (and come first again). */
const REMEMBERED_OWNERS = 4096;

interface Row {
  request: RowRequest;
  /** Prompt tokens still to feed. */
  promptLeft: number;
  generated: number;
  /** Tokens the row feeds in its next decode step: its last token, plus a draft to verify. */
  feed: number;
  batch: RowsPerPass;
}

export class StepScheduler {
  private readonly waiting: Row[] = [];
  private readonly inFlight = new Map<string, Row>();
  /** When each owner last had a row admitted (admission counter), least recent first. Kept while the owner is idle, so an owner that asks again as soon as its reply ends does not jump ahead of one that waits. */
  private readonly lastAdmitted = new Map<string, number>();
  private admissions = 0;
  private steps = 0;
  private pending: StepPlan | null = null;
  private readonly passes = new RowsPerPass();
  private generated = 0;
  private prefilled = 0;

  constructor(private readonly options: StepSchedulerOptions) {
    if (!(options.maxRows >= 1)) throw new RangeError(`maxRows must be at least 1 (got ${options.maxRows}).`);
    if (!(options.prefillChunkTokens >= 1)) throw new RangeError(`prefillChunkTokens must be at least 1 (got ${options.prefillChunkTokens}).`);
    if (options.stepTokens !== undefined && !(options.stepTokens >= 1)) throw new RangeError(`stepTokens must be at least 1 (got ${options.stepTokens}).`);
  }

  /** Queues a row; it joins at the next step boundary with room. */
  submit(request: RowRequest): void {
    if (this.has(request.id)) throw new RangeError(`Row ${request.id} is already scheduled.`);
    if (!(request.maxTokens >= 1)) throw new RangeError(`Row ${request.id}: maxTokens must be at least 1 (got ${request.maxTokens}).`);
    this.waiting.push({ request, promptLeft: Math.max(1, request.promptTokens), generated: 0, feed: 1, batch: new RowsPerPass() });
  }

  /** Removes a row at once, waiting or in flight: its report, or null when it was not there. */
  cancel(id: string): RowBatchReport | null {
    const at = this.waiting.findIndex((row) => row.request.id === id);
    if (at >= 0) return reportOf(this.waiting.splice(at, 1)[0]);
    const row = this.inFlight.get(id);
    if (!row) return null;
    this.inFlight.delete(id);
    return reportOf(row);
  }

  has(id: string): boolean {
    return this.inFlight.has(id) || this.waiting.some((row) => row.request.id === id);
  }

  get rowsInFlight(): number {
    return this.inFlight.size;
  }

  get rowsWaiting(): number {
    return this.waiting.length;
  }

  /** The next step (admitting waiting rows first), or null when no row is in flight or waiting. */
  plan(): StepPlan | null {
    if (this.pending) throw new Error(`Step ${this.pending.step} is planned and not committed: commit it before planning the next.`);
    this.admit();
    if (this.inFlight.size === 0) return null;
    const rows: StepRow[] = [];
    // Decoding rows first (a token each, plus a draft to verify): they always advance; prefill rows share what is
    // left of the step's token budget.
    let budget = (this.options.stepTokens ?? Infinity) - [...this.inFlight.values()].filter((row) => row.promptLeft === 0).reduce((n, row) => n + row.feed, 0);
    for (const row of this.inFlight.values()) {
      const { id, owner } = row.request;
      if (row.promptLeft === 0) {
        rows.push({ id, owner, phase: "decode", tokens: row.feed, samples: true });
        continue;
      }
      const apart = row.request.prefillApart === true;
      const chunk = Math.min(row.promptLeft, row.request.prefillChunkTokens ?? this.options.prefillChunkTokens);
      const tokens = apart ? chunk : Math.min(chunk, Math.max(0, budget));
      if (tokens === 0) continue;
      if (!apart) budget -= tokens;
      rows.push({ id, owner, phase: "prefill", tokens, samples: tokens === row.promptLeft, ...(apart ? { apart } : {}) });
    }
    const apart = rows.filter((row) => row.apart);
    const together = apart.length > 0 ? rows.filter((row) => !row.apart) : rows;
    const choice = together.length > 0 ? chooseForward(together.map((row) => row.tokens), this.options.cost) : { mode: "single" as const, passes: 0, cost: 0 };
    for (const row of apart) choice.cost += this.options.cost.single(row.tokens);
    this.pending = { step: ++this.steps, rows, tokens: rows.reduce((sum, row) => sum + row.tokens, 0), ...choice, passes: choice.passes + apart.length, apart: apart.length, ...(this.options.prefillStepwise ? { stepwise: true } : {}) };
    return this.pending;
  }

  /**
   * Records the planned step as run. `ended`: rows whose sampled token ended
   * them (a stop, their end of text). Rows cancelled since the plan are skipped.
   */
  commit(plan: StepPlan, ended: Iterable<string> = []): StepOutcome {
    if (plan !== this.pending) throw new Error(`Step ${plan.step} is not the planned step.`);
    this.pending = null;
    const endedIds = new Set(ended);
    const apart = plan.apart ?? 0;
    const rowsPerPass = plan.mode === "batch" ? plan.rows.length - apart : 1;
    if (plan.passes > apart) this.passes.add(rowsPerPass, plan.passes - apart);
    if (apart > 0) this.passes.add(1, apart);
    const outcome: StepOutcome = { sampled: [], left: [] };
    for (const stepRow of plan.rows) {
      const row = this.inFlight.get(stepRow.id);
      // Cancelled after the plan: the pass ran, but its token is nobody's.
      if (!row) continue;
      row.batch.add(stepRow.apart ? 1 : rowsPerPass);
      if (stepRow.phase === "prefill") {
        row.promptLeft -= stepRow.tokens;
        this.prefilled += stepRow.tokens;
      } else row.feed = 1;
      if (!stepRow.samples) continue;
      outcome.sampled.push({ id: stepRow.id, index: row.generated });
      row.generated++;
      this.generated++;
      const reason: LeaveReason | null = endedIds.has(stepRow.id) ? "ended" : row.generated >= row.request.maxTokens ? "length" : null;
      if (reason) {
        this.inFlight.delete(stepRow.id);
        outcome.left.push({ id: stepRow.id, reason, report: reportOf(row) });
      }
    }
    return outcome;
  }

  /** The planned step did not run (its forward failed): nothing is recorded, and the next step can be planned. */
  abandon(plan: StepPlan): void {
    if (plan !== this.pending) throw new Error(`Step ${plan.step} is not the planned step.`);
    this.pending = null;
  }

  /**
   * Row `id`'s next decode step feeds `tokens`: its last token plus a draft
   * of `tokens - 1` to verify (the step is planned by it; its own next step
   * only). Ignored for a row not waiting or in flight.
   */
  feed(id: string, tokens: number): void {
    const row = this.inFlight.get(id) ?? this.waiting.find((waiting) => waiting.request.id === id);
    if (row) row.feed = Math.max(1, Math.floor(tokens));
  }

  /**
   * Row `id` sampled a token with no forward of its own: a draft token its
   * last verify accepted (the verify pass computed its logits). It counts as
   * a generated token, as a pass's does; the row is not removed for it (the
   * engine bounds drafts by what the row may still generate).
   */
  served(id: string, tokens = 1): void {
    const row = this.inFlight.get(id);
    if (!row || !(tokens > 0)) return;
    row.generated += tokens;
    this.generated += tokens;
  }

  /**
   * The engine learned how long row `id`'s prompt really was only as it fed
   * it (web-llm tokenizes inside its prefill): `tokens` more prompt tokens
   * than the row was submitted with go into `prefill_tokens`.
   */
  recordPrefill(tokens: number): void {
    if (tokens > 0) this.prefilled += tokens;
  }

  /** How many rows shared the passes `id` took part in so far; null for a row not in flight. */
  rowReport(id: string): RowBatchReport | null {
    const row = this.inFlight.get(id);
    return row ? reportOf(row) : null;
  }

  /** Engine-wide counts since the scheduler started. */
  counters(): BatchCounters {
    return {
      forward_passes: this.passes.passes,
      generated_tokens: this.generated,
      prefill_tokens: this.prefilled,
      mean_rows: this.passes.mean,
      max_rows: this.passes.max,
    };
  }

  /** Fills free rows from the waiting ones, the least recently served owner first. */
  private admit(): void {
    while (this.inFlight.size < this.options.maxRows && this.waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) {
        // Waiting rows are in arrival order: an owner's first waiting row is the one that counts, and ties keep arrival order.
        if (this.turnOf(this.waiting[i].request.owner) < this.turnOf(this.waiting[best].request.owner)) best = i;
      }
      const [row] = this.waiting.splice(best, 1);
      this.inFlight.set(row.request.id, row);
      const owner = row.request.owner;
      // Re-inserted, so the map stays in order of last admission and the first entry is the least recent.
      this.lastAdmitted.delete(owner);
      this.lastAdmitted.set(owner, ++this.admissions);
      if (this.lastAdmitted.size > REMEMBERED_OWNERS) this.lastAdmitted.delete(this.lastAdmitted.keys().next().value as string);
    }
  }

  /** An owner never served (or forgotten) comes before every owner served. */
  private turnOf(owner: string): number {
    return this.lastAdmitted.get(owner) ?? 0;
  }
}

function reportOf(row: Row): RowBatchReport {
  return { max_rows: row.batch.max, mean_rows: row.batch.mean, passes: row.batch.passes };
}
