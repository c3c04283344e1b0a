/**
 * Every request parameter of the contract: accepted values reach the engine
 * normalized; each invalid value is a 400 that names its `param`.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const base = { model: "Qwen3-0.6B", messages: [user("hi")] };

async function rejection(body: Record<string, unknown>): Promise<ApiError> {
  const { client } = scriptedClient(() => "ok");
  const error = await client.chat.completions.create(body as never).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("invalid values → 400 naming the param", () => {
  const cases: Array<[string, Record<string, unknown>, string | null]> = [
    ["body not an object", [] as unknown as Record<string, unknown>, null],
    ["model missing", { messages: [user("x")] }, "model"],
    ["model not a string", { ...base, model: 5 }, "model"],
    ["messages missing", { model: "Qwen3-0.6B" }, "messages"],
    ["messages empty", { ...base, messages: [] }, "messages"],
    ["messages not an array", { ...base, messages: "hi" }, "messages"],
    ["unknown role", { ...base, messages: [{ role: "wizard", content: "x" }] }, "messages[0].role"],
    ["message not an object", { ...base, messages: [42] }, "messages[0]"],
    ["user content missing", { ...base, messages: [{ role: "user" }] }, "messages[0].content"],
    ["tool without tool_call_id", { ...base, messages: [user("x"), { role: "tool", content: "r" }] }, "messages[1].tool_call_id"],
    ["remote image url", { ...base, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, "messages[0].content[0].image_url.url"],
    ["unknown part type", { ...base, messages: [{ role: "user", content: [{ type: "audio" }] }] }, "messages[0].content[0].type"],
    ["image in a system message", { ...base, messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] }, user("x")] }, "messages[0].content[0]"],
    ["max_tokens 0", { ...base, max_tokens: 0 }, "max_tokens"],
    ["max_tokens fractional", { ...base, max_tokens: 1.5 }, "max_tokens"],
    ["max_completion_tokens string", { ...base, max_completion_tokens: "10" }, "max_completion_tokens"],
    ["stream not boolean", { ...base, stream: "yes" }, "stream"],
    ["stream_options without stream", { ...base, stream_options: { include_usage: true } }, "stream_options"],
    ["include_usage not boolean", { ...base, stream: true, stream_options: { include_usage: 1 } }, "stream_options.include_usage"],
    ["temperature above 2", { ...base, temperature: 2.5 }, "temperature"],
    ["temperature NaN-like", { ...base, temperature: "hot" }, "temperature"],
    ["top_p above 1", { ...base, top_p: 1.5 }, "top_p"],
    ["top_k fractional", { ...base, top_k: 2.5 }, "top_k"],
    ["min_p negative", { ...base, min_p: -0.1 }, "min_p"],
    ["stop number", { ...base, stop: 5 }, "stop"],
    ["stop empty string", { ...base, stop: [""] }, "stop"],
    ["seed fractional", { ...base, seed: 1.25 }, "seed"],
    ["presence_penalty out of range", { ...base, presence_penalty: 3 }, "presence_penalty"],
    ["frequency_penalty out of range", { ...base, frequency_penalty: -3 }, "frequency_penalty"],
    ["logprobs not boolean", { ...base, logprobs: "true" }, "logprobs"],
    ["top_logprobs above 30", { ...base, top_logprobs: 31 }, "top_logprobs"],
    ["top_logprobs negative", { ...base, top_logprobs: -1 }, "top_logprobs"],
    ["tools not array", { ...base, tools: {} }, "tools"],
    ["tool without function", { ...base, tools: [{ type: "function" }] }, "tools[0]"],
    ["tool bad name", { ...base, tools: [{ type: "function", function: { name: "has space" } }] }, "tools[0].function.name"],
    ["tool parameters not object", { ...base, tools: [{ type: "function", function: { name: "f", parameters: "x" } }] }, "tools[0].function.parameters"],
    ["tool_choice unknown string", { ...base, tool_choice: "sometimes" }, "tool_choice"],
    ["tool_choice names undeclared tool", { ...base, tools: [{ type: "function", function: { name: "f" } }], tool_choice: { type: "function", function: { name: "g" } } }, "tool_choice"],
    ["tool_choice required without tools", { ...base, tool_choice: "required" }, "tool_choice"],
    ["parallel_tool_calls not boolean", { ...base, parallel_tool_calls: 1 }, "parallel_tool_calls"],
    ["response_format unknown type", { ...base, response_format: { type: "xml" } }, "response_format.type"],
    ["json_schema without object", { ...base, response_format: { type: "json_schema" } }, "response_format.json_schema"],
    ["reasoning_effort unknown", { ...base, reasoning_effort: "extreme" }, "reasoning_effort"],
    ["reasoning not object", { ...base, reasoning: "high" }, "reasoning"],
    ["reasoning.enabled not boolean", { ...base, reasoning: { enabled: "no" } }, "reasoning.enabled"],
    ["enable_thinking not boolean", { ...base, chat_template_kwargs: { enable_thinking: "no" } }, "chat_template_kwargs.enable_thinking"],
    ["prompt_cache_key not string", { ...base, prompt_cache_key: 7 }, "prompt_cache_key"],
    ["user not string", { ...base, user: {} }, "user"],
    ["provider not object", { ...base, provider: "local" }, "provider"],
    ["provider.require_features not array", { ...base, provider: { require_features: "shader-f16" } }, "provider.require_features"],
    ["n zero", { ...base, n: 0 }, "n"],
    ["n with stream", { ...base, n: 2, stream: true }, "n"],
    ["logit_bias bad key", { ...base, logit_bias: { abc: 1 } }, "logit_bias"],
    ["logit_bias over 1024 entries", { ...base, logit_bias: Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [String(i), 1])) }, "logit_bias"],
    ["user over 256 characters", { ...base, user: "u".repeat(257) }, "user"],
    ["user not a string beside a prompt_cache_key", { ...base, prompt_cache_key: "k", user: 7 }, "user"],
    ["prompt_cache_key over 64 characters", { ...base, prompt_cache_key: "k".repeat(65) }, "prompt_cache_key"],
  ];
  it.each(cases)("%s", async (_label, body, param) => {
    const error = await rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.type).toBe("invalid_request_error");
    expect(error.message.length).toBeGreaterThan(20);
  });

  it("unknown model → 404 model_not_found", async () => {
    const error = await rejection({ ...base, model: "gpt-17" });
    expect(error).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
  });

  it("too many images → 413", async () => {
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } };
    const error = await rejection({ ...base, messages: [{ role: "user", content: Array(9).fill(image) }] });
    expect(error.status).toBe(413);
  });

  it("an image to a text-only model → 400", async () => {
    const error = await rejection({ ...base, messages: [{ role: "user", content: [{ type: "text", text: "what" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }] });
    expect(error).toMatchObject({ status: 400, code: "unsupported_input" });
  });
});

describe("accepted values reach the engine", () => {
  it("maps sampling parameters, stop, seed and penalties", async () => {
    const { client, engine } = scriptedClient(() => "ok");
    await client.chat.completions.create({
      ...base,
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      stop: "END",
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_tokens: 33,
      unknown_openai_field: { anything: true },
    } as never);
    expect(engine.requests[0].sampling).toMatchObject({ temperature: 0.3, top_p: 0.9, top_k: 40, min_p: 0.05, stop: ["END"], seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5, max_tokens: 33 });
  });

  it("max_completion_tokens wins over max_tokens, and values above the window are reduced", async () => {
    const { client, engine } = scriptedClient(() => "ok");
    await client.chat.completions.create({ ...base, max_tokens: 10, max_completion_tokens: 20 });
    await client.chat.completions.create({ ...base, max_tokens: 1_000_000 });
    await client.chat.completions.create(base);
    expect(engine.requests.map((r) => r.sampling.max_tokens)).toEqual([20, 4096, 4096]);
  });

  it("top_logprobs above 0 turns logprobs on; logprobs alone reports the chosen token", async () => {
    const { client, engine } = scriptedClient(() => "a b");
    const withTop = await client.chat.completions.create({ ...base, top_logprobs: 12 });
    const plain = await client.chat.completions.create({ ...base, logprobs: true });
    const none = await client.chat.completions.create(base);
    expect(engine.requests.map((r) => r.topLogprobs)).toEqual([12, 0, undefined]);
    expect(withTop.choices[0].logprobs?.content?.[0].top_logprobs).toHaveLength(12);
    expect(plain.choices[0].logprobs?.content).toHaveLength(2);
    expect(none.choices[0].logprobs).toBeNull();
  });

  it("response_format json_object and json_schema become web-llm's string-schema form", async () => {
    const { client, engine } = scriptedClient(() => "{}");
    await client.chat.completions.create({ ...base, response_format: { type: "json_object" } });
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    await client.chat.completions.create({ ...base, response_format: { type: "json_schema", json_schema: { name: "c", schema } } });
    await client.chat.completions.create({ ...base, response_format: { type: "text" } });
    expect(engine.requests[0].responseFormat).toEqual({ type: "json_object", schema: '{"type":"object"}' });
    expect(engine.requests[1].responseFormat).toEqual({ type: "json_object", schema: JSON.stringify(schema) });
    expect(engine.requests[2].responseFormat).toBeUndefined();
  });

  it("content parts of text are flattened; developer becomes system", async () => {
    const { client, engine } = scriptedClient(() => "ok");
    await client.chat.completions.create({
      ...base,
      messages: [
        { role: "developer", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] },
      ],
    } as never);
    expect(engine.requests[0].messages[0]).toEqual({ role: "system", content: "be brief" });
    expect(engine.requests[0].messages[1]).toEqual({ role: "user", content: "one\ntwo" });
  });

  it("accepts prompt_cache_key, user, provider and n", async () => {
    const { client } = scriptedClient(() => "ok");
    const completion = await client.chat.completions.create({ ...base, prompt_cache_key: "conv-1", user: "u-1", provider: { require_local: true }, n: 3 });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(completion.usage.completion_tokens).toBe(3);
  });

  it("a final assistant message is continued, with thinking off", async () => {
    const { client, engine } = scriptedClient(() => " world");
    await client.chat.completions.create({ ...base, messages: [user("say hello world"), { role: "assistant", content: "hello" }], reasoning_effort: "high" });
    expect(engine.requests[0].continueFinalMessage).toBe(true);
    expect(engine.requests[0].thinking.enabled).toBe(false);
  });
});
