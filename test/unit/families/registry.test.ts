/** Every chat model of web-llm 0.2.86's prebuilt catalog gets the family whose formats it was trained on. */
import { describe, expect, it } from "vitest";
import { prebuiltAppConfig } from "@mlc-ai/web-llm";
import { FAMILY_RULES, familyOf, familyRuleFor } from "../../../src/families/registry.js";
import { FAMILIES } from "../../../src/families/families.js";

const EMBEDDING = 1;
const chatIds = prebuiltAppConfig.model_list.filter((r) => r.model_type !== EMBEDDING).map((r) => r.model_id);
const family = (id: string) => familyOf({ model_id: id }).name;

// id → intended family: at least one per rule, the ambiguous neighbours of each.
const SPOT_CHECKS: [string, string][] = [
  ["Qwen3.5-0.8B-q4f16_1-MLC", "qwen3.5"],
  ["Qwen3.5-9B-q4f32_1-MLC", "qwen3.5"],
  ["Qwen3-0.6B-q4f16_1-MLC", "qwen3"],
  ["Qwen3-8B-q4f32_1-MLC", "qwen3"],
  ["Qwen2.5-0.5B-Instruct-q4f16_1-MLC", "qwen2.5"],
  ["Qwen2.5-Coder-7B-Instruct-q4f32_1-MLC", "qwen2.5"],
  ["Qwen2.5-Math-1.5B-Instruct-q4f16_1-MLC", "prompted"],
  ["Qwen2-1.5B-Instruct-q4f16_1-MLC", "prompted"],
  ["Qwen2-Math-7B-Instruct-q4f16_1-MLC", "prompted"],
  ["Hermes-2-Pro-Llama-3-8B-q4f16_1-MLC", "hermes"],
  ["Hermes-2-Pro-Mistral-7B-q4f16_1-MLC", "hermes"],
  ["Hermes-2-Theta-Llama-3-8B-q4f32_1-MLC", "hermes"],
  ["Hermes-3-Llama-3.2-3B-q4f16_1-MLC", "hermes"],
  ["Hermes-3-Llama-3.1-8B-q4f32_1-MLC", "hermes"],
  ["OpenHermes-2.5-Mistral-7B-q4f16_1-MLC", "prompted"],
  ["NeuralHermes-2.5-Mistral-7B-q4f16_1-MLC", "prompted"],
  ["DeepSeek-R1-Distill-Qwen-7B-q4f16_1-MLC", "deepseek-r1"],
  ["DeepSeek-R1-Distill-Llama-8B-q4f32_1-MLC", "deepseek-r1"],
  ["Llama-3.2-1B-Instruct-q4f16_1-MLC", "llama-3.1"],
  ["Llama-3.2-3B-Instruct-q4f32_1-MLC", "llama-3.1"],
  ["Llama-3.1-8B-Instruct-q4f16_1-MLC-1k", "llama-3.1"],
  ["Llama-3.1-70B-Instruct-q3f16_1-MLC", "llama-3.1"],
  ["Llama-3-8B-Instruct-q4f16_1-MLC", "prompted"],
  ["Llama-3-70B-Instruct-q3f16_1-MLC", "prompted"],
  ["Llama-2-7b-chat-hf-q4f16_1-MLC", "prompted"],
  ["Mistral-7B-Instruct-v0.3-q4f16_1-MLC", "mistral-v0.3"],
  ["Mistral-7B-Instruct-v0.2-q4f16_1-MLC", "prompted"],
  ["WizardMath-7B-V1.1-q4f16_1-MLC", "prompted"],
  ["Ministral-3-3B-Reasoning-2512-q4f16_1-MLC", "ministral-3-reasoning"],
  ["Ministral-3-3B-Instruct-2512-BF16-q4f16_1-MLC", "ministral-3"],
  ["Ministral-3-3B-Base-2512-q4f32_1-MLC", "ministral-3"],
  ["Phi-4-mini-instruct-q4f16_1-MLC", "phi-4-mini"],
  ["Phi-3.5-mini-instruct-q4f16_1-MLC", "prompted"],
  ["Phi-3.5-vision-instruct-q4f16_1-MLC", "prompted"],
  ["Phi-3-mini-4k-instruct-q4f16_1-MLC", "prompted"],
  ["phi-2-q4f16_1-MLC", "prompted"],
  ["phi-1_5-q4f16_1-MLC", "prompted"],
  ["gemma-4-E2B-it-q4f16_1-MLC", "gemma-4"],
  ["gemma-2-2b-it-q4f16_1-MLC", "gemma"],
  ["gemma-2-9b-it-q4f32_1-MLC", "gemma"],
  ["gemma-2-2b-jpn-it-q4f16_1-MLC", "gemma"],
  ["gemma3-1b-it-q4f16_1-MLC", "gemma"],
  ["gemma-2b-it-q4f16_1-MLC-1k", "gemma"],
  ["SmolLM2-1.7B-Instruct-q4f16_1-MLC", "smollm2"],
  ["SmolLM2-360M-Instruct-q4f16_1-MLC", "prompted"],
  ["SmolLM2-135M-Instruct-q0f16-MLC", "prompted"],
  ["TinyLlama-1.1B-Chat-v1.0-q4f16_1-MLC", "prompted"],
  ["TinyLlama-1.1B-Chat-v0.4-q4f32_1-MLC-1k", "prompted"],
  ["OLMo-2-0425-1B-Instruct-q4f16_1-MLC", "prompted"],
  ["stablelm-2-zephyr-1_6b-q4f16_1-MLC", "prompted"],
  ["RedPajama-INCITE-Chat-3B-v1-q4f16_1-MLC", "prompted"],
];

describe("family registry", () => {
  it("covers the whole prebuilt catalog (161 chat models)", () => {
    expect(chatIds.length).toBe(161);
  });

  it.each(SPOT_CHECKS)("%s → %s", (id, expected) => {
    expect(chatIds).toContain(id);
    expect(family(id)).toBe(expected);
  });

  it("matches every prebuilt chat id by an explicit rule: none falls to the default", () => {
    const unmatched = chatIds.filter((id) => familyRuleFor(id) === undefined);
    expect(unmatched).toEqual([]);
  });

  it("uses every rule for some prebuilt id (no dead rule)", () => {
    const used = new Set(chatIds.map((id) => familyRuleFor(id)));
    expect(FAMILY_RULES.filter((rule) => !used.has(rule)).map((r) => String(r.pattern))).toEqual([]);
  });

  it("gives every native family's prebuilt ids that family's format", () => {
    const byFamily = new Map<string, string[]>();
    for (const id of chatIds) byFamily.set(family(id), [...(byFamily.get(family(id)) ?? []), id]);
    expect(byFamily.get("qwen3")).toHaveLength(10);
    expect(byFamily.get("qwen3.5")).toHaveLength(9);
    expect(byFamily.get("hermes")).toHaveLength(9);
    expect(byFamily.get("llama-3.1")).toHaveLength(11);
    expect(byFamily.get("ministral-3")).toHaveLength(4);
    expect(byFamily.get("ministral-3-reasoning")).toHaveLength(2);
    for (const [name, ids] of byFamily) for (const id of ids) expect(familyOf({ model_id: id }).format, id).toBe(FAMILIES[name as keyof typeof FAMILIES].format);
  });

  it("takes an explicit record.family over the id", () => {
    expect(familyOf({ model_id: "my-finetune", family: "qwen3" }).name).toBe("qwen3");
    expect(familyOf({ model_id: "Qwen3-0.6B-q4f16_1-MLC", family: "llama-3.2-pythonic" }).format).toBe("pythonic");
  });

  it("matches custom ids on their last path segment, and gives unknown ids the prompted family", () => {
    expect(family("Qwen/Qwen3-0.6B")).toBe("qwen3");
    expect(family("someone/unknown-model")).toBe("prompted");
    expect(familyOf({ model_id: "x", family: "no-such-family" }).name).toBe("prompted");
  });

  it("describes each family's tools and reasoning", () => {
    expect(FAMILIES.qwen3.reasoning).toMatchObject({ open: "<think>", close: "</think>", defaultOn: true, promptOpened: false });
    expect(FAMILIES["qwen3.5"].reasoning).toMatchObject({ promptOpened: true, defaultOn: true });
    expect(FAMILIES["deepseek-r1"].reasoning).toMatchObject({ open: "<think>", promptOpened: true });
    expect(FAMILIES["ministral-3-reasoning"].reasoning).toMatchObject({ open: "[THINK]", close: "[/THINK]" });
    expect(FAMILIES["gemma-4"].reasoning).toMatchObject({ open: "<|channel>thought", close: "<channel|>" });
    expect(FAMILIES["ministral-3"].reasoning).toBeNull();
    expect(FAMILIES.prompted.tools).toBe("prompted");
    expect(FAMILIES["phi-4-mini"]).toMatchObject({ tools: "native", format: "phi4" });
    expect(FAMILIES["llama-3.1"].capabilities.parallelToolCalls).toBe(false);
    expect(FAMILIES.gemma.capabilities.systemRole).toBe(false);
  });
});
