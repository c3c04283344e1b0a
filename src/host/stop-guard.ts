/**
 * Applies `stop` sequences to streamed text: output is cut before the first
 * match, and text that could be the start of a stop sequence is held back until
 * it is known not to be one, so no delta ever shows part of a stop sequence.
 * Engines stop generating at a match; this makes what reaches the user right
 * whatever token boundaries the match fell on. O(delta + longest stop) per push.
 */
export class StopGuard {
  private held = "";
  private stopped = false;
  private readonly longest: number;

  constructor(private readonly stops: readonly string[]) {
    this.longest = stops.reduce((max, s) => Math.max(max, s.length), 0);
  }

  /** True once a stop sequence has been seen: later text is discarded. */
  get hit(): boolean {
    return this.stopped;
  }

  /** The part of `text` (with what was held) that is safe to show now. */
  push(text: string): string {
    if (this.stopped) return "";
    if (this.longest === 0) return text;
    const window = this.held + text;
    // Matches can only start in the held part or in the new text.
    let cut = -1;
    for (const stop of this.stops) {
      const at = window.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.held = "";
      return window.slice(0, cut);
    }
    const keep = this.heldSuffixLength(window);
    this.held = window.slice(window.length - keep);
    return window.slice(0, window.length - keep);
  }

  /** End of output: what was held was not a stop sequence after all. */
  finish(): string {
    const rest = this.stopped ? "" : this.held;
    this.held = "";
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop sequence. */
  private heldSuffixLength(text: string): number {
    const max = Math.min(this.longest - 1, text.length);
    for (let length = max; length > 0; length--) {
      const suffix = text.slice(text.length - length);
      if (this.stops.some((stop) => stop.startsWith(suffix))) return length;
    }
    return 0;
  }
}
