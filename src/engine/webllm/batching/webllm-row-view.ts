/**
 * A row's view of web-llm's loaded pipeline (webllm-rows.ts): what the view
 * reads of the pipeline, which of its methods a view takes as they were before
 * other bindings hooked them, the request state a view keeps as its own, and
 * what it hands back when the row leaves.
 */
import type { KvCacheHost } from "../prompt-cache/webllm-kv-ops.js";
import type { StepPipeline } from "./webllm-step-forward.js";

export type Fn = (...args: unknown[]) => unknown;

/** The pipeline members rows read or replace (web-llm's `LLMChatPipeline`, 0.2.79 – 0.2.86). */
export interface RowsPipeline extends StepPipeline, Omit<KvCacheHost, "vm" | "tvm"> {
  tvm: StepPipeline["tvm"] & KvCacheHost["tvm"] & { attachToCurrentScope?<T>(value: T): T; rng?: RowRng };
  outputIds: number[];
  stopTriggered: boolean;
  filledKVCacheLength: number;
  conversation?: { reset?(): void };
  contextWindowSize?: number;
  rnnState?: unknown;
  decodeStep(genConfig?: unknown): Promise<void>;
  /** web-llm's decode clocks (s): its usage's decode_tokens_per_s is curRoundDecodingTotalTokens over the first. */
  curRoundDecodingTotalTime?: number;
  decodingTotalTime?: number;
  prefillStep?(...args: unknown[]): Promise<void>;
  sampleTokenFromLogits?(...args: unknown[]): Promise<number>;
  embedAndForward(inputData: unknown[], inputDataLen: number): Promise<unknown>;
  getInputData(): unknown;
  resetKVCache(): void;
  processNextToken(...args: unknown[]): void;
  triggerStop(): void;
  fKVCacheBeginForward: Fn;
}

/** tvmjs's `LinearCongruentialGenerator`, the sampler's random source. */
export interface RowRng {
  rand_state?: number;
  setSeed(seed: number): void;
}

/**
 * A row's own random stream (a request's `seed`): the runtime's one
 * generator (`tvm.rng`) is switched to it while the row samples, so a seeded
 * reply does not depend on what else is in the batch. Without a seed the row
 * draws from the runtime's stream, as web-llm does.
 */
export class RowRandom {
  private state: number | undefined;

  constructor(private readonly rng: RowRng) {}

  /** The generator's state after seeding it with `seed`, computed on the generator and put back. */
  seed(seed: number): void {
    const saved = this.rng.rand_state;
    this.rng.setSeed(seed);
    this.state = this.rng.rand_state;
    this.rng.rand_state = saved;
  }

  /** Runs `work` (a sample) with the row's stream in the generator. */
  async with<T>(work: () => Promise<T>): Promise<T> {
    const rng = this.rng;
    if (this.state === undefined || rng.rand_state === undefined) return work();
    const saved = rng.rand_state;
    rng.rand_state = this.state;
    try {
      return await work();
    } finally {
      this.state = rng.rand_state;
      rng.rand_state = saved;
    }
  }
}

/** The pipeline methods a view uses as they were before other bindings hooked them. */
export const PRISTINE = ["decodeStep", "embedAndForward", "getInputData", "resetKVCache", "processNextToken", "triggerStop", "fKVCacheBeginForward"] as const;

/** Why rows cannot run on `pipe` (null: they can). */
export function rowsUnsupportedReason(pipe: Partial<RowsPipeline> & { artifact?: unknown; slidingWindowSize?: number }): string | null {
  if ((pipe.slidingWindowSize ?? -1) !== -1) return "sliding-window model: its KV cache is not paged per sequence";
  if (pipe.rnnState !== undefined) return "model with recurrent state (hybrid cache)";
  if (pipe.artifact !== undefined) return "manifest model: its decode does not go through embedAndForward";
  if (typeof pipe.decodeStep !== "function" || typeof pipe.prefillStep !== "function" || !Array.isArray(pipe.outputIds)) return "pipeline without web-llm's prefill and decode steps";
  return null;
}

/** The request's state, the view's own (web-llm's per-request fields; its prefill step resets them too). */
export function giveOwnRequestState(view: RowsPipeline & Record<string, unknown>, base: RowsPipeline): void {
  Object.assign(view, {
    outputIds: [],
    outputMessage: "",
    stopTriggered: false,
    finishReason: undefined,
    appearedTokensFreq: new Map(),
    tokenLogprobArray: [],
    filledKVCacheLength: 0,
    grammarMatcher: undefined,
    schemaOrGrammarStr: undefined,
    logitProcessor: undefined,
    curRoundDecodingTotalTokens: 0,
    curRoundPrefillTotalTokens: 0,
    curRoundDecodingTotalTime: 0,
    curRoundPrefillTotalTime: 0,
    curRoundGrammarInitTotalTime: 0,
    curRoundGrammarPerTokenTotalTime: 0,
    decodingTotalTime: 0,
    decodingTotalTokens: 0,
    prefillTotalTime: 0,
    prefillTotalTokens: 0,
  });
  if (base.conversation) {
    const conversation = Object.create(base.conversation) as { reset?(): void };
    conversation.reset?.();
    view.conversation = conversation;
  }
}

/**
 * What web-llm made on the view during the request: its grammar matcher and
 * logits buffer are freed; a grammar tokenizer table or compiler it built
 * (the pipeline had none yet) goes to the pipeline for the next requests.
 */
export function releaseViewState(pipe: RowsPipeline, rowView: RowsPipeline): void {
const view = rowView as RowsPipeline & Record<string, unknown>;
  const own = (key: string) => (Object.prototype.hasOwnProperty.call(view, key) ? view[key] : undefined);
  (own("grammarMatcher") as { dispose?: () => void } | undefined)?.dispose?.();
  view.grammarMatcher = undefined;
  const base = pipe as RowsPipeline & Record<string, unknown>;
  const buffer = own("logitsOnCPU") as { dispose?: () => void } | undefined;
  if (buffer && base.logitsOnCPU === undefined) base.logitsOnCPU = buffer;
  else buffer?.dispose?.();
  for (const key of ["xgTokenizerInfo", "grammarCompiler"]) {
    const made = own(key);
    if (made !== undefined && base[key] === undefined) base[key] = made;
  }
}
