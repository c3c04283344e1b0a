/**
 * Where a row's prompt starts and how it is fed (webllm-rows.ts). A row
 * forks the longest prefix it can: from the prompt cache, from a row of its
 * key whose prompt is in its sequence, or, once it is, from a row of its key
 * still prefilling (the n choices of one request prefill their prompt once).
 * The rest of a text prompt is fed by the steps' forwards beside the other
 * rows' tokens (webllm-shared-prefill.ts); a prompt with an image by
 * web-llm's own prefill, in forwards of its own between the steps.
 */
import { splitAtSteps, longestRowPrefix } from "../../batching/prefill-pieces.js";
import type { StepRunner } from "../../batching/step-runner.js";
import { cut, promptTokens, type InputData } from "../prompt-cache/webllm-binding.js";
import type { Row } from "./webllm-row.js";
import type { CachedReplies, RowSequences } from "./webllm-row-sequences.js";
import type { Fn, RowsPipeline } from "./webllm-row-view.js";
import { prefillingDonor, untilAborted, type SharedPrompt } from "./webllm-shared-prefill.js";

/** What the rows lend: their state, their steps, the pipeline's turns. */
export interface RowPromptDeps {
  tvm: RowsPipeline["tvm"];
  rows: ReadonlyMap<string, Row>;
  runner: StepRunner;
  sequences: RowSequences;
  /** What the prompt cache holds after a prompt (null: no managed prompt cache). */
  cachedReplies: CachedReplies | null;
  /** Whether the library can run mixed rows (`batch_prefill`, `prefill`): else every prompt is web-llm's to feed. */
  mixed: boolean;
  /** Prompt tokens a row feeds per step at most. */
  prefillChunk: number;
  /** web-llm's own `embedAndForward`, as before any binding hooked it. */
  ownForward: Fn;
  /** Runs work in a turn of the pipeline's work. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Runs work in a turn held until the row's first token is sampled (or `releaseTurn`). */
  holdTurn<T>(row: Row, work: () => Promise<T>): Promise<T>;
  releaseTurn(row: Row): void;
}

export class RowPrompts {
  constructor(private readonly deps: RowPromptDeps) {}

  /**
   * What web-llm's prefill step is handed after the row forked the longest
   * prefix it can into its sequence: from a row of its key whose prefill is
   * done (the n choices of one request, requests with one system prompt), or
   * from the prompt cache, whichever shares more. A text prompt is then fed
   * by the steps' forwards (`row.shared`), beside the other rows' tokens:
   * web-llm is handed its last token only, and the rest counts as already in
   * the sequence, like a forked prefix. A prompt with an image is handed to
   * web-llm's own prefill, as the rest after the prefix.
   */
  startFromCache(row: Row, full: InputData): InputData {
    const view = row.view;
    const image = full[0].some((element) => !Array.isArray(element));
    if (view.filledKVCacheLength !== 0) return this.joinApart(row, full, image);
    const { tokens, firstImage } = promptTokens(full[0], full[1], full[2]);
    row.promptSeen = tokens.slice(0, firstImage ?? tokens.length);
    const bound = Math.min(firstImage ?? tokens.length, tokens.length - 1);
    // A row that drafts does so from the replies its key's cache holds after this prompt too (a regenerate), as
    // alone: read before the fork below marks the sequence it forks used, so they come in the order alone gets them.
    if (row.drafts && this.deps.cachedReplies) row.cachedReplies = this.deps.cachedReplies(tokens, row.key);
    const { donor, shared } = longestRowPrefix(this.deps.rows.values(), row, tokens, bound);
    const reused = this.deps.sequences.startFrom(row.seq, full, row.key, donor ? { seq: donor.seq, shared } : null);
    row.reused = reused;
    view.filledKVCacheLength = reused;
    if (!image && this.deps.mixed) {
      row.shared = { tokens, fed: reused, donor: prefillingDonor(this.deps.rows.values(), row, tokens, reused, bound) };
      view.filledKVCacheLength = tokens.length - 1;
      return [cut(full[0], tokens.length - 1), 1, ...full.slice(2)] as InputData;
    }
    return this.joinApart(row, reused === 0 ? full : ([cut(full[0], reused), full[1] - reused, ...full.slice(2)] as InputData), image);
  }

  /** The row joins the steps with what web-llm's own prefill will feed (`rest`), in forwards of its own; a prompt with an image in one step. */
  private joinApart(row: Row, rest: InputData, image: boolean): InputData {
    row.fed = 0;
    row.chunk = image ? Infinity : this.deps.prefillChunk;
    row.batch ??= this.deps.runner.join({ id: row.id, owner: row.owner, promptTokens: rest[1], maxTokens: Number.MAX_SAFE_INTEGER, prefillApart: true, prefillChunkTokens: row.chunk });
    return rest;
  }

  /**
   * web-llm's prefill forward of a text prompt (handed its last token): the
   * row first forks what a row of its key still prefilling will share, then
   * joins the steps and waits while the steps' forwards feed its prompt, a
   * chunk per step; web-llm gets the logits the step of its last chunk left.
   * An abort while waiting ends the prefill with an AbortError.
   */
  async feedPromptInSteps(row: Row, shared: SharedPrompt, signal: AbortSignal, inputDataLen: number): Promise<unknown> {
    if (!row.batch) {
      if (shared.donor) await this.forkOnceDonorPrefilled(row, shared, signal);
      row.batch = this.deps.runner.join({ id: row.id, owner: row.owner, promptTokens: shared.tokens.length - shared.fed, maxTokens: Number.MAX_SAFE_INTEGER });
    }
    while (shared.fed < shared.tokens.length) {
      // An AbortError whatever the signal's reason: the generation maps it to the request's abort.
      if (!(await row.batch.pass(signal))) throw new DOMException("The request was aborted while its prompt was prefilled.", "AbortError");
    }
    const tvm = this.deps.tvm;
    return this.deps.holdTurn(row, async () => {
      const logits = row.logits;
      row.logits = null;
      if (!logits) throw new Error("A row's prompt was fed without its logits.");
      row.view.filledKVCacheLength += inputDataLen;
      return tvm.attachToCurrentScope ? tvm.attachToCurrentScope(logits) : logits;
    });
  }

  /** Waits for the donor's prompt to be in its sequence, then forks the prefix they share; a donor that left first is not waited for again. */
  private async forkOnceDonorPrefilled(row: Row, shared: SharedPrompt, signal: AbortSignal): Promise<void> {
    const { row: donor, shared: tokens } = shared.donor as { row: Row; shared: number };
    shared.donor = null;
    await untilAborted(donor.prefilled, signal);
    if (signal.aborted) throw new DOMException("The request was aborted while its prompt was prefilled.", "AbortError");
    if (donor.left || donor.prompt === null) return;
    this.deps.sequences.forkFromRow(row.seq, donor.seq, tokens);
    shared.fed = tokens;
    row.reused = tokens;
  }

  /**
   * One of web-llm's prefill chunks of a prompt web-llm feeds itself (an
   * image), in the steps' chunks: at each step boundary (every `row.chunk`
   * tokens of the prompt) the row waits for its step, then forwards what that
   * step holds, exclusively. web-llm gets the last piece's logits; an abort
   * while waiting ends the prefill with an AbortError.
   */
  async prefillChunkForward(row: Row, signal: AbortSignal, inputData: unknown[], inputDataLen: number): Promise<unknown> {
    // web-llm has detached the previous chunk's logits: the turn held since it was handed over goes.
    this.deps.releaseTurn(row);
    const view = row.view;
    const tvm = this.deps.tvm;
    const forward = this.deps.ownForward;
    const pieces = splitAtSteps(inputData, inputDataLen, row.fed, row.chunk);
    let logits: unknown = null;
    for (const [i, piece] of pieces.entries()) {
      if (row.fed % row.chunk === 0) {
        if (!row.batch) throw new Error("A row prefilled before its prompt was tokenized.");
        if (!(await row.batch.pass(signal))) throw new DOMException("The request was aborted while its prompt was prefilled.", "AbortError");
      }
      const last = i === pieces.length - 1;
      const run = async () => {
        // web-llm's forward attaches its logits to the current scope (the prefill's); a piece before the
        // last is not web-llm's: detached and freed.
        const result = await (forward.call(view, piece.data, piece.length) as Promise<unknown>);
        if (!last) (tvm.detachFromCurrentScope(result) as { dispose?: () => void }).dispose?.();
        return result;
      };
      // The chunk's last piece: its logits go to web-llm, which detaches them (and after the prompt's last,
      // closes its prefill scope and samples) in a turn held until it calls again or samples.
      const out = await (last ? this.deps.holdTurn(row, run) : this.deps.exclusive(run));
      row.fed += piece.length;
      if (last) logits = out;
    }
    return logits;
  }
}
