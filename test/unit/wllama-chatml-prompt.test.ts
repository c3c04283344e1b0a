/**
 * Which GGUF records get their prompts rendered by us (a ChatML family named
 * in `record.family`) and the text they get; the real-engine counts are in
 * test/browser/wllama-engine.test.ts.
 */
import { describe, expect, it } from "vitest";
import { chatmlPrompt, chatmlShapeOf } from "../../src/engine/wllama/chatml-prompt.js";
import type { EngineRequest } from "../../src/engine/types.js";

const request = (thinking: boolean): EngineRequest => ({
  model: "m",
  messages: [
    { role: "system", content: "# Tools\n<tools>get_weather</tools>" },
    { role: "user", content: [{ type: "text", text: "hi" }] },
  ],
  sampling: { stop: [], max_tokens: 4 },
  thinking: { enabled: thinking },
  continueFinalMessage: false,
});

describe("chatmlShapeOf", () => {
  it("ChatML families named by the record are ours; no family or another family keeps the GGUF's template", () => {
    expect(chatmlShapeOf({ family: "qwen3" })).toEqual({ family: "qwen3", thinkingOffPrefill: "<think>\n\n</think>\n\n" });
    expect(chatmlShapeOf({ family: "qwen2.5" })).toEqual({ family: "qwen2.5" });
    expect(chatmlShapeOf({ family: "hermes" })).toEqual({ family: "hermes" });
    expect(chatmlShapeOf({})).toBeUndefined();
    expect(chatmlShapeOf({ family: "llama-3.1" })).toBeUndefined();
    expect(chatmlShapeOf({ family: "prompted" })).toBeUndefined();
  });
});

describe("chatmlPrompt", () => {
  it("every shaped message as a ChatML turn, then the assistant header", () => {
    expect(chatmlPrompt(request(true), { family: "qwen3", thinkingOffPrefill: "<think>\n\n</think>\n\n" })).toBe(
      "<|im_start|>system\n# Tools\n<tools>get_weather</tools><|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    );
  });
  it("thinking off: Qwen3's empty think block after the header; families without one add nothing", () => {
    expect(chatmlPrompt(request(false), { family: "qwen3", thinkingOffPrefill: "<think>\n\n</think>\n\n" })).toMatch(/<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/);
    expect(chatmlPrompt(request(false), { family: "hermes" })).toMatch(/<\|im_start\|>assistant\n$/);
  });
  it("continuing a final assistant message leaves its turn open, its text last (no new header, no thinking-off block)", () => {
    const open: EngineRequest = { ...request(false), messages: [...request(false).messages, { role: "assistant", content: "the water" }], continueFinalMessage: true };
    expect(chatmlPrompt(open, { family: "qwen3", thinkingOffPrefill: "<think>\n\n</think>\n\n" })).toBe(
      "<|im_start|>system\n# Tools\n<tools>get_weather</tools><|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nthe water",
    );
  });
});
