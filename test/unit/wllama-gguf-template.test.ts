/**
 * The GGUF's own chat template rendered by @huggingface/jinja
 * (src/engine/wllama/gguf-template.ts) and what it reads from the GGUF
 * (models/gguf-header.ts parseGgufTemplateInfo), in Node on the writer's
 * templates; the real-engine equality with llama.cpp's rendering is in
 * test/browser/wllama-jinja.test.ts.
 */
import { describe, expect, it } from "vitest";
import * as jinja from "@huggingface/jinja";
import { compileGgufTemplate, TemplateUnsupported, type TemplateTokens } from "../../src/engine/wllama/gguf-template.js";
import { GgufTruncated, parseGgufTemplateInfo } from "../../src/models/gguf-header.js";
import type { EngineMessage, EngineRequest } from "../../src/engine/types.js";
import { BOS_EOS_TEMPLATE, CHATML_TEMPLATE, FLOOR_DIVISION_TEMPLATE, MIN_FILTER_TEMPLATE, R1_STYLE_TEMPLATE, THINKING_SWITCH_TEMPLATE, writeTinyGguf } from "../support/gguf-writer.js";

const tokens: TemplateTokens = { bos: "<s>", eos: "</s>", addBos: false };
const turns: EngineMessage[] = [
  { role: "system", content: "be brief" },
  { role: "user", content: [{ type: "text", text: "hi" }] },
];
const request = (over: Partial<EngineRequest> = {}): EngineRequest => ({
  model: "m",
  messages: turns,
  sampling: { stop: [], max_tokens: 4 },
  thinking: { enabled: false },
  continueFinalMessage: false,
  ...over,
});
const render = (source: string, r: EngineRequest, t = tokens) => compileGgufTemplate(jinja, source, t).render(r);
const chatml = "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n";

describe("compileGgufTemplate", () => {
  it("every shaped message (text parts joined, tool turns too), then the generation prompt", () => {
    expect(render(CHATML_TEMPLATE, request())).toBe(`${chatml}<|im_start|>assistant\n`);
    const tool = request({ messages: [...turns, { role: "assistant", content: "<tool_call>x</tool_call>" }, { role: "tool", content: "42" }] });
    expect(render(CHATML_TEMPLATE, tool)).toBe(`${chatml}<|im_start|>assistant\n<tool_call>x</tool_call><|im_end|>\n<|im_start|>tool\n42<|im_end|>\n<|im_start|>assistant\n`);
  });

  it("enable_thinking: the request's for a switchable family, else false (llama-server's default when told nothing)", () => {
    const closed = `${chatml}<|im_start|>assistant\n<think>\n\n</think>\n\n`;
    expect(render(THINKING_SWITCH_TEMPLATE, request({ thinking: { enabled: true, switchable: true } }))).toBe(`${chatml}<|im_start|>assistant\n`);
    expect(render(THINKING_SWITCH_TEMPLATE, request({ thinking: { enabled: false, switchable: true } }))).toBe(closed);
    expect(render(THINKING_SWITCH_TEMPLATE, request({ thinking: { enabled: true } }))).toBe(closed);
  });

  it("bos_token and eos_token are the GGUF's; a leading BOS is dropped where tokenizing adds it (llama.cpp does the same)", () => {
    const withAssistant = request({ messages: [...turns, { role: "assistant", content: "ok" }, { role: "user", content: "more" }] });
    const text = render(BOS_EOS_TEMPLATE, withAssistant);
    expect(text.startsWith("<s><|im_start|>system")).toBe(true);
    expect(text).toContain("<|im_start|>assistant\nok</s><|im_end|>\n");
    expect(render(BOS_EOS_TEMPLATE, withAssistant, { ...tokens, addBos: true }).startsWith("<|im_start|>system")).toBe(true);
  });

  it("a template naming bos_token/eos_token whose text is unknown is left to llama.cpp", () => {
    expect(() => compileGgufTemplate(jinja, BOS_EOS_TEMPLATE, { addBos: false })).toThrow(TemplateUnsupported);
    expect(() => compileGgufTemplate(jinja, CHATML_TEMPLATE, { addBos: false })).not.toThrow();
  });

  it("continuing a final assistant message leaves it open after the generation prompt; an empty one is a new turn", () => {
    const open = request({ messages: [...turns, { role: "assistant", content: "the water" }], continueFinalMessage: true });
    expect(render(CHATML_TEMPLATE, open)).toBe(`${chatml}<|im_start|>assistant\nthe water`);
    const empty = request({ messages: [...turns, { role: "assistant", content: "" }], continueFinalMessage: true });
    expect(render(CHATML_TEMPLATE, empty)).toBe(`${chatml}<|im_start|>assistant\n`);
  });

  it("a generation prompt that opens a think block is closed before a continued message (llama-server's prefill)", () => {
    expect(render(R1_STYLE_TEMPLATE, request())).toBe(`${chatml}<|im_start|>assistant\n<think>\n`);
    const open = request({ messages: [...turns, { role: "assistant", content: "the water" }], continueFinalMessage: true });
    expect(render(R1_STYLE_TEMPLATE, open)).toBe(`${chatml}<|im_start|>assistant\n<think></think>the water`);
  });

  it("Jinja this engine cannot parse or render is TemplateUnsupported (the engine falls back to llama.cpp); what it renders, it renders", () => {
    expect(() => render(MIN_FILTER_TEMPLATE, request())).toThrow(TemplateUnsupported);
    expect(() => compileGgufTemplate(jinja, "{% do x.append(1) %}", tokens)).toThrow(/cannot parse/);
    expect(render(FLOOR_DIVISION_TEMPLATE, request())).toBe(`${chatml}<|im_start|>assistant\n`);
  });
});

describe("parseGgufTemplateInfo", () => {
  it("the chat template and the text of the asked tokens (the tiny vocabulary's BOS 1, EOS 4)", () => {
    const info = parseGgufTemplateInfo(writeTinyGguf({ chatTemplate: R1_STYLE_TEMPLATE }), [1, 4, 99999]);
    expect(info.chatTemplate).toBe(R1_STYLE_TEMPLATE);
    expect([...info.tokenTexts]).toEqual([[1, "<s>"], [4, "<|im_end|>"]]);
  });

  it("a prefix that ends inside the key-values asks for more", () => {
    expect(() => parseGgufTemplateInfo(writeTinyGguf().subarray(0, 300), [1])).toThrow(GgufTruncated);
  });
});
