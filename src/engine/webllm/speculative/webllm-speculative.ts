/**
 * Speculative decoding on web-llm's loaded pipeline: drafts (proposer.ts)
 * verified in one forward pass (webllm-verify.ts), rejected tokens popped
 * from the request's KV sequence. Output is what web-llm alone would give.
 *
 * web-llm decodes one token per `decodeStep`: forward the last output token
 * (`embedAndForward`), sample from its logits (`sampleTokenFromLogits`:
 * grammar bitmask, logit processor, `logit_bias`, penalties from the tokens
 * so far, logprobs, its RNG), then `processNextToken` (stop tokens, stop
 * strings, `max_tokens`, the context window). The binding keeps that loop —
 * one token per step, every per-token rule web-llm's own — and replaces only
 * the forward inside a decode step:
 * - no pending draft: the proposer drafts d1..dk after the last token x;
 *   [x, d1..dk] go through ONE pass; the step gets row 0 (the logits after
 *   x, what a decode of x gives) and rows 1..k wait.
 * - the next step feeds the token web-llm sampled. If it is d1, the
 *   sequence already holds it: the step gets row 1 with no forward (an
 *   accepted draft token), and so on along the draft.
 * - a sampled token that differs from the draft: the draft tokens after it
 *   are popped (`kv_state_popn`, exact after a 3-argument forward) and the
 *   step runs as a fresh one (a new draft, or web-llm's own decode).
 * - the reply stops (stop token or string, `max_tokens`, an abort): what is
 *   still pending is popped at once, so the sequence holds exactly what
 *   web-llm would have fed — the prompt cache's record stays exact.
 * Acceptance is therefore web-llm's sampler itself: a draft token is kept
 * when the token sampled from its position's final distribution equals it.
 * Greedy, that is the longest agreeing prefix; sampling, it is exact
 * speculative sampling for a deterministic draft (kept with the probability
 * the distribution gives it; otherwise the sample is a draw from the rest),
 * with one RNG draw per token as without speculation, so a seed reproduces.
 * A token a grammar forbids is masked at its row, never sampled: the
 * matcher only ever sees accepted tokens and needs no rollback.
 *
 * `filledKVCacheLength` counts what was accepted (the sequence physically
 * holds the pending draft beyond it), so web-llm's checks and the
 * prompt-cache binding — which hooks `embedAndForward` on top of this one and
 * records one token per decode step — see the usual one token per step.
 *
 * Drafts, first source to last: what the request's grammar forces next
 * (jump-forward.ts: xgrammar's findJumpForwardString, counted as
 * `jumpForwardTokens`), then the proposer's. Each is cut to the length the
 * costs measured here make worth it (draft-sizing.ts): every decode step is
 * timed, by what its forward fed.
 *
 * Decodes as today (only counted): speculation off for the request or the
 * client, sliding-window models, models with recurrent state, 0.2.86
 * manifest models (their decode bypasses `embedAndForward`), and libraries
 * without `batch_prefill` or `kv_state_popn`.
 */
import { DraftSession } from "../../speculative/draft-session.js";
import type { SpeculationUsage } from "../../speculative/counters.js";
import { verifierOf, type LogitRows, type Verifier, type VerifyHost } from "./webllm-verify.js";
import { kvOpsOf, type KvOps } from "../prompt-cache/webllm-kv-ops.js";
import { ForwardCostEstimate } from "../../speculative/draft-sizing.js";
import { activeMatcher, forcedDraft, type GrammarHost } from "../../speculative/jump-forward.js";

type InputChunk = number[] | object;

/** The pipeline members the binding hooks and reads (web-llm's `LLMChatPipeline`, 0.2.79 – 0.2.86). */
export interface SpeculativePipeline extends VerifyHost, GrammarHost {
  outputIds: number[];
  stopTriggered: boolean;
  contextWindowSize?: number;
  rnnState?: unknown;
  tokenizer?: { encode(text: string): ArrayLike<number> };
  decodeStep(genConfig?: unknown): Promise<void>;
  embedAndForward(inputData: InputChunk[], inputDataLen: number): Promise<unknown>;
  processNextToken(...args: unknown[]): void;
  triggerStop(): void;
  resetKVCache(): void;
}

/** What the binding needs from the request (and from the prompt cache, when it manages the sequence). */
export interface SpeculativeRequest {
  /** Speculation for this request; false: decode as web-llm does (passes still counted). */
  enabled: boolean;
  /** The expected output (`prediction`): the first draft source. */
  prediction?: string;
}

/** Where the request runs and what the prompt cache knows of it (the prompt cache binding answers; defaults: sequence 0, unknown prompt). */
export interface SequenceInfo {
  /** The KV sequence the request's forwards go to. */
  sequence(): number;
  /** The request's full prompt as token ids, or null when only the prefilled part is known. */
  prompt(): readonly number[] | null;
  /** Replies other cached sequences hold after this same prompt (a regenerate finds the previous one). */
  cachedReplies(): ReadonlyArray<readonly number[]>;
}

/** Why a pipeline cannot speculate (null: it can). */
export function unsupportedReason(pipeline: SpeculativePipeline): string | null {
  if ((pipeline.slidingWindowSize ?? -1) !== -1) return "sliding-window model";
  if (pipeline.rnnState !== undefined) return "model with recurrent state";
  if (pipeline.artifact !== undefined) return "manifest model";
  if (typeof pipeline.decodeStep !== "function" || typeof pipeline.processNextToken !== "function" || !Array.isArray(pipeline.outputIds)) return "pipeline without web-llm's decode step";
  return null;
}

export interface SpeculativeOptions {
  /** The clock decode steps are timed with (ms). Default `performance.now`. */
  now?: () => number;
}

export class WebLlmSpeculative {
  /**
   * What a forward costs on this device for the loaded model, measured on
   * every decode step (a decode, a verify of k drafts, a step served from a
   * verified row): the proposer sizes drafts by it (draft-sizing.ts).
   */
  readonly costs = new ForwardCostEstimate();
  private readonly now: () => number;
  /** Tokens the current decode step's forward fed (0: served from a verified draft; null: not through here). */
  private stepTokens: number | null = null;
  /** Why this pipeline decodes as web-llm does, else null. */
  readonly unsupported: string | null;
  private readonly verifier: Verifier | null;
  private readonly ops: KvOps | null;
  private info: SequenceInfo = { sequence: () => 0, prompt: () => null, cachedReplies: () => [] };
  private request: SpeculativeRequest | null = null;
  /** The request's drafts: sources, the verified draft waiting for its tokens, counts (draft-session.ts). */
  private drafts: DraftSession<LogitRows> | null = null;
  /** Tokens this request prefilled (the prompt when the prompt cache does not say). */
  private prefilled: number[] = [];
  /** Inside web-llm's decodeStep, with its generation config. */
  private decoding: { genConfig: unknown } | null = null;
  /** web-llm decode steps of this request. */
  private steps = 0;
  /** This request sampled a token (`outputIds` is its output). */
  private sampled = false;
  /** The KV cache was just emptied: a pending draft has nothing left to pop. */
  private emptied = false;

  constructor(
    private readonly pipeline: SpeculativePipeline,
    enabled = true,
    options: SpeculativeOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    let reason = enabled ? unsupportedReason(pipeline) : "speculative decoding off";
    const verifier = reason ? null : verifierOf(pipeline);
    if (!reason && !verifier) reason = "model library without batch_prefill";
    const ops = reason ? null : kvOpsOf(pipeline);
    if (!reason && !ops) reason = "model library without KV sequence functions";
    this.unsupported = reason;
    this.verifier = reason ? null : verifier;
    this.ops = reason ? null : ops;
    this.hook();
  }

  /** The prompt cache's view of the running request (set once both bindings exist). */
  setSequenceInfo(info: SequenceInfo): void {
    this.info = info;
  }

  /** The next generation on this pipeline belongs to `request`. */
  begin(request: SpeculativeRequest): void {
    this.settle();
    this.request = request;
    const prediction = request.prediction && this.pipeline.tokenizer ? Array.from(this.pipeline.tokenizer.encode(request.prediction)) : undefined;
    this.drafts = new DraftSession(
      () => ({ prompt: this.info.prompt() ?? this.prefilled, cachedReplies: this.info.cachedReplies() }),
      prediction,
      { cost: this.costs, served: () => this.costs.served() },
    );
    this.steps = 0;
    this.sampled = false;
    this.prefilled = [];
  }

  /**
   * The request ended (any outcome): pending draft tokens leave the
   * sequence. Its counts, or null when some decode step's forward did not
   * come through here (0.2.86 manifest models decode outside
   * `embedAndForward`): every step is a pass or an accepted draft token.
   */
  end(): SpeculationUsage | null {
    const drafts = this.drafts;
    if (!drafts) return null;
    const usage = drafts.end(this.sampled ? this.pipeline.outputIds : null);
    this.request = null;
    this.drafts = null;
    return this.steps === usage.decodePasses + usage.acceptedDraftTokens ? usage : null;
  }

  private hook(): void {
    const pipe = this.pipeline;
    const decodeStep = pipe.decodeStep;
    const embedAndForward = pipe.embedAndForward;
    const processNextToken = pipe.processNextToken;
    const triggerStop = pipe.triggerStop;
    const resetKVCache = pipe.resetKVCache;
    pipe.decodeStep = async (genConfig?: unknown) => {
      this.decoding = { genConfig };
      this.stepTokens = null;
      if (this.request) this.steps++;
      const started = this.now();
      try {
        const result = await decodeStep.call(pipe, genConfig);
        this.timeStep(this.now() - started);
        return result;
      } finally {
        this.decoding = null;
      }
    };
    pipe.embedAndForward = async (inputData: InputChunk[], inputDataLen: number) => {
      const decoding = this.decoding;
      if (!decoding || !this.request || inputDataLen !== 1 || inputData.length !== 1 || !Array.isArray(inputData[0])) {
        if (this.request && !decoding) for (const chunk of inputData) if (Array.isArray(chunk)) for (const id of chunk) this.prefilled.push(id);
        return embedAndForward.call(pipe, inputData, inputDataLen);
      }
      this.decoding = null; // one forward per decode step
      const token = (inputData[0] as number[])[0];
      const served = this.fromPending(token);
      if (served) {
        this.stepTokens = 0;
        return served;
      }
      const draft = this.propose(decoding.genConfig);
      this.stepTokens = draft.length + 1;
      if (draft.length === 0) {
        const logits = await embedAndForward.call(pipe, inputData, inputDataLen);
        this.drafts?.plainPass();
        return logits;
      }
      return this.verify(token, draft);
    };
    pipe.processNextToken = (...args: unknown[]) => {
      processNextToken.apply(pipe, args);
      if (this.request) this.sampled = true;
      if (pipe.stopTriggered) this.settle();
    };
    pipe.triggerStop = () => {
      triggerStop.call(pipe);
      this.settle();
    };
    pipe.resetKVCache = () => {
      this.emptied = true; // the cache is empty: nothing to pop
      try {
        this.drafts?.settle();
      } finally {
        this.emptied = false;
      }
      resetKVCache.call(pipe);
    };
  }

  /**
   * A decode step took `ms`, its sampling and bookkeeping included (web-llm's
   * decode reads the logits back while sampling, so timing the forward alone
   * would miss the device's work): what its forward fed says what it measured.
   */
  private timeStep(ms: number): void {
    const tokens = this.stepTokens;
    this.stepTokens = null;
    if (tokens === null) return;
    if (tokens === 0) this.costs.observeServed(ms);
    else this.costs.observe(tokens, ms);
  }

  /** The rows of a verified draft for the token being fed, or null (after rolling back a rejected rest). */
  private fromPending(token: number): unknown {
    const served = this.drafts?.serve(token, (rows, at) => rows.row(at));
    if (!served) return null;
    this.pipeline.filledKVCacheLength += 1;
    return served;
  }

  /** A draft after the last output token, within `max_tokens`, the context window and a prefill chunk. */
  private propose(genConfig: unknown): number[] {
    if (!this.request?.enabled || !this.verifier) return [];
    const pipe = this.pipeline;
    const maxTokens = (genConfig as { max_tokens?: number | null } | undefined)?.max_tokens;
    const produced = pipe.outputIds.length;
    // This step yields token produced+1; each accepted draft token one more.
    const limit = Math.min(
      typeof maxTokens === "number" && maxTokens > 0 ? maxTokens - produced - 1 : Infinity,
      (pipe.contextWindowSize ?? Infinity) - pipe.filledKVCacheLength - 2,
      (pipe.prefillChunkSize ?? Infinity) - 1,
    );
    const drafts = this.drafts;
    if (!(limit >= 1) || !drafts) return [];
    // A decode's cost is what every draft is weighed against: measured first, on a plain step.
    if (!this.costs.has(1)) {
      drafts.observe(pipe.outputIds);
      return [];
    }
    return drafts.propose(pipe.outputIds, limit, this.forced(genConfig));
  }

  /**
   * What the request's grammar forces next, as tokens (jump-forward.ts): the
   * matcher has accepted every output token (web-llm feeds it each sampled
   * one; nothing is pending when a draft is proposed).
   */
  private forced(genConfig: unknown): number[] {
    const matcher = activeMatcher(this.pipeline, genConfig);
    const tokenizer = this.pipeline.tokenizer;
    if (!matcher || !tokenizer) return [];
    return forcedDraft(matcher.findJumpForwardString(), (text) => tokenizer.encode(text));
  }

  /** One pass over [token, ...draft]; the step gets row 0, the rest wait in the request's draft session. */
  private async verify(token: number, draft: number[]): Promise<unknown> {
    const pipe = this.pipeline;
    const rows = await (this.verifier as Verifier).forward([token, ...draft]);
    pipe.filledKVCacheLength += 1;
    const seq = this.info.sequence();
    const ops = this.ops as KvOps;
    (this.drafts as DraftSession<LogitRows>).verified(draft, rows, (rest) => {
      if (rest > 0 && !this.emptied) ops.popn(seq, rest);
    });
    return rows.row(0);
  }

  /** Closes the pending draft: its rejected or unused tokens leave the sequence (draft-session.ts). */
  private settle(): void {
    this.drafts?.settle();
  }
}
