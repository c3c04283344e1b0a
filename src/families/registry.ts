/**
 * Model id → family. A record may name its family (`record.family`);
 * otherwise the first rule whose pattern matches the id decides. Every chat
 * model of web-llm's prebuilt catalog matches an explicit rule (a unit test
 * checks it); ids that match none get the prompted family.
 */
import type { Family } from "./types.js";
import type { ModelRecord } from "../models/record.js";
import { FAMILIES, type FamilyName } from "./families.js";

/** One id rule: which family ids matching `pattern` belong to. */
export interface FamilyRule {
  pattern: RegExp;
  family: FamilyName;
}

/** Ordered: the first match wins, so specific patterns come before general ones. */
export const FAMILY_RULES: readonly FamilyRule[] = [
  { pattern: /^Qwen3\.5-/i, family: "qwen3.5" },
  { pattern: /^Qwen3-/i, family: "qwen3" },
  // Qwen2.5-Math shares the Qwen2.5 template but was not trained on tools.
  { pattern: /^Qwen2\.5-Math-/i, family: "prompted" },
  { pattern: /^Qwen2\.5-/i, family: "qwen2.5" },
  { pattern: /^Qwen2-/i, family: "prompted" },
  { pattern: /^Hermes-(2-Pro|2-Theta|3)-/i, family: "hermes" },
  // OpenHermes/NeuralHermes 2.5 are ChatML but predate Hermes function calling.
  { pattern: /^(Open|Neural)Hermes-2\.5-/i, family: "prompted" },
  { pattern: /^DeepSeek-R1-Distill-/i, family: "deepseek-r1" },
  { pattern: /^Llama-3\.[123]-/i, family: "llama-3.1" },
  { pattern: /^Llama-3-/i, family: "prompted" },
  { pattern: /^Llama-2-/i, family: "prompted" },
  { pattern: /^Mistral-7B-Instruct-v0\.3-/i, family: "mistral-v0.3" },
  { pattern: /^Mistral-7B-Instruct-v0\.2-/i, family: "prompted" },
  { pattern: /^WizardMath-/i, family: "prompted" },
  { pattern: /^Ministral-3-.*Reasoning/i, family: "ministral-3-reasoning" },
  { pattern: /^Ministral-3-/i, family: "ministral-3" },
  { pattern: /^Phi-4-mini-/i, family: "phi-4-mini" },
  { pattern: /^Phi-3(\.5)?-/i, family: "prompted" },
  { pattern: /^phi-(2|1_5)-/i, family: "prompted" },
  { pattern: /^gemma-4-/i, family: "gemma-4" },
  // gemma, gemma-2, gemma3: no tool tokens and no system turn.
  { pattern: /^gemma(-2|3)?-/i, family: "gemma" },
  { pattern: /^SmolLM2-1\.7B-/i, family: "smollm2" },
  { pattern: /^SmolLM2-(135|360)M-/i, family: "prompted" },
  { pattern: /^TinyLlama-/i, family: "prompted" },
  { pattern: /^OLMo-2-/i, family: "prompted" },
  { pattern: /^stablelm-/i, family: "prompted" },
  { pattern: /^RedPajama-/i, family: "prompted" },
];

/** The rule that decides `modelId`'s family, or undefined when none matches. */
export function familyRuleFor(modelId: string): FamilyRule | undefined {
  // Custom ids are often `org/Name…`: match on the last path segment.
  const id = modelId.slice(modelId.lastIndexOf("/") + 1);
  return FAMILY_RULES.find((rule) => rule.pattern.test(id));
}

/** Whether `name` is a family this library knows (for `record.family`). */
export function isFamilyName(name: string): name is FamilyName {
  return Object.prototype.hasOwnProperty.call(FAMILIES, name);
}

/** The family of a catalog record: its explicit `family`, else the id rules, else the prompted family. */
export function familyOf(record: Pick<ModelRecord, "model_id" | "family">): Family {
  if (record.family !== undefined) {
    if (isFamilyName(record.family)) return FAMILIES[record.family];
  }
  const rule = familyRuleFor(record.model_id);
  return FAMILIES[rule?.family ?? "prompted"];
}
