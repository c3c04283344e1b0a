/**
 * The host prepares every audio part (host/audio-input.ts: WAV measured,
 * other containers decoded) before the prompt is shaped; this is where the
 * shaping hands the parts on as engine parts, and where an unprepared one
 * would be caught instead of reaching an engine.
 */
import type { ContentPart } from "../protocol/types.js";
import type { EnginePart } from "./types.js";

export function enginePartsOf(content: string | ContentPart[]): string | EnginePart[] {
  if (typeof content === "string") return content;
  for (const part of content) {
    if (part.type === "input_audio" && !("audio" in part)) throw new Error("An audio part reached prompt shaping undecoded: host/audio-input.ts must prepare it first.");
  }
  return content as EnginePart[];
}
