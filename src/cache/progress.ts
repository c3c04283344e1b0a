/**
 * Progress in bytes. Reported numbers never go backwards: a file that fails
 * verification and is fetched again does not make the bar jump back, and the
 * engine's own phases (load, compile) continue from where the download ended.
 */
import type { LoadProgress } from "../engine/types.js";

/** Minimum gap between two reports while bytes stream (each file's end is always reported). */
const REPORT_INTERVAL_MS = 50;

/** Counts bytes of one phase and reports them with the rate and an ETA. */
export class ByteProgress {
  private loaded = 0;
  private reported = 0;
  private reportedFraction = 0;
  private lastReport = -Infinity;
  /** When this call's first byte arrived (the wait before it is latency, not line speed). */
  private firstByteAt: number | null = null;
  private startBytes: number;

  constructor(
    private total: number,
    alreadyLoaded: number,
    private readonly emit: ((progress: LoadProgress) => void) | undefined,
    private readonly phase: LoadProgress["phase"] = "download",
  ) {
    this.loaded = alreadyLoaded;
    this.startBytes = alreadyLoaded;
  }

  get loadedBytes(): number {
    return this.loaded;
  }

  get totalBytes(): number {
    return this.total;
  }

  /** A file whose size was unknown turned out to have `bytes` more than counted. */
  grow(bytes: number): void {
    this.total += bytes;
  }

  /** `bytes` arrived (negative: a rejected attempt is taken back; the report stays put). */
  add(bytes: number, file: string | null, force = false): void {
    if (this.firstByteAt === null && bytes > 0) {
      // The rate counts from the first chunk on: its own bytes arrived "at once".
      this.firstByteAt = performance.now();
      this.startBytes = this.loaded + bytes;
    }
    this.loaded += bytes;
    if (this.loaded > this.total) this.total = this.loaded;
    const now = performance.now();
    if (force || now - this.lastReport >= REPORT_INTERVAL_MS) this.report(file, now);
  }

  report(file: string | null, now = performance.now()): void {
    if (!this.emit) return;
    this.lastReport = now;
    this.reported = Math.max(this.reported, this.loaded);
    const fraction = this.total > 0 ? Math.min(1, this.reported / this.total) : 1;
    this.reportedFraction = Math.max(this.reportedFraction, fraction);
    const elapsedS = this.firstByteAt === null ? 0 : (now - this.firstByteAt) / 1000;
    // The average since the first byte: on a steady line it is the line's speed, and it does not jump with each chunk.
    const rate = elapsedS > 0.05 && this.reported > this.startBytes ? (this.reported - this.startBytes) / elapsedS : null;
    const etaS = this.reported >= this.total ? 0 : rate ? (this.total - this.reported) / rate : null;
    this.emit({ phase: this.phase, loadedBytes: this.reported, totalBytes: this.total, fraction: this.reportedFraction, etaS, bytesPerS: rate === null ? null : Math.round(rate), file });
  }
}

/**
 * Joins the download's progress and the engine's (load, compile) into one
 * stream whose `fraction` never decreases: the download takes the first
 * `downloadShare` of the bar, the engine the rest.
 */
export function composeProgress(emit: (progress: LoadProgress) => void, downloadShare = 0.8): { download(p: LoadProgress): void; engine(p: LoadProgress): void } {
  let last = 0;
  const send = (progress: LoadProgress, fraction: number) => {
    last = Math.max(last, Math.min(1, fraction));
    emit({ ...progress, fraction: last });
  };
  return {
    download: (p) => send(p, p.fraction * downloadShare),
    engine: (p) => send(p, downloadShare + p.fraction * (1 - downloadShare)),
  };
}
