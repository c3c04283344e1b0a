/**
 * A WAV file made in the test (no fixture on disk): 16-bit PCM, a sine tone,
 * half a second by default. Used by the transcription tests in Node, in
 * Chromium and by the demo test; the generator itself is test/unit/support/wav.ts.
 */
import { makeWav } from "../unit/support/wav.js";

export const wavBytes = (options: Parameters<typeof makeWav>[0] = {}): Uint8Array => makeWav({ seconds: 0.5, ...options });
