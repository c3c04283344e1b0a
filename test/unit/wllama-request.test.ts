/**
 * How the wllama engine hands a request to llama.cpp (engine/wllama/wllama-request.ts):
 * sampling field by field, and a 400 naming the parameter for what its first
 * slice does not do yet, instead of ignoring it. (The real engine runs in
 * test/browser/wllama-engine.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { EngineRequest } from "../../src/engine/types.js";
import { checkWllamaRequest, wllamaMessages, wllamaSampling } from "../../src/engine/wllama/wllama-request.js";

function request(over: Partial<EngineRequest> = {}, sampling: Partial<EngineRequest["sampling"]> = {}): EngineRequest {
  return {
    model: "tiny-gguf",
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "hello " }, { type: "text", text: "world" }] }],
    sampling: { stop: [], max_tokens: 32, ...sampling },
    thinking: { enabled: false },
    continueFinalMessage: false,
    ...over,
  };
}

describe("wllama request", () => {
  it("maps sampling to llama-server's names, only the fields set, with the prompt cache on", () => {
    const signal = new AbortController().signal;
    expect(wllamaSampling(request({}, { temperature: 0.5, top_p: 0.9, top_k: 40, min_p: 0.05, seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2, repetition_penalty: 1.1, stop: ["END"] }), signal)).toEqual({
      max_tokens: 32,
      abortSignal: signal,
      cache_prompt: true,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      repeat_penalty: 1.1,
      stop: ["END"],
    });
    expect(wllamaSampling(request(), signal)).toEqual({ max_tokens: 32, abortSignal: signal, cache_prompt: true });
  });

  it("a grammar response format reaches llama.cpp as GBNF (wllama's `grammar`); one GBNF cannot say is a 400", () => {
    const signal = new AbortController().signal;
    const format = { type: "grammar" as const, grammar: 'root ::= j_digits\nj_digits ::= [0-9\\-]+' };
    expect(() => checkWllamaRequest(request({ responseFormat: format }))).not.toThrow();
    expect(wllamaSampling(request({ responseFormat: format }), signal).grammar).toBe('root ::= j-digits\nj-digits ::= [0-9\\x2d]+');
    expect(() => wllamaSampling(request({ responseFormat: { type: "grammar", grammar: 'root ::= "a" (= "b")' } }), signal)).toThrow(expect.objectContaining({ status: 400, code: "unsupported_grammar", param: "response_format" }));
  });

  it("joins text parts into the message text llama.cpp's template renders", () => {
    expect(wllamaMessages(request())).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "hello world" }]);
  });

  it("refuses what this slice does not do, naming the parameter", () => {
    const cases: Array<[EngineRequest, string]> = [
      [request({ responseFormat: { type: "json_object", schema: "{}" } }), "response_format"],
      [request({ responseFormat: { type: "structural_tag", structural_tag: {} } }), "tool_choice"],
      [request({ topLogprobs: 2 }), "logprobs"],
      [request({}, { logit_bias: { "5": 10 } }), "logit_bias"],
      [request({ continueFinalMessage: true }), "messages"],
      [request({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA==" } }] }] }), "messages[0].content"],
      [request({ messages: [{ role: "user", content: "hi" }, { role: "tool", content: "42" }] }), "messages[1].role"],
    ];
    for (const [r, param] of cases) expect(() => checkWllamaRequest(r), param).toThrow(expect.objectContaining({ status: 400, code: "unsupported_on_engine", param }));
    expect(() => checkWllamaRequest(request())).not.toThrow();
  });
});
