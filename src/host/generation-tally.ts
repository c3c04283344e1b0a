/**
 * Engine-wide counts for an engine that decodes one sequence at a time, added
 * up from each generation's own figures (what `x_webgpu` reports of it): a
 * batching engine counts its shared passes itself (`Engine.batchCounters`),
 * since the sum of its rows' passes would count a shared pass once per row.
 *
 * A generation's passes are its prompt's prefill (one pass: the engine's usage
 * does not say how many chunks it prefilled in) and its `decode_passes`
 * (host/decode-report.ts: decode and verify steps, one per generated token
 * where the engine does not count them). Each such pass has one row and
 * samples one token, plus the draft tokens it accepted.
 */
import type { Engine, EngineUsage } from "../engine/types.js";
import type { BatchCounters } from "../engine/batching/counters.js";
import { cachedOfFed, decodeCounts } from "./decode-report.js";

export class GenerationTally {
  /** Forward passes counted: each has one row, so rows per pass are 1 (mean and most) once there is one. */
  private passes = 0;
  private generated = 0;
  private prefilled = 0;

  /** One generation of `engine` ended (done, stopped, cut or aborted) with this usage. */
  count(engine: Engine, usage: EngineUsage): void {
    if (engine.batchCounters?.()) return;
    // As the generation loop counts prefill_tokens.
    const fed = usage.promptTokens + (usage.continuedTokens ?? 0);
    const cachedFed = cachedOfFed(fed, usage.cachedTokens);
    const decode = decodeCounts(usage);
    const passes = (fed > 0 ? 1 : 0) + decode.decode_passes;
    this.passes += passes;
    this.prefilled += fed - cachedFed;
    // As a batching engine counts sampled tokens: a reply that ends by itself samples its end-of-text token, one
    // more than completion_tokens; a stop string's last token is the last sampled. The engine's own count where it
    // gives one: one per pass plus accepted drafts counts a verify pass's last token even where a stop string cut
    // the pass's accepted drafts and that token was never emitted.
    this.generated += usage.sampledTokens ?? passes + decode.accepted_draft_tokens;
  }

  counters(): BatchCounters {
    const rows = this.passes > 0 ? 1 : 0;
    return { forward_passes: this.passes, generated_tokens: this.generated, prefill_tokens: this.prefilled, mean_rows: rows, max_rows: rows };
  }
}
