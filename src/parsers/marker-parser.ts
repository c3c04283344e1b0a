/**
 * The shell shared by formats whose calls start with a marker: prose is
 * passed on as content up to the first marker (a tail that could start one
 * is held back), the marker's body parser takes over, then an optional
 * closing marker is consumed and prose resumes. Input is processed once:
 * only a short undecided tail is carried to the next delta.
 */
import type { CallBody } from "./call-writer.js";
import type { EventSink } from "./event-sink.js";
import { findFirstMarker, isWs, partialMarkerLength } from "./partial-marker.js";

export interface Opener {
  marker: string;
  body: (sink: EventSink) => CallBody;
  /** Closing marker consumed after the body (whitespace before it allowed). */
  close?: string;
  /** A control token: when no call follows it, drop it rather than show it as content. */
  dropOnFail?: boolean;
}

/** Everything a format parser does after reasoning is split off. */
export interface FormatParser {
  push(text: string): void;
  finish(): void;
}

export class MarkerParser implements FormatParser {
  private carry = "";
  private body: CallBody | null = null;
  private opener: Opener | null = null;
  /** The text a body consumed before its call was named, in pieces (joined only if it fails). */
  private raw: string[] = [];
  private closing: string | null = null;
  /** A call broke off inside its block: what follows, up to the block's closing marker or the next call marker, is markup. */
  private skipping = false;
  private readonly markers: string[];

  constructor(protected readonly sink: EventSink, private readonly openers: Opener[]) {
    this.markers = openers.map((o) => o.marker);
  }

  push(text: string): void {
    this.run(this.carry + text, false);
  }

  finish(): void {
    this.run(this.carry, true);
    this.carry = "";
    // A failed body's text is prose again, and may open another body (a marker inside it): settle each in turn.
    while (this.body) {
      this.body.finish();
      const redo = this.afterBody();
      if (redo) this.run(redo, true);
    }
  }

  /** Plain text outside calls; formats override to look for more than literal markers. */
  protected prose(text: string, from: number, end: boolean): number {
    const hit = findFirstMarker(text, this.markers, from);
    if (!hit) {
      const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(from, text.length - 64)), this.markers);
      this.sink.content(text.slice(from, text.length - keep));
      return text.length - keep;
    }
    this.sink.content(text.slice(from, hit.at));
    this.open(this.openers[this.markers.indexOf(hit.marker)]);
    return hit.at + hit.marker.length;
  }

  protected hasBody(): boolean {
    return this.body !== null;
  }

  /** Start a body (formats that detect calls without a literal marker call this too). */
  protected open(opener: Opener): void {
    this.opener = opener;
    this.body = opener.body(this.sink);
    this.raw = [];
  }

  private run(text: string, end: boolean): void {
    this.carry = "";
    let i = 0;
    while (i < text.length) {
      if (this.body) {
        const body = this.body;
        const wasNamed = body.named;
        const next = body.feed(text, i, end);
        // Only a body whose call never started can fail and turn back into prose.
        if (next > i && !wasNamed) this.raw.push(text.slice(i, next));
        i = next;
        if (body.status === "more") {
          if (end) return; // finish() settles it
          this.carry = text.slice(i);
          return;
        }
        const redo = this.afterBody();
        if (redo) {
          text = redo + text.slice(i);
          i = 0;
        }
        continue;
      }
      if (this.skipping) {
        i = this.skip(text, i, end);
        if (this.skipping) return;
        continue;
      }
      if (this.closing !== null) {
        let j = i;
        while (j < text.length && isWs(text.charCodeAt(j))) j++;
        const rest = text.slice(j, j + this.closing.length);
        if (rest === this.closing) {
          i = j + this.closing.length;
          this.closing = null;
          continue;
        }
        if (this.closing.startsWith(rest)) {
          // Undecided (or a truncated closing marker at the very end, which is dropped).
          if (!end) this.carry = text.slice(i);
          return;
        }
        this.closing = null;
        continue;
      }
      i = this.prose(text, i, end);
      if (!end && i < text.length && !this.body && this.closing === null) {
        this.carry = text.slice(i);
        return;
      }
    }
  }

  /**
   * After a broken call: drops text up to the block's closing marker (consumed)
   * or the next call marker (left to open), or to the end of output. Returns
   * the index reached; a tail that may start either marker is carried.
   */
  private skip(text: string, from: number, end: boolean): number {
    const ends = this.closing !== null ? [this.closing, ...this.markers] : this.markers;
    const hit = findFirstMarker(text, ends, from);
    if (!hit) {
      const keep = end ? 0 : partialMarkerLength(text.slice(Math.max(from, text.length - 64)), ends);
      if (keep > 0) this.carry = text.slice(text.length - keep);
      return text.length;
    }
    this.skipping = false;
    if (hit.marker === this.closing) {
      this.closing = null;
      return hit.at + hit.marker.length;
    }
    this.closing = null;
    return hit.at;
  }

  /** Settles a finished body; returns the text to scan again (a failed body's text, which is prose). */
  private afterBody(): string {
    const opener = this.opener!;
    const body = this.body!;
    let redo = body.status === "fail" ? this.raw.join("") : "";
    this.body = null;
    this.opener = null;
    this.raw = [];
    if (body.status === "fail") {
      // The call never started (no complete name): its marker and text are prose.
      if (!opener.dropOnFail) this.sink.content(opener.marker);
      // A dropped control token is still structure: whitespace next to it is not content.
      else this.sink.boundary();
      if (opener.marker === "" && redo) {
        // Detected without a marker (a pythonic `[`): its first character is prose, or the same text would open it again.
        this.sink.content(redo[0]);
        redo = redo.slice(1);
      }
      return redo;
    }
    // Structure was here (even a block with no call, SmolLM's `[]`): whitespace next to it is not content.
    this.sink.boundary();
    this.closing = opener.close ?? null;
    this.skipping = body.broken === true;
    return "";
  }
}
