/**
 * Progress in bytes. Reported numbers never go backwards: a file that fails
 * verification and is fetched again does not make the bar jump back, and the
 * engine's own phases (load, compile) continue from where the download ended.
 */
import type { LoadProgress } from "../engine/types.js";

/** Minimum gap between two reports while bytes stream (each file's end is always reported). */
const REPORT_INTERVAL_MS = 50;
/** The rate is taken over the later half of the download so far, and at least this long. */
const MIN_RATE_WINDOW_MS = 1000;
/**
 * The rate leaves out this long after the first byte (or the first quarter of
 * the time since, while that is shorter): the first requests' latency and the
 * connections' ramp, which are not the line's speed. Measured on a 10 MB/s
 * line, counting them put the early ETA off by up to 27 % of the download.
 */
const RAMP_MS = 100;
/** Points kept for the rate at most this often. */
const SAMPLE_INTERVAL_MS = 100;

/** Counts bytes of one phase and reports them with the rate and an ETA. */
export class ByteProgress {
  private loaded = 0;
  private reported = 0;
  private reportedFraction = 0;
  private lastReport = -Infinity;
  /** When this call's first byte arrived (the wait before it is latency, not line speed). */
  private firstByteAt: number | null = null;
  private startBytes: number;
  /** [time, reported bytes] since the first byte, oldest first; only those the rate window may still need. */
  private readonly samples: Array<[number, number]> = [];
  private lastByteAt = 0;
  /** Seconds from a file's last byte to its commit, for the last few files: the download ends when the last file is committed. */
  private readonly commitLags: number[] = [];
  private commitLagS = 0;

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

  /**
   * `bytes` of a file fetched before the download proper (the config and the
   * tensor index, read while planning it; a resumed GGUF's stored bytes):
   * counted and reported, but not timed. The rate's clock starts at the first byte `add` brings: the setup
   * between (the quota check, the store opening, the first request's
   * latency) is not line time. Counted from these, the ETA overstated a
   * 10 MB/s download's early on by up to 16 % of its length.
   */
  addFetchedEarlier(bytes: number, file: string): void {
    this.count(bytes);
    this.report(file);
  }

  /** `bytes` arrived (negative: a rejected attempt is taken back; the report stays put). */
  add(bytes: number, file: string | null, force = false): void {
    if (this.firstByteAt === null && bytes > 0) {
      // The rate counts from the first chunk on: its own bytes arrived "at once".
      this.firstByteAt = performance.now();
      this.startBytes = this.loaded + bytes;
    }
    this.count(bytes);
    const now = performance.now();
    if (bytes > 0) this.lastByteAt = now;
    if (force || now - this.lastReport >= REPORT_INTERVAL_MS) this.report(file, now);
  }

  private count(bytes: number): void {
    this.loaded += bytes;
    if (this.loaded > this.total) this.total = this.loaded;
  }

  /**
   * A file was committed `seconds` after its last byte arrived. The ETA adds
   * the least of the last four: mid-download a commit also waits behind the
   * others and shares the machine with the downloads, which the last file's
   * commit, alone at the end, does not (measured, the mean overstated the
   * final wait by about half).
   */
  committed(seconds: number): void {
    this.commitLags.push(Math.max(0, seconds));
    if (this.commitLags.length > 4) this.commitLags.shift();
    this.commitLagS = this.commitLags.reduce((least, lag) => Math.min(least, lag));
  }

  report(file: string | null, now = performance.now()): void {
    if (!this.emit) return;
    this.lastReport = now;
    this.reported = Math.max(this.reported, this.loaded);
    const fraction = this.total > 0 ? Math.min(1, this.reported / this.total) : 1;
    this.reportedFraction = Math.max(this.reportedFraction, fraction);
    const rate = this.rate(now);
    // The last bytes still have to be committed: measured on the files before, that lag ends the download.
    const etaS = this.reported >= this.total ? Math.max(0, this.commitLagS - (now - this.lastByteAt) / 1000) : rate ? (this.total - this.reported) / rate + this.commitLagS : null;
    this.emit({ phase: this.phase, loadedBytes: this.reported, totalBytes: this.total, fraction: this.reportedFraction, etaS, bytesPerS: rate === null ? null : Math.round(rate), file });
  }

  /**
   * Bytes per second over the later half of the time since the first byte
   * (at least the last second, less the ramp): on a steady line it is the line's speed and
   * does not jump with each chunk; on a download that slows down (the store
   * falling behind, a line shared with another transfer) it follows within
   * a few seconds, where an average from the first byte kept the early speed.
   */
  private rate(now: number): number | null {
    if (this.firstByteAt === null) return null;
    const elapsed = now - this.firstByteAt;
    if (elapsed <= 50 || this.reported <= this.startBytes) return null;
    const last = this.samples.at(-1);
    if (!last || now - last[0] >= SAMPLE_INTERVAL_MS) this.samples.push([now, this.reported]);
    const from = Math.max(this.firstByteAt + Math.min(RAMP_MS, elapsed / 4), now - Math.max(MIN_RATE_WINDOW_MS, elapsed / 2));
    // The window's start only moves forward: points before it are not needed again (one before it is kept to interpolate).
    while (this.samples.length > 2 && this.samples[1][0] <= from) this.samples.shift();
    const [t0, b0] = this.samples[0];
    let bytesAtFrom = this.startBytes;
    if (t0 <= from && this.samples.length > 1) {
      const [t1, b1] = this.samples[1];
      bytesAtFrom = t1 > t0 ? b0 + ((b1 - b0) * (from - t0)) / (t1 - t0) : b0;
    } else if (from > this.firstByteAt) {
      // Between the first byte and the oldest point: interpolated from the first byte.
      bytesAtFrom = this.startBytes + ((b0 - this.startBytes) * (from - this.firstByteAt)) / Math.max(1, t0 - this.firstByteAt);
    }
    const span = (now - from) / 1000;
    return span > 0 && this.reported > bytesAtFrom ? (this.reported - bytesAtFrom) / span : null;
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
