/** What a format module provides to build families from. */
import type { GrammarStyle } from "../grammar.js";
import type { PromptStyle } from "../shape.js";

export interface FamilyStyle {
  prompt: PromptStyle;
  grammar: GrammarStyle;
  /** web-llm `conv_config` the format needs at load (a `tool` role). */
  convConfig?: Record<string, unknown>;
}
