import { describe, expect, it } from "vitest";
import { needsLogitProcessor, renderContinuationPrompt, toChatRequest, toCompletionRequest, usesEnableThinking, type ConvTemplate } from "../../src/engine/webllm/webllm-request.js";
import type { EngineRequest } from "../../src/engine/types.js";

const base: EngineRequest = {
  model: "Qwen3-0.6B-q4f32_1-MLC",
  messages: [
    { role: "system", content: "S" },
    { role: "user", content: "Hi" },
  ],
  sampling: { stop: [], max_tokens: 3 },
  thinking: { enabled: true },
  continueFinalMessage: false,
};

/** Qwen2's ChatML template as in its mlc-chat-config.json. */
const chatml: ConvTemplate = {
  system_template: "<|im_start|>system\n{system_message}<|im_end|>\n",
  system_message: "You are a helpful assistant.",
  roles: { user: "<|im_start|>user", assistant: "<|im_start|>assistant" },
  seps: ["<|im_end|>\n"],
  role_content_sep: "\n",
};

describe("EngineRequest → web-llm request bodies", () => {
  it("streams with usage, copies only the sampling fields that are set, and never sends tools", () => {
    const body = toChatRequest({ ...base, sampling: { ...base.sampling, temperature: 0, seed: 7, stop: ["END"], top_k: 5 } }, { enableThinkingSwitch: true });
    expect(body).toEqual({
      messages: base.messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 3,
      temperature: 0,
      seed: 7,
      stop: ["END"],
    });
  });

  it("thinking off → enable_thinking:false for Qwen3-style templates only", () => {
    const off = { ...base, thinking: { enabled: false } };
    expect(toChatRequest(off, { enableThinkingSwitch: true }).extra_body).toEqual({ enable_thinking: false });
    expect(toChatRequest(off, { enableThinkingSwitch: false }).extra_body).toBeUndefined();
    expect(toChatRequest(base, { enableThinkingSwitch: true }).extra_body).toBeUndefined();
    expect(usesEnableThinking("Qwen3-0.6B-q4f32_1-MLC")).toBe(true);
    expect(usesEnableThinking("Qwen3.5-0.8B-q4f16_1-MLC")).toBe(true);
    expect(usesEnableThinking("Llama-3.2-1B-Instruct-q4f16_1-MLC")).toBe(false);
    expect(usesEnableThinking("qwen2-0.5b-random", "qwen3")).toBe(true);
  });

  it("logprobs: web-llm gets top_logprobs within its 1..5 (it records nothing at 0)", () => {
    expect(toChatRequest({ ...base, topLogprobs: 0 }, { enableThinkingSwitch: false })).toMatchObject({ logprobs: true, top_logprobs: 1 });
    expect(toChatRequest({ ...base, topLogprobs: 3 }, { enableThinkingSwitch: false })).toMatchObject({ logprobs: true, top_logprobs: 3 });
    expect(toChatRequest({ ...base, topLogprobs: 20 }, { enableThinkingSwitch: false })).toMatchObject({ logprobs: true, top_logprobs: 5 });
    expect(toChatRequest(base, { enableThinkingSwitch: false }).logprobs).toBeUndefined();
  });

  it("response_format: a JSON schema our compiler expresses goes as a bounded EBNF grammar (canonical separators), any other passes through in web-llm's form", () => {
    const rf = { type: "json_object" as const, schema: '{"type":"object"}' };
    const sent = toChatRequest({ ...base, responseFormat: rf }, { enableThinkingSwitch: false }).response_format as { type: string; grammar: string };
    expect(sent.type).toBe("grammar");
    expect(sent.grammar).toMatch(/^root ::= j_object$/m);
    const hard = { type: "json_object" as const, schema: '{"type":"string","minLength":3}' };
    expect(toChatRequest({ ...base, responseFormat: hard }, { enableThinkingSwitch: false }).response_format).toEqual(hard);
  });

  it("the LogitProcessor is needed for top_k, min_p, top_logprobs > 5 and a reasoning budget", () => {
    expect(needsLogitProcessor(base)).toBe(false);
    expect(needsLogitProcessor({ ...base, topLogprobs: 5 })).toBe(false);
    expect(needsLogitProcessor({ ...base, topLogprobs: 6 })).toBe(true);
    expect(needsLogitProcessor({ ...base, sampling: { ...base.sampling, top_k: 40 } })).toBe(true);
    expect(needsLogitProcessor({ ...base, sampling: { ...base.sampling, min_p: 0.05 } })).toBe(true);
    expect(needsLogitProcessor({ ...base, thinking: { enabled: true, budgetTokens: 128, endMarker: "</think>" } })).toBe(true);
    expect(needsLogitProcessor({ ...base, thinking: { enabled: false, budgetTokens: 128, endMarker: "</think>" } })).toBe(false);
  });

  it("a final assistant message is continued through the completion API with the template's own rendering, left open", () => {
    const messages = [
      { role: "system" as const, content: "S" },
      { role: "user" as const, content: "Hi" },
      { role: "assistant" as const, content: "Hello, I am" },
    ];
    const prompt = renderContinuationPrompt(chatml, messages);
    expect(prompt).toBe("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello, I am");
    expect(renderContinuationPrompt(chatml, messages.slice(1))).toMatch(/^<\|im_start\|>system\nYou are a helpful assistant\.<\|im_end\|>\n/);
    expect(toCompletionRequest({ ...base, continueFinalMessage: true }, prompt)).toEqual({ prompt, stream: true, stream_options: { include_usage: true }, max_tokens: 3 });
    expect(() => renderContinuationPrompt(chatml, [{ role: "tool", content: "{}" }, messages[2]])).toThrow(/Role is not supported: tool/);
  });

  it("role_templates (e.g. a tool role added by conv_config) are applied", () => {
    const withTool: ConvTemplate = {
      ...chatml,
      roles: { ...chatml.roles, tool: "<|im_start|>user" },
      role_templates: { user: "{user_message}", assistant: "{assistant_message}", tool: "<tool_response>\n{tool_message}\n</tool_response>" },
    };
    expect(renderContinuationPrompt(withTool, [{ role: "tool", content: '{"ok":1}' }, { role: "assistant", content: "" }])).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<tool_response>\n{"ok":1}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
  });
});
