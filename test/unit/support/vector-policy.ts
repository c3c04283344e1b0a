/**
 * Vectors whose expectation we do not follow, and why: each names the DESIGN
 * "Decisions" policy (or the parser contract) that applies and gives the
 * result that policy produces. Vectors not listed here are asserted exactly
 * as the fixture states them.
 */
import type { Vector } from "./vectors.js";

export interface PolicyEntry {
  /** The rule that applies, in a few words (shown in the test title). */
  rule: string;
  /** Why the vector's expectation differs (which server did what). */
  why: string;
  /** Fields of the expectation that the policy changes. */
  expected: Partial<Vector["expected"]>;
}

export const POLICY: Record<string, PolicyEntry> = {};
