/**
 * Marker search over streamed text: find the first marker, and measure how
 * much of a text's tail could still be the start of one (that tail is held
 * back, never emitted, until the next delta decides it).
 */

/** Length of the longest suffix of `text` that is a proper prefix of one of `markers`. */
export function partialMarkerLength(text: string, markers: readonly string[]): number {
  // Compares in place (no slices): this runs on every delta.
  let best = 0;
  const len = text.length;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, len); n > best; n--) {
      let k = 0;
      const base = len - n;
      while (k < n && text.charCodeAt(base + k) === marker.charCodeAt(k)) k++;
      if (k === n) {
        best = n;
        break;
      }
    }
  }
  return best;
}

/** The earliest occurrence of any marker in `text` at or after `from` (longest marker wins a tie). */
export function findFirstMarker(text: string, markers: readonly string[], from = 0): { at: number; marker: string } | null {
  let found: { at: number; marker: string } | null = null;
  for (const marker of markers) {
    const at = text.indexOf(marker, from);
    if (at < 0) continue;
    if (found === null || at < found.at || (at === found.at && marker.length > found.marker.length)) found = { at, marker };
  }
  return found;
}

/** Whether `text` is a (possibly complete) prefix of `marker`. */
export function isPrefixOf(text: string, marker: string): boolean {
  return text.length <= marker.length && marker.startsWith(text);
}

/** JSON-whitespace test on one UTF-16 code unit. */
export function isWs(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}
