/**
 * What web-llm's sampler lacks, done in a web-llm `LogitProcessor`. web-llm
 * calls it on the CPU with the logits of every step (after its grammar mask,
 * before its logit_bias, penalties, temperature and top_p), then tells it the
 * sampled token. So these compose with web-llm's own sampling parameters:
 *
 * - `top_k`: every token outside the k highest logits is set to -Infinity
 *   (tokens tied with the k-th are kept);
 * - `min_p`: tokens whose probability is below min_p × the top token's are
 *   removed, measured on the raw logits (temperature 1) — the order of
 *   llama.cpp's default sampler chain, since temperature comes after this hook;
 * - `top_logprobs` above web-llm's 5: the N most likely tokens and their log
 *   probabilities at the request temperature, from the logits this hook sees
 *   (so before penalties and logit_bias);
 * - reasoning budget: after `budgetTokens` generated tokens without the end
 *   marker, the marker's token ids are forced one step at a time.
 *
 * One processor is registered per model (web-llm binds it at reload); each
 * request arms it with `begin` and disarms it with `end`, so a request that
 * needs none of this leaves logits untouched. Pure: tested in Node.
 */

/** web-llm's LogitProcessor interface. */
export interface WebLlmLogitProcessor {
  processLogits(logits: Float32Array): Float32Array;
  processSampledToken(token: number): void;
  resetState(): void;
}

export interface LogitControls {
  topK?: number;
  minP?: number;
  /** Record this many alternatives per step (only needed above 5). */
  topLogprobs?: number;
  /** Temperature the alternatives' probabilities are computed at; default 1. */
  temperature?: number;
  /** Force `endTokens` once `tokens` tokens were generated without them. */
  budget?: { tokens: number; endTokens: number[] };
}

/** Alternatives recorded for one generated token. */
export interface StepAlternatives {
  sampled: number;
  top: Array<{ id: number; logprob: number }>;
}

export class RequestLogitProcessor implements WebLlmLogitProcessor {
  private controls: LogitControls | null = null;
  private generated = 0;
  private recent: number[] = [];
  private forced: number[] = [];
  private budgetDone = false;
  private pendingTop: Array<{ id: number; logprob: number }> | null = null;
  /** Alternatives per generated token, in order (when `topLogprobs` was asked for). */
  readonly steps: StepAlternatives[] = [];

  /** Arms the processor for one request. */
  begin(controls: LogitControls): void {
    this.controls = controls;
    this.generated = 0;
    this.recent = [];
    this.forced = [];
    this.budgetDone = false;
    this.pendingTop = null;
    this.steps.length = 0;
  }

  /** Disarms it: later steps pass through untouched. */
  end(): void {
    this.controls = null;
    this.forced = [];
    this.pendingTop = null;
  }

  get active(): boolean {
    return this.controls !== null;
  }

  processLogits(logits: Float32Array): Float32Array {
    const c = this.controls;
    if (!c) return logits;
    if (c.topLogprobs) this.pendingTop = topLogprobsOf(logits, c.topLogprobs, c.temperature ?? 1);
    if (this.forced.length > 0) {
      const id = this.forced[0];
      logits.fill(-Infinity);
      logits[id] = 0;
      return logits;
    }
    if (c.topK !== undefined && c.topK > 0 && c.topK < logits.length) {
      const threshold = kthLargest(logits, c.topK);
      for (let i = 0; i < logits.length; i++) if (logits[i] < threshold) logits[i] = -Infinity;
    }
    if (c.minP !== undefined && c.minP > 0) {
      let max = -Infinity;
      for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
      const floor = max + Math.log(c.minP);
      for (let i = 0; i < logits.length; i++) if (logits[i] < floor) logits[i] = -Infinity;
    }
    return logits;
  }

  processSampledToken(token: number): void {
    const c = this.controls;
    if (!c) return;
    this.generated++;
    if (this.pendingTop) {
      this.steps.push({ sampled: token, top: this.pendingTop });
      this.pendingTop = null;
    }
    if (this.forced.length > 0 && this.forced[0] === token) {
      this.forced.shift();
      if (this.forced.length === 0) this.budgetDone = true;
      return;
    }
    const budget = c.budget;
    if (!budget || this.budgetDone || budget.endTokens.length === 0) return;
    this.recent.push(token);
    if (this.recent.length > budget.endTokens.length) this.recent.shift();
    if (this.recent.length === budget.endTokens.length && this.recent.every((t, i) => t === budget.endTokens[i])) {
      this.budgetDone = true; // the model closed its reasoning by itself
      return;
    }
    if (this.generated >= budget.tokens) this.forced = [...budget.endTokens];
  }

  resetState(): void {
    // web-llm calls this on resetChat(); request state is owned by begin/end.
  }
}

/** The k-th largest value (a size-k min-heap: O(n log k)). */
export function kthLargest(values: Float32Array, k: number): number {
  const heap = new Float32Array(k);
  let size = 0;
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && heap[l] < heap[m]) m = l;
      if (r < size && heap[r] < heap[m]) m = r;
      if (m === i) return;
      const t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
  };
  for (let n = 0; n < values.length; n++) {
    const v = values[n];
    if (size < k) {
      let i = size++;
      heap[i] = v;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (heap[p] <= heap[i]) break;
        const t = heap[p];
        heap[p] = heap[i];
        heap[i] = t;
        i = p;
      }
    } else if (v > heap[0]) {
      heap[0] = v;
      down(0);
    }
  }
  return heap[0];
}

/** The `n` most likely tokens with their log probabilities under softmax(logits / temperature). */
export function topLogprobsOf(logits: Float32Array, n: number, temperature: number): Array<{ id: number; logprob: number }> {
  const t = Math.max(temperature, 1e-6);
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] - max) / t);
  const logZ = Math.log(sum);
  const threshold = kthLargest(logits, Math.min(n, logits.length));
  const top: Array<{ id: number; logprob: number }> = [];
  for (let i = 0; i < logits.length; i++) if (logits[i] >= threshold) top.push({ id: i, logprob: (logits[i] - max) / t - logZ });
  top.sort((a, b) => b.logprob - a.logprob || a.id - b.id);
  return top.slice(0, n);
}
