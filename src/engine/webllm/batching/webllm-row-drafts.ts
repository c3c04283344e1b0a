/**
 * Speculative drafts in the rows of continuous batching (issue 38: "a
 * decoding sequence contributes its next token, or its next token plus a
 * speculative draft to verify"; issue 34: "the same model decides the draft
 * lengths of every row in a step").
 *
 * A decoding row with speculation on proposes a draft after its last token
 * (draft-session.ts: the prediction, the replies the prompt cache holds
 * after the same prompt under the row's key, the prompt and the output so
 * far, what the row's grammar forces next), from the sources a request run
 * alone drafts from. The step's forward feeds the row's token
 * and its draft beside the other rows' tokens and prompt chunks, with logits
 * at each of the row's positions (`batch_prefill`, webllm-step-forward.ts).
 * web-llm's decode step then samples from position 0; each following decode
 * step of the row whose token is the draft's next one samples from the next
 * position with no step of its own (the sequence already holds the token),
 * and counts as a generated token in the scheduler. A sampled token that
 * differs ends the draft: its rejected rest is popped from THAT row's
 * sequence (`kv_state_popn`, exact after the 3-argument forward), as it is
 * when the row stops or leaves, so the sequence, and what the prompt cache
 * keeps of it, holds exactly what was accepted. Acceptance is web-llm's
 * sampler on the row's own logits and random stream, once per token as
 * without drafts: greedy, token for token the reply without them; sampled,
 * exact speculative sampling, and a seed gives the same reply.
 *
 * Draft length: the proposer's cost-aware sizing (draft-sizing.ts), with the
 * pass being the whole step: what the step costs with this row feeding its
 * token plus k drafted ones beside the other rows in flight, by the measured
 * cost the scheduler chooses forwards by, against the tokens the step gives
 * every row. A draft may be 0.
 */
import { chooseForward, type StepCostModel } from "../../batching/cost-model.js";
import { DraftSession } from "../../speculative/draft-session.js";
import type { SpeculationUsage } from "../../speculative/counters.js";
import { activeMatcher, forcedDraft, type GrammarHost } from "../../speculative/jump-forward.js";
import type { Row, RowDraftSession, VerifyLogits } from "./webllm-row.js";
import type { RowSequences } from "./webllm-row-sequences.js";
import type { RowsPipeline } from "./webllm-row-view.js";
import type { StepArray } from "./webllm-step-forward.js";

/** A row's speculation, as the request asks it. */
export interface RowSpeculation {
  /** Drafts for this row; false: one token per step (speculation off for the request or the client). */
  enabled: boolean;
  /** The expected output (`prediction`): the first draft source. */
  prediction?: string;
}

/** A verify's logits at each of the row's positions; a position handed to web-llm is taken out (null). */

export interface RowDraftDeps {
  pipe: RowsPipeline & GrammarHost & { tokenizer?: { encode(text: string): ArrayLike<number> }; prefillChunkSize?: number };
  rows: ReadonlyMap<string, Row>;
  sequences: RowSequences;
  /** What a step's forward costs (the scheduler's model: measured on the device, or given). */
  cost: StepCostModel;
  /** Tokens one step's forward may hold, and rows at most: a draft leaves room for every row's. */
  stepTokens: number;
  maxRows: number;
  /** Prompt tokens a row prefills per step at most. */
  prefillChunk: number;
  /** Whether `cost` is in ms (measured on the device): served steps are then timed and weighed in; else they count as free. */
  costInMs: boolean;
}

/** The pass a row's draft is weighed by is the step: this row feeding `tokens` beside the others' `stepTokens`, run as the scheduler would run it. */
export function rowPassCost(stepTokens: readonly number[], tokens: number, cost: StepCostModel): number {
  return chooseForward([...stepTokens, tokens], cost).cost;
}

/** The longest draft a row proposes (the proposer's own bound is 16). */
const MAX_ROW_DRAFT = 16;

export class RowDrafts {
  /** What a decode step served from a verify took (ms, running mean; null before one). */
  private servedMs: number | null = null;

  constructor(private readonly deps: RowDraftDeps) {}

  /** A decode step served from a verify's logits took `ms`, sampling included. */
  servedTook(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    this.servedMs = this.servedMs === null ? ms : this.servedMs + 0.2 * (ms - this.servedMs);
  }

  /** The row's draft session (null: speculation off for it). */
  open(row: Row, request: RowSpeculation | undefined): void {
    if (!request?.enabled) return;
    const tokenizer = this.deps.pipe.tokenizer;
    const prediction = request.prediction && tokenizer ? Array.from(tokenizer.encode(request.prediction)) : undefined;
    const step = { tokens: [] as number[], others: 0 };
    row.step = step;
    row.drafts = new DraftSession<VerifyLogits>(() => ({ prompt: row.prompt ?? row.promptSeen ?? [], cachedReplies: row.cachedReplies }), prediction, {
      cost: { single: (tokens) => rowPassCost(step.tokens, tokens, this.deps.cost) },
      served: () => (this.deps.costInMs ? (this.servedMs ?? 0) : 0),
      others: () => step.others,
    });
  }

  /**
   * The row's next decode step (in a turn of the pipeline's work: a rejected
   * rest is popped here): the logits its verified draft holds for `token`
   * (no step), else the draft to verify in its next step (maybe none).
   */
  next(row: Row, token: number, genConfig: unknown): { served: StepArray } | { draft: number[] } {
    const drafts = row.drafts;
    if (!drafts) return { draft: [] };
    const served = drafts.serve(token, (logits, at) => {
      const taken = logits[at];
      logits[at] = null;
      return taken;
    });
    if (served) return { served };
    return { draft: this.propose(row, drafts, genConfig) };
  }

  /**
   * The step's forward ran the row's token and `draft` (its logits at each
   * position): the logits of its token go to web-llm's decode step, the rest
   * wait for the steps that feed the draft's tokens.
   */
  ran(row: Row, draft: readonly number[], logits: StepArray[]): StepArray {
    const drafts = row.drafts;
    if (!drafts || draft.length === 0) {
      drafts?.plainPass();
      for (const extra of logits.slice(1)) extra.dispose();
      return logits[0];
    }
    const held: VerifyLogits = logits.slice();
    const first = held[0] as StepArray;
    held[0] = null;
    drafts.verified(draft.slice(), held, (rest) => {
      for (const unused of held) unused?.dispose();
      held.fill(null);
      if (rest > 0) this.deps.sequences.popn(row.seq, rest);
    });
    return first;
  }

  /** The row is leaving (before its sequence is kept or released): its pending draft leaves the sequence; its counts. */
  end(row: Row): SpeculationUsage | null {
    const drafts = row.drafts;
    if (!drafts) return null;
    row.drafts = null;
    return drafts.end(row.view.outputIds.length > 0 ? row.view.outputIds : null);
  }

  /** A draft after the row's last token, within `max_tokens`, the context window and the step's room. */
  private propose(row: Row, drafts: RowDraftSession, genConfig: unknown): number[] {
    const view = row.view;
    const maxTokens = (genConfig as { max_tokens?: number | null } | undefined)?.max_tokens;
    const produced = view.outputIds.length;
    // This step yields token produced + 1; each accepted draft token one more.
    const limit = Math.min(
      MAX_ROW_DRAFT,
      typeof maxTokens === "number" && maxTokens > 0 ? maxTokens - produced - 1 : Infinity,
      (view.contextWindowSize ?? Infinity) - view.filledKVCacheLength - 2,
      Math.floor(this.deps.stepTokens / this.deps.maxRows) - 1,
    );
    if (!(limit >= 1)) {
      drafts.observe(view.outputIds);
      return [];
    }
    this.snapshotStep(row);
    return drafts.propose(view.outputIds, limit, this.forced(view, genConfig));
  }

  /** What the other rows in flight feed in a step now, and how many of them get a token from it. */
  private snapshotStep(row: Row): void {
    const step = row.step as { tokens: number[]; others: number };
    step.tokens = [];
    step.others = 0;
    for (const other of this.deps.rows.values()) {
      if (other === row || other.left) continue;
      const shared = other.shared;
      if (shared && shared.fed < shared.tokens.length) step.tokens.push(Math.min(this.deps.prefillChunk, shared.tokens.length - shared.fed));
      else if (other.prompt !== null) {
        step.tokens.push(1 + other.draft.length);
        step.others++;
      }
    }
  }

  /** What the row's grammar forces next, as tokens (jump-forward.ts): its matcher has accepted every output token. */
  private forced(view: RowsPipeline, genConfig: unknown): number[] {
    const matcher = activeMatcher(view as RowsPipeline & GrammarHost, genConfig);
    const tokenizer = this.deps.pipe.tokenizer;
    if (!matcher || !tokenizer) return [];
    return forcedDraft(matcher.findJumpForwardString(), (text) => tokenizer.encode(text));
  }
}
