/**
 * Prompts prefilled side by side (issue 38): a row's text prompt is fed by
 * the steps' forwards, a chunk per step beside the other rows' decode tokens
 * and prompt chunks (webllm-step-forward.ts: one `batch_prefill` over mixed
 * rows), instead of by web-llm's own prefill step, which would feed one
 * prompt after another. web-llm's prefill step is handed the prompt's last
 * token only, and counts the rest as already in the sequence, like a forked
 * prefix; the logits the step of the prompt's last chunk leaves are what its
 * forward returns, and web-llm samples the first token from them. This
 * module holds what the rows (webllm-rows.ts) need for it: what a row feeds
 * in a step, which row still prefilling a row should wait for and fork
 * (the n choices of one request), and web-llm's prefill count.
 */
import { longestRowPrefix } from "../../batching/prefill-pieces.js";
import type { StepPlan } from "../../batching/step-scheduler.js";
import type { StepForwardRow } from "./webllm-step-forward.js";

/** A row's text prompt as the steps feed it. */
export interface SharedPrompt {
  /** The whole prompt, as web-llm tokenized it. */
  readonly tokens: readonly number[];
  /** How many of them the row's sequence holds: a forked prefix, then what the steps fed. */
  fed: number;
  /** A row of the same key still prefilling a prompt that shares `shared` tokens: wait for it, then fork them. */
  donor: { row: PrefillingRow; shared: number } | null;
}

/** What the step's inputs and the donor choice read of a row. */
export interface PrefillingRow {
  seq: number;
  key: string | undefined;
  left: boolean;
  /** The token a decoding row feeds in the next step (set while it waits for it). */
  input: number | undefined;
  /** The speculative draft it feeds after that token, verified in the same step. */
  draft: readonly number[];
  shared: SharedPrompt | null;
  /** The prompt its sequence holds once its prefill is done (null before). */
  prompt: readonly number[] | null;
  /** Its prompt's tokens once web-llm tokenized it (null before). */
  promptSeen: readonly number[] | null;
}

export interface StepInput<R> extends StepForwardRow {
  row: R;
  phase: "prefill" | "decode";
  /** Whether the step gives the row a token (a decode, its prompt's last chunk): its logits are kept. */
  samples: boolean;
  /** A decoding row's token and draft: logits at each of them (webllm-row-drafts.ts). */
  verify?: boolean;
}

/**
 * What each row feeds in the step `plan`: a decoding row its token, a row
 * in its prompt the plan's number of tokens from where its sequence ends.
 * Rows whose prompt web-llm feeds itself (`apart`) and rows that left are not in it.
 */
export function stepInputs<R extends PrefillingRow>(plan: StepPlan, rows: ReadonlyMap<string, R>): StepInput<R>[] {
  const inputs: StepInput<R>[] = [];
  for (const stepRow of plan.rows) {
    const row = rows.get(stepRow.id);
    if (stepRow.apart || !row || row.left) continue;
    if (stepRow.phase === "decode") {
      if (row.input !== undefined) inputs.push({ seq: row.seq, tokens: [row.input, ...row.draft], row, phase: "decode", samples: true, ...(row.draft.length > 0 ? { verify: true } : {}) });
      continue;
    }
    const shared = row.shared;
    if (!shared) continue;
    const tokens = shared.tokens.slice(shared.fed, shared.fed + stepRow.tokens);
    if (tokens.length !== stepRow.tokens) throw new Error(`Row ${stepRow.id}: the step feeds ${stepRow.tokens} prompt tokens, ${tokens.length} are left.`);
    inputs.push({ seq: row.seq, tokens, row, phase: "prefill", samples: stepRow.samples });
  }
  return inputs;
}

/**
 * A row of `row`'s key whose prompt is tokenized but not yet in its
 * sequence, sharing more of `tokens` than the `reused` prefix the row
 * already has, and at least half of them: the row waits for its prefill and
 * forks the shared prefix rather than feeding it beside it (the n choices of
 * one request prefill their prompt once). Null when none is worth waiting for.
 */
export function prefillingDonor<R extends PrefillingRow>(rows: Iterable<R>, row: R, tokens: readonly number[], reused: number, bound: number): { row: R; shared: number } | null {
  const prefilling = [...rows].filter((other) => other !== row && other.prompt === null && other.promptSeen !== null).map((other) => ({ key: other.key, left: other.left, prompt: other.promptSeen, row: other }));
  const { donor, shared } = longestRowPrefix(prefilling, { key: row.key, left: false, prompt: null, row }, tokens, bound);
  return donor && shared > reused && shared * 2 >= tokens.length ? { row: donor.row, shared } : null;
}

/** Resolves when `done` does, or at once when `signal` aborts. */
export function untilAborted(done: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const onAbort = () => resolve();
    signal.addEventListener("abort", onAbort, { once: true });
    void done.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/** Adds `tokens` to what web-llm's prefill step counted on `view` (its usage's prompt_tokens, its prefill speed). */
export function addPrefillCount(view: object, tokens: number): void {
  const counts = view as { curRoundPrefillTotalTokens?: number; prefillTotalTokens?: number };
  if (typeof counts.curRoundPrefillTotalTokens === "number") counts.curRoundPrefillTotalTokens += tokens;
  if (typeof counts.prefillTotalTokens === "number") counts.prefillTotalTokens += tokens;
}
