/**
 * Continuous batching on web-llm's loaded pipeline (issue 38): every
 * generation in flight is a row, and each step runs one forward for all of
 * them: each decoding row's token and each prefilling row's next chunk of its
 * prompt (`batch_prefill` over mixed rows, `batch_decode` when every row
 * decodes), or one forward per row where the measured cost says so
 * (webllm-step-forward.ts, measured-cost.ts).
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
 * - `getInputData` forks the longest prefix the row can and hands web-llm's
 *   prefill step the last token of a text prompt: the steps feed the rest
 *   beside the other rows' tokens, and its forward returns the logits the
 *   step of the prompt's last chunk left (webllm-row-prompt.ts,
 *   webllm-shared-prefill.ts). A prompt with an image is web-llm's own
 *   prefill, in forwards of its own between the steps;
 * - `decodeStep` parks the row's last token (and a draft) until the step
 *   runner has every row's input, the step forward runs once, and web-llm's
 *   own decode step then samples from the row's logits (`embedAndForward`
 *   hands them over; webllm-row-decode.ts);
 * - `setSeed` seeds the row's own random stream (`RowRandom`), so a `seed`
 *   gives the same reply whatever else is in the batch.
 * The other bindings' hooks (prompt cache, speculation) stay on the pipeline
 * itself; a view uses the methods as they were before those hooks. Sampling
 * and forwards share the pipeline's buffers and TVM scopes, so they run one
 * at a time (`exclusive`); only waiting is concurrent. web-llm's prefill
 * steps keep a TVM scope open (empty) while they wait for the steps: they
 * open it and close it in turns of that work, so the tvmjs scope stack never
 * changes inside another row's forward.
 *
 * A decoding row with speculation on may feed a draft after its token, verified
 * in the same step (webllm-row-drafts.ts), from the sources a request alone
 * drafts from (a regenerate: the reply its key's prompt cache holds). A row hands its prompt and reply
 * back to the prompt cache when it ends cleanly. What a row does not do yet:
 * take a request that needs the logit processor (top_k, min_p, reasoning
 * budgets, more than 5 top logprobs): such a request runs alone (`alone()`),
 * after the rows in flight end, as today.
 */
import type { RowsSettings } from "../../batching/options.js";
import { AloneTurns, Serial } from "../../batching/alone-turns.js";
import { addPrefillCount, stepInputs, type SharedPrompt } from "./webllm-shared-prefill.js";
import { newRow, type Row } from "./webllm-row.js";
import { RowPrompts } from "./webllm-row-prompt.js";
import { giveOwnRequestState, PRISTINE, releaseViewState, RowRandom, rowsUnsupportedReason, type Fn, type RowRng, type RowsPipeline } from "./webllm-row-view.js";
import { MeasuredStepCost } from "../../batching/measured-cost.js";
import { WEIGHT_BOUND_COST, type StepCostModel } from "../../batching/cost-model.js";
import type { RowBatchReport, BatchCounters } from "../../batching/counters.js";
import { StepRunner } from "../../batching/step-runner.js";
import { StepScheduler, type StepPlan } from "../../batching/step-scheduler.js";
import { disposeAll, stepForwardOf, type StepArray, type StepForward } from "./webllm-step-forward.js";
import { kvBytesPerToken, kvOpsOf, recreateKvCache } from "../prompt-cache/webllm-kv-ops.js";
import { RowSequences, type CachedReplies, type KvKeeper, type PrefixSource } from "./webllm-row-sequences.js";
import type { InputData } from "../prompt-cache/webllm-binding.js";
import { RowDrafts, type RowSpeculation } from "./webllm-row-drafts.js";
import { hookRowDecode } from "./webllm-row-decode.js";
import { closeLeftScopes, countingScopes, type ScopeCount } from "./webllm-row-scopes.js";
import type { SpeculationUsage } from "../../speculative/counters.js";

export { rowsUnsupportedReason, type RowsPipeline } from "./webllm-row-view.js";
export type { CachedReplies, KvKeeper, PrefixSource } from "./webllm-row-sequences.js";

/** The rows' settings (engine/batching/options.ts, where `createClient({ batching })` is turned into them). */
export type WebLlmRowsOptions = RowsSettings;

/** A prompt is prefilled in steps of this many tokens by default (a few hundred: long enough to use the device). */
export const DEFAULT_PREFILL_CHUNK = 256;

export interface RowOpen {
  id: string;
  /** Who asked (a tab, a client): admission takes turns between owners. */
  owner: string;
  /** The request's `prompt_cache_key`: a row starts only from cached prefixes of its own key. */
  key?: string;
  /** Speculative drafts for the row (absent: none, one token per step). */
  speculative?: RowSpeculation;
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
  /** Its drafts' counts once it left (passes, drafted and accepted tokens, the prediction's); null without speculation. */
  readonly speculation: SpeculationUsage | null;
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
  /** Where rows' prompts start and how they are fed. */
  private readonly prompts: RowPrompts;
  private readonly rows = new Map<string, Row>();
  /** Pipeline work (forwards, prefill chunks, sampling) runs one at a time. */
  private readonly work = new Serial();
  /** Requests that run alone take turns with the rows. */
  private readonly turns = new AloneTurns(() => this.rows.size === 0);
  /** Rows' speculative drafts (null: the library cannot verify them beside other rows). */
  private readonly drafts: RowDrafts | null;

  /**
   * Snapshots `pipe` (just loaded, before the prompt cache and speculation
   * hook it) and fetches the library's functions. `reserveKv`: the caller
   * re-creates the KV cache with room for the rows (`kvReservation()`);
   * otherwise this does, with room for web-llm's own sequence 0 and the rows.
   * `prefix`, `keeper`, `cachedReplies`: the prompt cache's side (null: none
   * managed): where a row's prompt starts, where its KV goes when it ends,
   * and the replies a row drafts from after its prompt (a regenerate).
   */
  constructor(
    private readonly pipe: RowsPipeline,
    options: WebLlmRowsOptions,
    prefix: PrefixSource | null = null,
    keeper: KvKeeper | null = null,
    cachedReplies: CachedReplies | null = null,
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
    // A step's forward holds at most the library's prefill chunk (batch_prefill's bound), prompt chunks included.
    const stepTokens = pipe.prefillChunkSize && pipe.prefillChunkSize > 0 ? pipe.prefillChunkSize : 2048;
    this.scheduler = new StepScheduler({ maxRows: this.maxRows, prefillChunkTokens: Math.min(this.prefillChunk, stepTokens), cost, prefillStepwise: true, stepTokens });
    this.runner = new StepRunner(this.scheduler, (plan) => this.runStep(plan));
    this.drafts = this.forward?.mixed
      ? new RowDrafts({ pipe, rows: this.rows, sequences: this.sequences as RowSequences, cost, stepTokens, maxRows: this.maxRows, prefillChunk: this.prefillChunk, costInMs: !options.cost && options.forward !== "batched" })
      : null;
    this.prompts = new RowPrompts({
      tvm: pipe.tvm,
      rows: this.rows,
      runner: this.runner,
      sequences: this.sequences as RowSequences,
      cachedReplies,
      mixed: this.forward?.mixed === true,
      prefillChunk: this.prefillChunk,
      ownForward: this.pristine.embedAndForward,
      exclusive: (work) => this.exclusive(work),
      holdTurn: (row, work) => this.holdTurn(row, work),
      releaseTurn: (row) => this.releaseTurn(row),
    });
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
    return {
      ...this.scheduler.counters(),
      step_ms: this.measured.stepTimes(),
      ...(this.forward ? { forward_kinds: { ...this.forward.kinds } } : {}),
      ...(perRow !== null ? { kv_bytes_per_row: perRow } : {}),
    };
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
    const row = newRow(request.id, request.owner, request.key, seq, this.prefillChunk, new RowRandom(this.pipe.tvm.rng as RowRng));
    row.view = this.makeView(row, signal);
    this.drafts?.open(row, request.speculative);
    this.rows.set(request.id, row);
    return {
      view: row.view,
      sequence: seq,
      get cachedTokens() {
        return row.reused;
      },
      leave: (options) => this.leave(row, options?.keep === true),
      get speculation() {
        return row.usage;
      },
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
    // A pending draft's tokens leave the sequence first: it holds what was accepted, as the cache keeps it.
    row.usage = this.drafts?.end(row) ?? null;
    row.left = true;
    row.logits?.dispose();
    row.logits = null;
    this.releaseTurn(row);
    row.markPrefilled();
    if (keep && row.prompt) this.sequences?.keep(row.seq, row.prompt, row.view.outputIds, row.view.filledKVCacheLength, row.key);
    releaseViewState(this.pipe, row.view);
    this.rows.delete(row.id);
    // Removed between forwards: a step's forward is synchronous up to its read-back, and a leaving row is not in it.
    this.sequences?.release(row.seq);
    this.turns.rowLeft();
    return report;
  }

  /** Runs `work` once the pipeline's previous work is done. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.work.run(work);
  }

  /**
   * Runs `work` in a turn of the pipeline's work that stays held until the
   * row's first token is sampled (or its prefill step ends): web-llm takes
   * the prompt's last logits, detaches them and closes its prefill scope in
   * between, which must not land inside another row's forward.
   */
  private async holdTurn<T>(row: Row, work: () => Promise<T>): Promise<T> {
    const { value, release } = await this.work.runHeld(work);
    row.held = release;
    return value;
  }

  private releaseTurn(row: Row): void {
    const release = row.held;
    row.held = null;
    release?.();
  }

  /**
   * The step's forward over its rows: each decoding row's token and each
   * prefilling row's chunk of its prompt, as ONE batched forward (mixed rows:
   * `batch_prefill`) or one forward per row, as the plan chose. A row whose
   * prompt web-llm feeds itself (an image) runs its own forward (`apart`).
   */
  private async runStep(plan: StepPlan): Promise<void> {
    const inputs = stepInputs(plan, this.rows);
    if (inputs.length === 0) return;
    const forward = this.forward as StepForward;
    const mode = plan.mode === "batch" && inputs.length > 1 ? "batch" : "single";
    await this.exclusive(async () => {
      let logits: StepArray[][] = [];
      if (mode === "batch") {
        const started = this.clock();
        logits = await forward.run(inputs, "batch");
        this.measured.record("batch", inputs.length, this.clock() - started, inputs.reduce((n, input) => n + input.tokens.length, 0));
      } else {
        try {
          for (const input of inputs) {
            const started = this.clock();
            // One entry per row input, but appended in a loop: never spread into call arguments.
            for (const rowLogits of await forward.run([input], "single")) logits.push(rowLogits);
            this.measured.record("single", 1, this.clock() - started, input.tokens.length);
          }
        } catch (error) {
          // A forward failed (the device): the step gives no row its logits, so the earlier rows' go now.
          disposeAll(logits);
          throw error;
        }
      }
      inputs.forEach(({ row, phase, tokens, samples }, i) => {
        const draft = row.draft;
        row.input = undefined;
        row.draft = [];
        // It left while the forward ran (an abort): nobody takes its logits.
        if (row.left) return logits[i].forEach((array) => array.dispose());
        if (phase === "prefill") {
          (row.shared as SharedPrompt).fed += tokens.length;
          if (!samples) return logits[i][0].dispose();
          // Its sequence holds the whole prompt: rows waiting to fork it may.
          row.prompt = row.promptSeen;
          row.markPrefilled();
        }
        row.logits?.dispose();
        // A decoding row's token: its draft's logits (if it carried one) wait for the steps that feed it.
        row.logits = phase === "decode" && this.drafts ? this.drafts.ran(row, draft, logits[i]) : logits[i][0];
      });
    });
  }

  private makeView(row: Row, signal: AbortSignal): RowsPipeline {
    const base = this.pipe;
    const view = Object.create(base) as RowsPipeline & Record<string, unknown>;
    const pristine = this.pristine;
    for (const name of PRISTINE) (view as Record<string, unknown>)[name] = pristine[name];
    giveOwnRequestState(view, base);
    const sequences = this.sequences as RowSequences;
    const tvm = base.tvm;
    // web-llm's code runs on the pipeline's runtime with the scopes it opens counted (webllm-row-scopes.ts).
    const scopes: ScopeCount = { open: 0 };
    view.tvm = countingScopes(tvm, scopes);
    view.fKVCacheBeginForward = (kv: unknown, _seqs: unknown, ...rest: unknown[]) => pristine.fKVCacheBeginForward(kv, tvm.makeShapeTuple([row.seq]), ...rest);
    view.resetKVCache = () => {
      sequences.reset(row.seq);
      view.filledKVCacheLength = 0;
    };
    view.setSeed = (seed: number) => row.random.seed(seed);
    // The whole prompt, as web-llm tokenizes it for a fresh conversation; a cached prefix (forked into the row's
    // sequence) is not prefilled again.
    view.getInputData = () => {
      const full = pristine.getInputData.call(view) as InputData | Promise<InputData>;
      return full instanceof Promise ? full.then((data) => this.prompts.startFromCache(row, data)) : this.prompts.startFromCache(row, full);
    };
    // web-llm's prefill step: the row joins the steps once its prompt is tokenized (getInputData), its prompt
    // is fed by them, and its first token is sampled as the step of its last chunk ends.
    const prefillStep = base.prefillStep as Fn;
    view.prefillStep = async (...args: unknown[]) => {
      let running: Promise<void> = Promise.resolve();
      const openBefore = scopes.open;
      // It opens its TVM scope as it starts: in a turn of the pipeline's work, so never between another
      // row's forward and the hand-over of its logits. (Its scope stays open, empty, while it waits.)
      await this.exclusive(async () => void (running = prefillStep.apply(view, args) as Promise<void>));
      try {
        await running;
      } catch (error) {
        // A prefill that failed (an abort, a failed step) may have left its scope open (web-llm 0.2.79 does).
        this.releaseTurn(row);
        const left = scopes.open - openBefore;
        if (left > 0) await this.exclusive(async () => closeLeftScopes(tvm, scopes, left));
        throw error;
      } finally {
        this.releaseTurn(row);
      }
      // web-llm counted the one token it was handed; the rest the steps fed counts as prefilled too (usage).
      const counted = row.shared ? row.shared.tokens.length - row.reused - 1 : 0;
      if (counted > 0) addPrefillCount(view, counted);
      // Its sequence now holds the prompt: rows prefilled after it may fork it.
      row.prompt ??= row.promptSeen;
      row.markPrefilled();
    };
    const sample = base.sampleTokenFromLogits as Fn;
    view.sampleTokenFromLogits = async (...args: unknown[]): Promise<number> => {
      // In a decode step the whole step already runs exclusively (below).
      if (row.decoding) return sample.apply(view, args) as Promise<number>;
      // The prefill's first token: in the turn its last logits were handed over in, else a turn of its own.
      if (!row.held) return this.exclusive(() => row.random.with(() => sample.apply(view, args) as Promise<number>));
      try {
        return await row.random.with(() => sample.apply(view, args) as Promise<number>);
      } finally {
        this.releaseTurn(row);
      }
    };
    hookRowDecode(view, row, signal, { drafts: this.drafts, exclusive: (work) => this.exclusive(work), clock: this.clock, pristine });
    // web-llm's decode step forwards its last token: the step already did; hand over the row's logits.
    view.embedAndForward = async (inputData: unknown[], inputDataLen: number) => {
      if (!row.decoding) return row.shared ? this.prompts.feedPromptInSteps(row, row.shared, signal, inputDataLen) : this.prompts.prefillChunkForward(row, signal, inputData, inputDataLen);
      const logits = row.logits;
      if (!logits) return pristine.embedAndForward.call(view, inputData, inputDataLen);
      row.logits = null;
      view.filledKVCacheLength += 1;
      return tvm.attachToCurrentScope ? tvm.attachToCurrentScope(logits) : logits;
    };
    return view;
  }
}
