/**
 * A row of continuous batching on web-llm's pipeline (webllm-rows.ts): the
 * state one generation keeps beside its view of the pipeline, from the
 * moment it opens to the moment it leaves.
 */
import type { BatchRow } from "../../batching/step-runner.js";
import type { RowRandom, RowsPipeline } from "./webllm-row-view.js";
import type { SharedPrompt } from "./webllm-shared-prefill.js";
import type { StepArray } from "./webllm-step-forward.js";
import type { DraftSession } from "../../speculative/draft-session.js";
import type { SpeculationUsage } from "../../speculative/counters.js";

/** A verify's logits, one per draft position (null once handed to web-llm's sampler). */
export type VerifyLogits = Array<StepArray | null>;
/** A row's drafts (webllm-row-drafts.ts runs them). */
export type RowDraftSession = DraftSession<VerifyLogits>;

export interface Row {
  id: string;
  owner: string;
  seq: number;
  view: RowsPipeline;
  /** The row in the steps; null until its prompt's length is known (web-llm tokenizes inside its prefill). */
  batch: BatchRow | null;
  /** Its prefill chunk (Infinity for a prompt with an image: web-llm's chunks are then fed in one step). */
  chunk: number;
  /** Prompt tokens fed so far in its prefill (web-llm's own: a prompt with an image). */
  fed: number;
  /** Inside web-llm's decode step (its forward is the step's). */
  decoding: boolean;
  /** The token the row feeds in the next step (set while it waits for it). */
  input: number | undefined;
  /** The speculative draft it feeds after that token, to verify in the same step (empty: none). */
  draft: number[];
  /** Its drafts (webllm-row-drafts.ts); null: speculation off for it. */
  drafts: RowDraftSession | null;
  /** Replies the prompt cache held after its prompt, under its key (a regenerate's draft source; read before it forked its prefix). */
  cachedReplies: ReadonlyArray<readonly number[]>;
  /** What the other rows fed when it last sized a draft (webllm-row-drafts.ts). */
  step: { tokens: number[]; others: number } | null;
  /** Its drafts' counts, once it left (null: no speculation). */
  usage: SpeculationUsage | null;
  /** Its logits from the step forward, until web-llm's decode step takes them. */
  logits: StepArray | null;
  /** The row's own random stream (a `seed`); without one it draws from the runtime's. */
  random: RowRandom;
  left: boolean;
  key: string | undefined;
  /** Prompt tokens forked from a cached prefix or another row. */
  reused: number;
  /** The prompt the row's sequence holds once its prefill is done (null before): later rows may fork it. */
  prompt: readonly number[] | null;
  /** The prompt's tokens as getInputData gave them (up to its first image), until the prefill is done. */
  promptSeen: readonly number[] | null;
  /** A text prompt the steps' forwards feed (null: web-llm's own prefill feeds it, e.g. a prompt with an image). */
  shared: SharedPrompt | null;
  /** Its prompt is in its sequence, or it left (rows waiting to fork it look then). */
  prefilled: Promise<void>;
  markPrefilled: () => void;
  /** Releases the pipeline's turn the row holds from its prompt's last logits until its first token is sampled. */
  held: (() => void) | null;
}

/** A row as it opens on sequence `seq`: nothing fed, nothing sampled (its view is set right after). */
export function newRow(id: string, owner: string, key: string | undefined, seq: number, chunk: number, random: RowRandom): Row {
  let markPrefilled = () => {};
  const prefilled = new Promise<void>((resolve) => (markPrefilled = resolve));
  return { id, owner, seq, view: null as unknown as RowsPipeline, batch: null, chunk, fed: 0, decoding: false, input: undefined, draft: [], drafts: null, cachedReplies: [], step: null, usage: null, logits: null, random, left: false, key, reused: 0, prompt: null, promptSeen: null, shared: null, prefilled, markPrefilled, held: null };
}
