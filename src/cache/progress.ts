/**
 * Progress in bytes. Reported numbers never go backwards: a file that fails
 * verification and is fetched again does not make the bar jump back, and the
 * engine's own phases (load, compile) continue from where the download ended.
 */
import type { LoadProgress } from "../engine/types.js";

/** Minimum gap between two reports while bytes stream (each file's end is always reported). */
const REPORT_INTERVAL_MS = 50;

/** Counts bytes of one phase and reports them with an ETA. */
export class ByteProgress {
  private loaded = 0;
  private reported = 0;
  private reportedFraction = 0;
  private lastReport = -Infinity;
  private readonly started = performance.now();
  private readonly startBytes: number;

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
    const elapsedS = (now - this.started) / 1000;
    const rate = elapsedS > 0 ? (this.reported - this.startBytes) / elapsedS : 0;
    const etaS = this.reported >= this.total ? 0 : rate > 0 ? (this.total - this.reported) / rate : null;
    this.emit({ phase: this.phase, loadedBytes: this.reported, totalBytes: this.total, fraction: this.reportedFraction, etaS, file });
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
