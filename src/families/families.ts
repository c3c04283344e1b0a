/**
 * The families: web-llm's prebuilt chat models fall into these (registry.ts
 * maps ids to names). Each is its data (format, reasoning, capabilities) plus
 * the prompt and grammar style of its format.
 */
import type { Family } from "./types.js";
import { defineFamily, type FamilySpec } from "./define.js";
import { GEMMA4_REASONING, MINISTRAL_REASONING, QWEN35_REASONING, QWEN3_REASONING, R1_REASONING } from "./reasoning-shapes.js";
import * as styles from "./styles/index.js";

const both = { parallelToolCalls: true, systemRole: true };

const SPECS = {
  "qwen2.5": { tools: "native", format: "hermes", reasoning: null, capabilities: both, idStyle: "openai", ...styles.qwen },
  qwen3: { tools: "native", format: "hermes", reasoning: QWEN3_REASONING, capabilities: both, idStyle: "openai", ...styles.qwen3 },
  "qwen3.5": { tools: "native", format: "qwen-xml", reasoning: QWEN35_REASONING, capabilities: both, idStyle: "openai", ...styles.qwen35 },
  hermes: { tools: "native", format: "hermes", reasoning: null, capabilities: both, idStyle: "openai", ...styles.hermes },
  "llama-3.1": { tools: "native", format: "llama-json", reasoning: null, capabilities: { parallelToolCalls: false, systemRole: true }, idStyle: "openai", ...styles.llama31 },
  "llama-3.2-pythonic": { tools: "native", format: "pythonic", reasoning: null, capabilities: both, idStyle: "openai", ...styles.pythonic },
  "mistral-v0.3": { tools: "native", format: "mistral", reasoning: null, capabilities: both, idStyle: "mistral", ...styles.mistral },
  "ministral-3": { tools: "native", format: "ministral", reasoning: null, capabilities: both, idStyle: "mistral", ...styles.ministral },
  "ministral-3-reasoning": { tools: "native", format: "ministral", reasoning: MINISTRAL_REASONING, capabilities: both, idStyle: "mistral", ...styles.ministralReasoning },
  "phi-4-mini": { tools: "native", format: "phi4", reasoning: null, capabilities: both, idStyle: "openai", ...styles.phi4 },
  "gemma-4": { tools: "native", format: "gemma4", reasoning: GEMMA4_REASONING, capabilities: both, idStyle: "openai", ...styles.gemma4 },
  smollm2: { tools: "native", format: "smollm", reasoning: null, capabilities: both, idStyle: "openai", ...styles.smollm },
  "deepseek-r1": { tools: "prompted", format: "hermes", reasoning: R1_REASONING, capabilities: both, idStyle: "openai", ...styles.deepseek },
  gemma: { tools: "prompted", format: "hermes", reasoning: null, capabilities: { parallelToolCalls: true, systemRole: false }, idStyle: "openai", ...styles.prompted },
  prompted: { tools: "prompted", format: "hermes", reasoning: null, capabilities: both, idStyle: "openai", ...styles.prompted },
} satisfies Record<string, Omit<FamilySpec, "name">>;

/** A family name (what `record.family` may say). */
export type FamilyName = keyof typeof SPECS;

/** Every family by name. */
export const FAMILIES = Object.fromEntries(
  Object.entries(SPECS).map(([name, spec]) => [name, defineFamily({ name, ...(spec as Omit<FamilySpec, "name">) })]),
) as Record<FamilyName, Family>;
