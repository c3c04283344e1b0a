/**
 * Token log probabilities in the legacy Completions form (parallel arrays:
 * `tokens`, `token_logprobs`, `top_logprobs` as token → logprob maps,
 * `text_offset`), built from the engine's per-token entries as the text they
 * belong to is released: a token held back by a stop sequence check is
 * released with its text, and one past the final text (the stop sequence
 * itself) never is.
 */
import type { TokenLogprob } from "./types.js";
import type { CompletionLogprobs } from "./completions-types.js";

interface Pending {
  entry: TokenLogprob;
  /** Where the token starts in the generated text. */
  start: number;
}

export class LegacyLogprobs {
  private pending: Pending[] = [];
  private generated = 0;

  /**
   * @param base  what comes before the generated text in `text_offset`'s frame (the prompt's length)
   * @param top   alternatives per token (`logprobs`)
   */
  constructor(
    private readonly base: number,
    private readonly top: number,
  ) {}

  /** One engine step: its text (before the stop check) and its tokens' entries. */
  add(text: string, entries: TokenLogprob[] | undefined): void {
    let at = this.generated;
    for (const entry of entries ?? []) {
      this.pending.push({ entry, start: at });
      at += entry.token.length;
    }
    this.generated += text.length;
  }

  /** The entries of tokens starting within the first `length` characters of the output, not released before; null when none. */
  release(length: number): CompletionLogprobs | null {
    const ready: Pending[] = [];
    while (this.pending.length > 0 && this.pending[0].start < length) ready.push(this.pending.shift() as Pending);
    if (ready.length === 0) return null;
    return {
      tokens: ready.map((p) => p.entry.token),
      token_logprobs: ready.map((p) => p.entry.logprob),
      top_logprobs: ready.map((p) => Object.fromEntries(p.entry.top_logprobs.slice(0, this.top).map((t) => [t.token, t.logprob]))),
      text_offset: ready.map((p) => this.base + p.start),
    };
  }

  /** The output ended at `length` characters: what is left past it is dropped. */
  finish(length: number): CompletionLogprobs | null {
    const last = this.release(length);
    this.pending = [];
    return last;
  }
}

/** Several released parts as one (a non-streamed choice). */
export function joinLogprobs(parts: Array<CompletionLogprobs | null>): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for (const part of parts) {
    if (!part) continue;
    // Appended one by one: a reply's token count is the request's choice (no argument spreading).
    for (let i = 0; i < part.tokens.length; i++) {
      out.tokens.push(part.tokens[i]!);
      out.token_logprobs.push(part.token_logprobs[i]!);
      out.top_logprobs.push(part.top_logprobs[i]!);
      out.text_offset.push(part.text_offset[i]!);
    }
  }
  return out;
}
