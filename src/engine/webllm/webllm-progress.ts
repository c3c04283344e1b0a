/**
 * web-llm's load progress → our LoadProgress. web-llm reports a text and a
 * per-phase 0..1 that restarts at each phase ("Fetching param cache[i/N]: XMB
 * fetched. P% completed, …", "Loading model from cache[i/N]: XMB loaded. …",
 * "Loading GPU shader modules[i/N]: …", "Finish loading on <GPU>"); the same
 * texts in 0.2.79 and 0.2.86. Apps want one fraction that never goes back,
 * bytes, and an ETA, so the phases are stacked here. Pure: tested in Node.
 */
import type { LoadProgress } from "../types.js";

/** web-llm's `InitProgressReport`. */
export interface WebLlmProgressReport {
  progress: number;
  timeElapsed: number;
  text: string;
}

type Phase = LoadProgress["phase"];

interface ParsedReport {
  phase: Phase | "finish" | "start";
  /** Bytes named in the text ("295MB fetched"), rounded up to MiB by web-llm. */
  bytes: number | null;
}

const MIB = 1024 * 1024;

/** Reads the phase and byte count out of one web-llm progress text. */
export function parseProgressText(text: string): ParsedReport {
  const mb = /\]: (\d+)MB (?:fetched|loaded)/.exec(text);
  const bytes = mb ? Number(mb[1]) * MIB : null;
  if (text.startsWith("Fetching param cache")) return { phase: "download", bytes };
  if (text.startsWith("Loading model from cache")) return { phase: "load", bytes };
  if (text.startsWith("Loading GPU shader modules")) return { phase: "compile", bytes: null };
  if (text.startsWith("Finish loading")) return { phase: "finish", bytes: null };
  if (text.startsWith("Start to fetch params")) return { phase: "start", bytes: null };
  return { phase: "load", bytes: null };
}

/**
 * Share of what is left of the bar that each phase takes when it starts:
 * downloading dominates a first load; with weights cached, reading them and
 * compiling shaders split the bar.
 */
const SHARE: Record<Phase, number> = { download: 0.7, load: 0.5, compile: 1 };
const COMPILE_CEILING = 0.99;

/**
 * Returns a function that turns each web-llm report into a LoadProgress whose
 * `fraction` only grows and reaches 1 at "Finish loading". `now` is injectable for tests.
 */
export function createProgressMapper(now: () => number = () => performance.now()): (report: WebLlmProgressReport) => LoadProgress {
  const started = now();
  let phase: Phase = "download";
  let base = 0;
  let span = 0;
  let fraction = 0;
  let loadedBytes = 0;
  let totalBytes = 0;
  let bestP = 0;

  const enter = (next: Phase) => {
    if (next === phase && span > 0) return;
    phase = next;
    base = fraction;
    span = (next === "compile" ? COMPILE_CEILING - base : (1 - base) * SHARE[next]);
    if (span < 0) span = 0;
  };

  return (report) => {
    const parsed = parseProgressText(report.text);
    const p = Number.isFinite(report.progress) ? Math.min(Math.max(report.progress, 0), 1) : 0;
    if (parsed.phase === "finish") {
      fraction = 1;
      if (totalBytes > 0) loadedBytes = totalBytes;
    } else if (parsed.phase !== "start") {
      enter(parsed.phase);
      fraction = Math.max(fraction, base + span * p);
      if (parsed.bytes !== null) {
        loadedBytes = Math.max(loadedBytes, parsed.bytes);
        // `progress` is fetchedBytes / totalBytes exactly, the MB figure rounded up: the
        // estimate is best where most has been fetched.
        if (p > 0 && p >= bestP) {
          bestP = p;
          totalBytes = Math.round(parsed.bytes / p / MIB) * MIB;
        }
      }
    }
    const elapsedS = (now() - started) / 1000;
    const etaS = fraction >= 1 ? 0 : fraction > 0.02 ? Math.round((elapsedS * (1 - fraction)) / fraction) : null;
    return { phase: parsed.phase === "start" ? "download" : phase, loadedBytes, totalBytes, fraction, etaS, file: null };
  };
}
