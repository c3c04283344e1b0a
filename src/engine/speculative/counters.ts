/**
 * What speculation did in one generation, as the engine reports it
 * (EngineUsage): forward passes after the prompt's prefill, drafted and
 * accepted tokens, and OpenAI's Predicted Outputs counts. Shared by the
 * engines so they count alike.
 */
import type { EngineUsage } from "../types.js";

export type SpeculationUsage = Required<Pick<EngineUsage, "decodePasses" | "draftTokens" | "acceptedDraftTokens">> &
  Pick<EngineUsage, "acceptedPredictionTokens" | "rejectedPredictionTokens" | "jumpForwardTokens">;

export class SpeculationCounters {
  decodePasses = 0;
  draftTokens = 0;
  acceptedDraftTokens = 0;
  /** Of the drafted tokens, those a grammar forced (jump-forward). */
  jumpForwardTokens = 0;

  /** `predictionTokens`: the prediction's length in tokens; undefined when the request has none. */
  constructor(private readonly predictionTokens?: number) {}

  /** One forward pass after the prefill: a plain decode step (`drafted` 0) or a verify step; `forced`: the draft was a grammar's jump-forward. */
  pass(drafted: number, accepted: number, forced = false): void {
    this.decodePasses++;
    this.draftTokens += drafted;
    this.acceptedDraftTokens += accepted;
    if (forced) this.jumpForwardTokens += drafted;
  }

  /** `tokens` accepted draft tokens were cut before they became output (a stop string, an abort): not counted as accepted. */
  unused(tokens: number): void {
    this.acceptedDraftTokens -= Math.min(tokens, this.acceptedDraftTokens);
  }

  /** `predictionMatched`: the prediction's tokens that appeared in the output (DraftProposer.predictionTokensMatched; 0 when it was not used). */
  usage(predictionMatched = 0): SpeculationUsage {
    const counts: SpeculationUsage = {
      decodePasses: this.decodePasses,
      draftTokens: this.draftTokens,
      acceptedDraftTokens: this.acceptedDraftTokens,
      ...(this.jumpForwardTokens > 0 ? { jumpForwardTokens: this.jumpForwardTokens } : {}),
    };
    if (this.predictionTokens === undefined) return counts;
    // OpenAI: the prediction's tokens that appeared in the completion, and those that did not.
    const accepted = Math.min(predictionMatched, this.predictionTokens);
    return { ...counts, acceptedPredictionTokens: accepted, rejectedPredictionTokens: this.predictionTokens - accepted };
  }
}
