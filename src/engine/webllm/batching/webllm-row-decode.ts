/**
 * web-llm's decode step on a row's view (webllm-rows.ts): the row parks its
 * last token (and a speculative draft after it, webllm-row-drafts.ts) until
 * the step runner has every row's input, the step's forward runs once for
 * all rows, and web-llm's own decode step then samples from the row's logits
 * (the view's `embedAndForward` hands them over). A token the row's verified
 * draft already holds needs no step: web-llm samples it from the verify's
 * logits at once, and the scheduler counts it as a generated token.
 */
import type { BatchRow } from "../../batching/step-runner.js";
import type { Row } from "./webllm-row.js";
import type { RowDrafts } from "./webllm-row-drafts.js";
import type { Fn, RowsPipeline } from "./webllm-row-view.js";

export interface RowDecodeDeps {
  /** The rows' drafts (null: the library cannot verify drafts beside other rows). */
  drafts: RowDrafts | null;
  /** Runs work in a turn of the pipeline's work. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** The clock steps are timed with (ms). */
  clock(): number;
  /** web-llm's own methods, as before any binding hooked them. */
  pristine: { decodeStep: Fn; processNextToken: Fn };
}

/** Gives `view` the row's decode step, and its stop rule's hand-back of a pending draft. */
export function hookRowDecode(view: RowsPipeline, row: Row, signal: AbortSignal, deps: RowDecodeDeps): void {
  const { drafts, exclusive, clock, pristine } = deps;
  view.decodeStep = async (genConfig?: unknown) => {
    if (view.stopTriggered) throw new Error("Cannot run decode when stopped");
    const batch = row.batch as BatchRow;
    // An abort stops the row at its next step, one its draft would serve too; the draft leaves its sequence.
    if (signal.aborted) {
      if (row.drafts?.hasPending) await exclusive(async () => row.drafts?.settle());
      return view.triggerStop();
    }
    const stepStarted = clock();
    const token = view.outputIds[view.outputIds.length - 1];
    // A token its verified draft holds is sampled from the verify's logits, with no step; else a draft to verify.
    const next = drafts ? await exclusive(async () => drafts.next(row, token, genConfig)) : { draft: [] };
    const started = clock();
    if ("served" in next) row.logits = next.served;
    else {
      row.input = token;
      row.draft = next.draft;
      if (!(await batch.pass(signal, 1 + next.draft.length))) {
        row.input = undefined;
        row.draft = [];
        view.triggerStop();
        return;
      }
    }
    // web-llm's decode step times itself from here: it sees only its sampling (the view hands it logits the step
    // already computed), so the step (its forward, and the wait for it beside other rows) goes on its decode clock
    // too, or its usage's decode_tokens_per_s would count sampling alone (174 tok/s on SwiftShader, a decode 11 s).
    const forwardSeconds = (clock() - stepStarted) / 1e3;
    row.decoding = true;
    try {
      await exclusive(() => row.random.with(() => pristine.decodeStep.call(view, genConfig) as Promise<void>));
    } finally {
      row.decoding = false;
    }
    if (view.curRoundDecodingTotalTime !== undefined) view.curRoundDecodingTotalTime += forwardSeconds;
    if (view.decodingTotalTime !== undefined) view.decodingTotalTime += forwardSeconds;
    if ("served" in next) {
      batch.served();
      drafts?.servedTook(clock() - started);
    }
  };
  // A reply that stops (a stop token or string, max_tokens) leaves its pending draft at once: the sequence holds what was fed.
  view.processNextToken = (...args: unknown[]) => {
    pristine.processNextToken.apply(view, args);
    if (view.stopTriggered) row.drafts?.settle();
  };
}
