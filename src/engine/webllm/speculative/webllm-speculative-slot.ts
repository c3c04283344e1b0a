/**
 * The web-llm engine's speculative decoding across loads: the binding
 * (webllm-speculative.ts) of the loaded chat pipeline and what the adapter
 * asks around each request. The prompt-cache slot attaches it first, so its
 * hooks sit below the prompt cache's (which then records one token per
 * decode step, as without speculation), and tells it which sequence the
 * request runs in.
 */
import type { SpeculationUsage } from "../../speculative/counters.js";
import { WebLlmSpeculative, type SequenceInfo, type SpeculativePipeline, type SpeculativeRequest } from "./webllm-speculative.js";

export class WebLlmSpeculativeSlot {
  private binding: WebLlmSpeculative | null = null;

  /** `enabled` false: the client turned speculation off (`createClient({ speculative: false })`); passes are still counted. */
  constructor(private readonly enabled = true) {}

  /** The binding of the loaded chat model (null before a load or on a stand-in). */
  get current(): WebLlmSpeculative | null {
    return this.binding;
  }

  /** A chat model was (re)loaded: hook its pipeline (before the prompt cache does). */
  attach(pipeline: unknown): void {
    this.binding = isPipeline(pipeline) ? new WebLlmSpeculative(pipeline, this.enabled) : null;
  }

  /** The prompt cache's view of the running request (its sequence, full prompt, cached replies). */
  connect(info: SequenceInfo | null): void {
    if (info) this.binding?.setSequenceInfo(info);
  }

  forget(): void {
    this.binding = null;
  }

  begin(request: SpeculativeRequest): void {
    this.binding?.begin(request);
  }

  /** The request ended: pending draft tokens leave the sequence; its counts (null: no pipeline). */
  end(): SpeculationUsage | null {
    return this.binding?.end() ?? null;
  }
}

function isPipeline(value: unknown): value is SpeculativePipeline {
  const p = value as Partial<SpeculativePipeline> | undefined;
  return !!p && typeof p.decodeStep === "function" && typeof p.embedAndForward === "function" && !!p.tvm;
}
