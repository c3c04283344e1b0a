/**
 * Continuous batching on web-llm's loaded pipeline (issue 38): every
 * generation in flight is a row, and each decode step runs one forward for
 * all of them (`batch_decode`, or one `decode` per row where the measured
 * cost says so: webllm-step-forward.ts, measured-cost.ts).
 *
 * web-llm keeps a request's state on its `LLMChatPipeline` (output ids, the
 * grammar matcher, penalties' token counts, logprobs, the conversation, the
 * filled KV length) and runs one request at a time under a per-model lock. A
 * row therefore runs web-llm's own generation — its `asyncGenerate`, chunks,
 * stop rules, sampler — on a VIEW of the pipeline (`Object.create`): the
 * weights, functions, tokenizer and KV cache are the pipeline's, the request
 * state is the view's own. What the view changes:
 * - its forwards go to its own KV sequence (`fKVCacheBeginForward`), and
 *   `resetKVCache` empties only that sequence;
 * - `prefillStep` waits for the row's step, then runs as web-llm's;
 * - `decodeStep` parks the row's last token until the step runner has every
 *   row's token, the step forward runs once, and web-llm's own decode step
 *   then samples from the row's logits (`embedAndForward` hands them over);
 * - `setSeed` seeds the row's own random stream: the runtime's generator
 *   (`tvm.rng`) is switched to it while the row samples, so a `seed` gives
 *   the same reply whatever else is in the batch.
 * The other bindings' hooks (prompt cache, speculation) stay on the pipeline
 * itself; a view uses the methods as they were before those hooks. Sampling,
 * prefill and forwards share the pipeline's buffers and TVM scopes, so they
 * run one at a time (`exclusive`); only waiting is concurrent.
 *
 * A row starts from the prompt cache's longest prefix of its key (or another
 * row's prompt), and hands its prompt and reply back when it ends cleanly.
 * What a row does not do yet: speculate
 * (a row decodes one token per step; greedy output is the same), or take a
 * request that needs the logit processor (top_k, min_p, reasoning budgets,
 * more than 5 top logprobs): such a request runs alone (`alone()`), after
 * the rows in flight end, as today.
 */
import { AloneTurns, Serial } from "../../batching/alone-turns.js";
import { longestRowPrefix, splitAtSteps } from "../../batching/prefill-pieces.js";
import { giveOwnRequestState, PRISTINE, releaseViewState, rowsUnsupportedReason, type Fn, type RowRng, type RowsPipeline } from "./webllm-row-view.js";
import { MeasuredStepCost } from "../../batching/measured-cost.js";
import { WEIGHT_BOUND_COST, type StepCostModel } from "../../batching/cost-model.js";
import type { RowBatchReport, BatchCounters } from "../../batching/counters.js";
import { StepRunner, type BatchRow } from "../../batching/step-runner.js";
import { StepScheduler, type StepPlan } from "../../batching/step-scheduler.js";
import { stepForwardOf, type StepArray, type StepForward } from "./webllm-step-forward.js";
import { kvBytesPerToken, kvOpsOf, recreateKvCache } from "../prompt-cache/webllm-kv-ops.js";
import { RowSequences, type KvKeeper, type PrefixSource } from "./webllm-row-sequences.js";
import { cut, promptTokens, type InputData } from "../prompt-cache/webllm-binding.js";

export { rowsUnsupportedReason, type RowsPipeline } from "./webllm-row-view.js";
export type { KvKeeper, PrefixSource } from "./webllm-row-sequences.js";

export interface WebLlmRowsOptions {
  /** Rows in flight at most (the KV cache gets a sequence for each). */
  maxRows: number;
  /**
   * The client left `batching` unset: `maxRows` is where sizing starts, and
   * the engine lowers it to what the model library and the device's memory
   * allow when the model loads (webllm-kv-fit.ts). Otherwise the settings are
   * used as given.
   */
  sizeToDevice?: boolean;
  /** KV tokens all rows may hold together; default `maxRows` × min(context window, 2048). */
  kvTokens?: number;
  /** Prompt tokens a row prefills per step at most, so the rows already decoding keep flowing; default 256. */
  prefillChunkTokens?: number;
  /**
   * How a step of several decoding rows runs: "measured" (default) keeps
   * whichever of `batch_decode` and single decodes this device runs faster;
   * "batched" always batches two or more rows (a GPU).
   */
  forward?: "measured" | "batched";
  /** What a step's forward costs, used as given instead (tests); the device's times are still measured. */
  cost?: StepCostModel;
  /** The clock forwards are timed with (ms); default `performance.now` (tests: a simulated device's). */
  clock?: () => number;
}

/** A prompt is prefilled in steps of this many tokens by default (a few hundred: long enough to use the device). */
export const DEFAULT_PREFILL_CHUNK = 256;

export interface RowOpen {
  id: string;
  /** Who asked (a tab, a client): admission takes turns between owners. */
  owner: string;
  /** The request's `prompt_cache_key`: a row starts only from cached prefixes of its own key. */
  key?: string;
}

/** A row: the pipeline view web-llm generates with, and how it leaves. */
export interface RowHandle {
  readonly view: RowsPipeline;
  /** The KV sequence the row's forwards go to. */
  readonly sequence: number;
  /** Prompt tokens the row took from a cached prefix instead of prefilling them (0 before its prefill). */
  readonly cachedTokens: number;
  /**
   * The row's generation ended (any way): it leaves the steps and its KV
   * sequence goes. `keep`: it ended cleanly, and what its sequence holds
   * goes to the prompt cache first (the next turn starts from it). Returns
   * how many rows shared its passes.
   */
  leave(options?: { keep?: boolean }): RowBatchReport;
}

interface Row {
  id: string;
  owner: string;
  seq: number;
  view: RowsPipeline;
  /** The row in the steps; null until its prompt's length is known (web-llm tokenizes inside its prefill). */
  batch: BatchRow | null;
  /** Its prefill chunk (Infinity for a prompt with an image: web-llm's chunks are then fed in one step). */
  chunk: number;
  /** Prompt tokens fed so far in its prefill. */
  fed: number;
  /** Inside web-llm's decode step (its forward is the step's). */
  decoding: boolean;
  /** The token the row feeds in the next step (set while it waits for it). */
  input: number | undefined;
  /** Its logits from the step forward, until web-llm's decode step takes them. */
  logits: StepArray | null;
  /** The row's own random stream (a `seed`), else undefined: it draws from the runtime's. */
  randState: number | undefined;
  left: boolean;
  key: string | undefined;
  /** Prompt tokens forked from a cached prefix or another row. */
  reused: number;
  /** The prompt the row's sequence holds once its prefill is done (null before): later rows may fork it. */
  prompt: readonly number[] | null;
  /** The prompt's tokens as getInputData gave them (up to its first image), until the prefill is done. */
  promptSeen: readonly number[] | null;
}

export class WebLlmRows {
  readonly unsupported: string | null;
  readonly maxRows: number;
  private readonly prefillChunk: number;
  private readonly pristine: Record<(typeof PRISTINE)[number], Fn>;
  private readonly sequences: RowSequences | null;
  private readonly forward: StepForward | null;
  /** The forwards' times on this device, measured as they run. */
  private readonly measured = new MeasuredStepCost();
  private readonly clock: () => number;
  /** KV tokens reserved for all rows together. */
  private readonly kvRowTokens: number;
  private readonly scheduler: StepScheduler;
  private readonly runner: StepRunner;
  private readonly rows = new Map<string, Row>();
  /** Pipeline work (forwards, prefill chunks, sampling) runs one at a time. */
  private readonly work = new Serial();
  /** Rows prefill one at a time (web-llm's prefill step keeps a TVM scope open across its chunks). */
  private readonly prefills = new Serial();
  /** Requests that run alone take turns with the rows. */
  private readonly turns = new AloneTurns(() => this.rows.size === 0);

  /**
   * Snapshots `pipe` (just loaded, before the prompt cache and speculation
   * hook it) and fetches the library's functions. `reserveKv`: the caller
   * re-creates the KV cache with room for the rows (`kvReservation()`);
   * otherwise this does, with room for web-llm's own sequence 0 and the rows.
   */
  constructor(
    private readonly pipe: RowsPipeline,
    options: WebLlmRowsOptions,
    prefix: PrefixSource | null = null,
    keeper: KvKeeper | null = null,
  ) {
    this.maxRows = Math.max(1, Math.floor(options.maxRows));
    this.prefillChunk = Math.max(1, Math.floor(options.prefillChunkTokens ?? DEFAULT_PREFILL_CHUNK));
    this.clock = options.clock ?? (() => performance.now());
    this.kvRowTokens = WebLlmRows.kvReservation(pipe, options).tokens;
    const cost = options.cost ?? (options.forward === "batched" ? WEIGHT_BOUND_COST : this.measured);
    this.pristine = Object.fromEntries(PRISTINE.map((name) => [name, pipe[name] as Fn])) as Record<(typeof PRISTINE)[number], Fn>;
    let reason = rowsUnsupportedReason(pipe);
    const ops = reason ? null : kvOpsOf(pipe);
    if (!reason && !ops) reason = "model library without KV sequence functions";
    let forward: StepForward | null = null;
    if (!reason) {
      try {
        forward = stepForwardOf(pipe, this.pristine.fKVCacheBeginForward);
        if (!forward.batched) reason = "model library without batch_decode";
      } catch (error) {
        reason = (error as Error).message;
      }
    }
    if (!reason && !(pipe.tvm.rng && typeof pipe.tvm.rng.setSeed === "function")) reason = "runtime without a seedable sampler (tvm.rng)";
    this.unsupported = reason;
    this.forward = reason ? null : forward;
    this.sequences = ops && !reason ? new RowSequences(ops, this.maxRows, prefix, keeper) : null;
    this.scheduler = new StepScheduler({ maxRows: this.maxRows, prefillChunkTokens: this.prefillChunk, cost, prefillApart: true });
    this.runner = new StepRunner(this.scheduler, (plan) => this.runStep(plan));
  }

  /** KV room the rows need beside web-llm's (and the prompt cache's): sequences and tokens. */
  static kvReservation(pipe: { contextWindowSize?: number }, options: WebLlmRowsOptions): { sequences: number; tokens: number } {
    const rows = Math.max(1, Math.floor(options.maxRows));
    const window = pipe.contextWindowSize && pipe.contextWindowSize > 0 ? pipe.contextWindowSize : 4096;
    return { sequences: rows, tokens: options.kvTokens ?? rows * Math.min(window, 2048) };
  }

  /** Tokens of the cache `ensureKvRoom` makes: web-llm's own context window and the rows' room. */
  static ownKvTokens(pipe: { contextWindowSize?: number }, options: WebLlmRowsOptions): number {
    const window = pipe.contextWindowSize && pipe.contextWindowSize > 0 ? pipe.contextWindowSize : 4096;
    return window + WebLlmRows.kvReservation(pipe, options).tokens;
  }

  /** Makes the KV cache big enough for the rows when nobody else re-created it (prompt caching off). */
  ensureKvRoom(options: WebLlmRowsOptions): void {
    if (this.unsupported) return;
    recreateKvCache(this.pipe, WebLlmRows.ownKvTokens(this.pipe, options), 1 + WebLlmRows.kvReservation(this.pipe, options).sequences);
    this.pipe.resetKVCache();
  }

  /** Engine-wide counts of the rows' steps. */
  counters(): BatchCounters {
    const perToken = kvBytesPerToken(this.pipe);
    const perRow = perToken === null ? null : Math.round((perToken * this.kvRowTokens) / this.maxRows);
    return { ...this.scheduler.counters(), step_ms: this.measured.stepTimes(), ...(perRow !== null ? { kv_bytes_per_row: perRow } : {}) };
  }

  /**
   * A new row. Waits while a request that runs alone is queued or running
   * (so it cannot starve) and while every row sequence is taken; rejects
   * with the signal's reason on abort.
   */
  async open(request: RowOpen, signal: AbortSignal): Promise<RowHandle> {
    if (this.unsupported) throw new Error(`Rows are not available: ${this.unsupported}.`);
    // A row waits while a request runs alone (or waits to), and for a free sequence (more rows than
    // maxRows: several generations of one request, such as n choices, beside other requests).
    const sequences = this.sequences as RowSequences;
    while (this.turns.blocking || !sequences.available) {
      if (signal.aborted) break;
      await this.turns.change(signal);
    }
    if (signal.aborted) throw signal.reason ?? new DOMException("aborted", "AbortError");
    const seq = sequences.take();
    const row: Row = { id: request.id, owner: request.owner, seq, view: null as unknown as RowsPipeline, batch: null, chunk: this.prefillChunk, fed: 0, decoding: false, input: undefined, logits: null, randState: undefined, left: false, key: request.key, reused: 0, prompt: null, promptSeen: null };
    row.view = this.makeView(row, signal);
    this.rows.set(request.id, row);
    return {
      view: row.view,
      sequence: seq,
      get cachedTokens() {
        return row.reused;
      },
      leave: (options) => this.leave(row, options?.keep === true),
    };
  }

  /**
   * Runs `work` with the pipeline to itself: once the rows in flight have
   * ended, with no row opening until it is done (a request the rows cannot
   * take, e.g. one that needs the logit processor).
   */
  alone<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.turns.alone(work, signal);
  }

  private leave(row: Row, keep: boolean): RowBatchReport {
    const report = row.batch?.leave() ?? { max_rows: 0, mean_rows: 0, passes: 0 };
    if (row.left) return report;
    row.left = true;
    row.logits?.dispose();
    row.logits = null;
    if (keep && row.prompt) this.sequences?.keep(row.seq, row.prompt, row.view.outputIds, row.view.filledKVCacheLength, row.key);
    releaseViewState(this.pipe, row.view);
    this.rows.delete(row.id);
    // Removed between forwards: a step's forward is synchronous up to its read-back, and a leaving row is not in it.
    this.sequences?.release(row.seq);
    this.turns.rowLeft();
    return report;
  }

  /** Runs a row's prefill once the previous row's prefill is done. */
  private prefillTurn<T>(work: () => Promise<T>): Promise<T> {
    return this.prefills.run(work);
  }

  /** Runs `work` once the pipeline's previous work is done. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.work.run(work);
  }

  /** The step's forward over its decoding rows (prefill rows run their own, in web-llm's prefill step). */
  private async runStep(plan: StepPlan): Promise<void> {
    const decoding = plan.rows
      .filter((stepRow) => stepRow.phase === "decode")
      .map((stepRow) => this.rows.get(stepRow.id))
      .filter((row): row is Row => !!row && !row.left && row.input !== undefined);
    if (decoding.length === 0) return;
    const mode = plan.mode === "batch" && decoding.length > 1 ? "batch" : "single";
    await this.exclusive(async () => {
      const started = this.clock();
      const logits = await (this.forward as StepForward).run(
        decoding.map((row) => ({ seq: row.seq, token: row.input as number })),
        mode,
      );
      const ms = this.clock() - started;
      if (mode === "batch") this.measured.record("batch", decoding.length, ms);
      else this.measured.record("single", 1, ms / decoding.length);
      decoding.forEach((row, i) => {
        row.logits?.dispose();
        row.logits = logits[i];
        row.input = undefined;
      });
    });
  }

  /**
   * The part of `full` the row still prefills after forking the longest
   * prefix it can into its sequence: from a row of its key whose prefill is
   * done (the n choices of one request, requests with one system prompt), or
   * from the prompt cache, whichever shares more.
   */
  private startFromCache(row: Row, full: InputData): InputData {
    const view = row.view;
    if (view.filledKVCacheLength !== 0) return this.joinSteps(row, full, full[0].some((element) => !Array.isArray(element)));
    const { tokens, firstImage } = promptTokens(full[0], full[1], full[2]);
    row.promptSeen = tokens.slice(0, firstImage ?? tokens.length);
    const bound = Math.min(firstImage ?? tokens.length, tokens.length - 1);
    const { donor, shared } = longestRowPrefix(this.rows.values(), row, tokens, bound);
    const reused = (this.sequences as RowSequences).startFrom(row.seq, full, row.key, donor ? { seq: donor.seq, shared } : null);
    if (reused === 0) return this.joinSteps(row, full, firstImage !== undefined);
    row.reused = reused;
    view.filledKVCacheLength = reused;
    return this.joinSteps(row, [cut(full[0], reused), full[1] - reused, ...full.slice(2)] as InputData, firstImage !== undefined);
  }

  /** The row joins the steps with what web-llm will prefill (`rest`); a prompt with an image goes in one step. */
  private joinSteps(row: Row, rest: InputData, image: boolean): InputData {
    row.fed = 0;
    row.chunk = image ? Infinity : this.prefillChunk;
    row.batch ??= this.runner.join({ id: row.id, owner: row.owner, promptTokens: rest[1], maxTokens: Number.MAX_SAFE_INTEGER, ...(image ? { prefillChunkTokens: Infinity } : {}) });
    return rest;
  }

  /**
   * One of web-llm's prefill chunks, fed in the steps' chunks: at each step
   * boundary (every `row.chunk` tokens of the prompt) the row waits for its
   * step, then forwards what that step holds, exclusively. web-llm gets the
   * last piece's logits; an abort while waiting ends the prefill with an
   * AbortError.
   */
  private async prefillChunkForward(row: Row, signal: AbortSignal, inputData: unknown[], inputDataLen: number): Promise<unknown> {
    const view = row.view;
    const tvm = this.pipe.tvm;
    const forward = this.pristine.embedAndForward;
    const pieces = splitAtSteps(inputData, inputDataLen, row.fed, row.chunk);
    let logits: unknown = null;
    for (const [i, piece] of pieces.entries()) {
      if (row.fed % row.chunk === 0) {
        if (!row.batch) throw new Error("A row prefilled before its prompt was tokenized.");
        // An AbortError whatever the signal's reason: the generation maps it to the request's abort.
        if (!(await row.batch.pass(signal))) throw new DOMException("The request was aborted while its prompt was prefilled.", "AbortError");
      }
      const last = i === pieces.length - 1;
      const out = await this.exclusive(async () => {
        // web-llm's forward attaches its logits to the current scope (the prefill's); a piece before the
        // last is not web-llm's: detached and freed.
        const result = await (forward.call(view, piece.data, piece.length) as Promise<unknown>);
        if (!last) (tvm.detachFromCurrentScope(result) as { dispose?: () => void }).dispose?.();
        return result;
      });
      row.fed += piece.length;
      if (last) logits = out;
    }
    return logits;
  }

  /** With the row's random stream in the runtime's generator while `work` samples. */
  private async withRowRandom<T>(row: Row, work: () => Promise<T>): Promise<T> {
    const rng = this.pipe.tvm.rng as RowRng;
    if (row.randState === undefined || rng.rand_state === undefined) return work();
    const saved = rng.rand_state;
    rng.rand_state = row.randState;
    try {
      return await work();
    } finally {
      row.randState = rng.rand_state;
      rng.rand_state = saved;
    }
  }

  private makeView(row: Row, signal: AbortSignal): RowsPipeline {
    const base = this.pipe;
    const view = Object.create(base) as RowsPipeline & Record<string, unknown>;
    const pristine = this.pristine;
    for (const name of PRISTINE) (view as Record<string, unknown>)[name] = pristine[name];
    giveOwnRequestState(view, base);
    const sequences = this.sequences as RowSequences;
    const tvm = base.tvm;
    view.fKVCacheBeginForward = (kv: unknown, _seqs: unknown, ...rest: unknown[]) => pristine.fKVCacheBeginForward(kv, tvm.makeShapeTuple([row.seq]), ...rest);
    view.resetKVCache = () => {
      sequences.reset(row.seq);
      view.filledKVCacheLength = 0;
    };
    view.setSeed = (seed: number) => {
      // The generator's state after seeding it with `seed`, computed on the generator and put back.
      const rng = tvm.rng as RowRng;
      const saved = rng.rand_state;
      rng.setSeed(seed);
      row.randState = rng.rand_state;
      rng.rand_state = saved;
    };
    // The whole prompt, as web-llm tokenizes it for a fresh conversation; a cached prefix (forked into the row's
    // sequence) is not prefilled again.
    view.getInputData = () => {
      const full = pristine.getInputData.call(view) as InputData | Promise<InputData>;
      return full instanceof Promise ? full.then((data) => this.startFromCache(row, data)) : this.startFromCache(row, full);
    };
    // web-llm's prefill step, one row at a time (its TVM scope stays open across the steps its chunks wait
    // for): the row joins the steps once its prompt is tokenized (getInputData), each chunk waits for its
    // step, and the first token is sampled as the last chunk's step ends.
    const prefillStep = base.prefillStep as Fn;
    view.prefillStep = (...args: unknown[]) =>
      this.prefillTurn(async () => {
        await (prefillStep.apply(view, args) as Promise<void>);
        // Its sequence now holds the prompt: rows prefilled after it may fork it.
        row.prompt = row.promptSeen;
      });
    const sample = base.sampleTokenFromLogits as Fn;
    view.sampleTokenFromLogits = (...args: unknown[]): Promise<number> =>
      // In a decode step the whole step already runs exclusively (below); the prefill's sample takes its turn.
      (row.decoding ? sample.apply(view, args) : this.exclusive(() => this.withRowRandom(row, () => sample.apply(view, args) as Promise<number>))) as Promise<number>;
    view.decodeStep = async (genConfig?: unknown) => {
      if (view.stopTriggered) throw new Error("Cannot run decode when stopped");
      const batch = row.batch as BatchRow;
      row.input = view.outputIds[view.outputIds.length - 1];
      if (!(await batch.pass(signal))) {
        row.input = undefined;
        view.triggerStop();
        return;
      }
      row.decoding = true;
      try {
        await this.exclusive(() => this.withRowRandom(row, () => pristine.decodeStep.call(view, genConfig) as Promise<void>));
      } finally {
        row.decoding = false;
      }
    };
    // web-llm's decode step forwards its last token: the step already did; hand over the row's logits.
    view.embedAndForward = async (inputData: unknown[], inputDataLen: number) => {
      if (!row.decoding) return this.prefillChunkForward(row, signal, inputData, inputDataLen);
      const logits = row.logits;
      if (!logits) return pristine.embedAndForward.call(view, inputData, inputDataLen);
      row.logits = null;
      view.filledKVCacheLength += 1;
      return tvm.attachToCurrentScope ? tvm.attachToCurrentScope(logits) : logits;
    };
    return view;
  }
}
