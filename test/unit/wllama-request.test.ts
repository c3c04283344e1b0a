/**
 * How the wllama engine hands a request to llama.cpp (engine/wllama/wllama-request.ts):
 * sampling field by field, and a 400 naming the parameter for what its first
 * slice does not do yet, instead of ignoring it. (The real engine runs in
 * test/browser/wllama-engine.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { EngineRequest } from "../../src/engine/types.js";
import { chatLogprobs, checkWllamaRequest, continuedText, rawLogprobs, wllamaMessages, wllamaSampling } from "../../src/engine/wllama/wllama-request.js";
import { tokenLogprobsOf } from "../../src/engine/wllama/wllama-logprobs.js";

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

  it("continuing a final assistant message: the messages end with it (llama-server continues it), an empty one is left out", () => {
    const open = request({ continueFinalMessage: true, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "the water" }] });
    expect(() => checkWllamaRequest(open)).not.toThrow();
    expect(wllamaMessages(open)).toEqual([{ role: "user", content: "hi" }, { role: "assistant", content: "the water" }]);
    expect(continuedText(wllamaMessages(open), open)).toBe("the water");
    const empty = request({ continueFinalMessage: true, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "" }] });
    expect(wllamaMessages(empty)).toEqual([{ role: "user", content: "hi" }]);
    expect(continuedText(wllamaMessages(empty), empty)).toBeUndefined();
    expect(continuedText(wllamaMessages(request()), request())).toBeUndefined();
  });

  it("refuses what this slice does not do, naming the parameter", () => {
    const cases: Array<[EngineRequest, string]> = [
      [request({ responseFormat: { type: "json_object", schema: "{}" } }), "response_format"],
      [request({ responseFormat: { type: "structural_tag", structural_tag: {} } }), "tool_choice"],
      [request({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA==" } }] }] }), "messages[0].content"],
    ];
    for (const [r, param] of cases) expect(() => checkWllamaRequest(r), param).toThrow(expect.objectContaining({ status: 400, code: "unsupported_on_engine", param }));
    expect(() => checkWllamaRequest(request())).not.toThrow();
  });

  it("logit_bias reaches llama.cpp as OpenAI's token-id map; an id outside the model's vocabulary is a 400 naming logit_bias", () => {
    const signal = new AbortController().signal;
    expect(wllamaSampling(request({}, { logit_bias: { "5": 10, "300": -100 } }), signal).logit_bias).toEqual({ "5": 10, "300": -100 });
    expect(() => checkWllamaRequest(request({}, { logit_bias: { "367": 5 } }), 368)).not.toThrow();
    expect(() => checkWllamaRequest(request({}, { logit_bias: { "5": 1, "368": 5 } }), 368)).toThrow(expect.objectContaining({ status: 400, param: "logit_bias", message: expect.stringContaining("token 368, outside tiny-gguf's vocabulary (token ids 0 to 367)") }));
  });

  it("logprobs: llama.cpp is asked for at least one alternative (with n_probs 0 it reports none), in each endpoint's form", () => {
    expect(chatLogprobs(request())).toEqual({});
    expect(rawLogprobs(request())).toEqual({});
    expect(chatLogprobs(request({ topLogprobs: 0 }))).toEqual({ logprobs: true, top_logprobs: 1 });
    expect(rawLogprobs(request({ topLogprobs: 0 }))).toEqual({ logprobs: 1 });
    expect(chatLogprobs(request({ topLogprobs: 7 }))).toEqual({ logprobs: true, top_logprobs: 7 });
    expect(rawLogprobs(request({ topLogprobs: 7 }))).toEqual({ logprobs: 7 });
  });

  it("a chunk's logprobs keep the asked number of alternatives, bytes from the text where llama.cpp gives none", () => {
    const chunk = { content: [{ id: 9, token: " the", logprob: -0.5, bytes: [32, 116, 104, 101], top_logprobs: [{ id: 9, token: " the", logprob: -0.5, bytes: [32, 116, 104, 101] }, { id: 4, token: "a", logprob: -1.5 }] }] };
    expect(tokenLogprobsOf(chunk, 0)).toEqual([{ token: " the", logprob: -0.5, bytes: [32, 116, 104, 101], top_logprobs: [] }]);
    expect(tokenLogprobsOf(chunk, 2)?.[0].top_logprobs).toEqual([{ token: " the", logprob: -0.5, bytes: [32, 116, 104, 101] }, { token: "a", logprob: -1.5, bytes: [97] }]);
    expect(tokenLogprobsOf(null, 2)).toBeUndefined();
    expect(tokenLogprobsOf({ content: [] }, 2)).toBeUndefined();
  });

  it("tool turns (the family's shaped results) reach llama.cpp's template as `tool` messages", () => {
    const messages: EngineRequest["messages"] = [{ role: "user", content: "hi" }, { role: "assistant", content: "<tool_call>x</tool_call>" }, { role: "tool", content: "<tool_response>\n42\n</tool_response>" }];
    expect(() => checkWllamaRequest(request({ messages }))).not.toThrow();
    expect(wllamaMessages(request({ messages }))).toEqual(messages);
  });
});
