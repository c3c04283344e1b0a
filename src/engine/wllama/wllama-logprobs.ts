/**
 * llama.cpp's per-token probabilities as our TokenLogprob: each streamed
 * chunk of wllama carries the token it sampled, with `logprob` and the
 * `n_probs` most likely alternatives, computed by llama-server
 * (`probs_to_json`) as the log-softmax of the model's logits before the
 * sampler chain: the model's own distribution, before temperature, penalties,
 * `logit_bias` or a grammar reshape it.
 *
 * llama.cpp is asked for at least one alternative (with none it reports no
 * probabilities at all, wllama-request.ts `probsWanted`); the reply keeps
 * `top` of them, so `top_logprobs: 0` gives each token with no alternatives,
 * as the hosted API does.
 */
import type { TokenLogprob, TopLogprob } from "../../protocol/types.js";
import type { WllamaChunkLogprobs, WllamaTopLogprob } from "./wllama-api.js";

const encoder = new TextEncoder();

function topLogprobOf(entry: WllamaTopLogprob): TopLogprob {
  return { token: entry.token, logprob: entry.logprob, bytes: entry.bytes ?? [...encoder.encode(entry.token)] };
}

/** The chunk's tokens with their logprobs and `top` alternatives each; undefined where the chunk carries none. */
export function tokenLogprobsOf(logprobs: WllamaChunkLogprobs | null | undefined, top: number): TokenLogprob[] | undefined {
  const content = logprobs?.content;
  if (!content || content.length === 0) return undefined;
  return content.map((entry) => ({ ...topLogprobOf(entry), top_logprobs: (entry.top_logprobs ?? []).slice(0, top).map(topLogprobOf) }));
}
