/**
 * What the OpenAI API defines but a local model cannot serve: the types accept
 * it (so SDK-typed code compiles, see test/types/), and the request fails with
 * a 400 that names the param and says what to send instead. What can be
 * served in another form is (allowed_tools, refusals sent back).
 */
import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { ApiError } from "../../src/index.js";
import { scriptedClient, user } from "./support/client.js";

const base = { model: "Qwen3-0.6B", messages: [user("hi")] };
const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });

async function rejection(body: Record<string, unknown>): Promise<ApiError> {
  const { client, engine } = scriptedClient(() => "ok");
  const error = await client.chat.completions.create(body as never).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(engine.requests).toHaveLength(0);
  return error as ApiError;
}

describe("unservable parts, roles, tools and params → 400 naming them", () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ["audio part to a model that takes text only", { ...base, messages: [{ role: "user", content: [{ type: "text", text: "listen" }, { type: "input_audio", input_audio: { data: "AA", format: "wav" } }] }] }, "messages[0].content[1]", /input_audio.*takes text only/],
    ["file part in a user message", { ...base, messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-1" } }] }] }, "messages[0].content[0].type", /file/],
    ["refusal part in a user message", { ...base, messages: [{ role: "user", content: [{ type: "refusal", refusal: "no" }] }] }, "messages[0].content[0].type", /refusal/],
    ["legacy function role", { ...base, messages: [user("x"), { role: "function", name: "f", content: "42" }] }, "messages[1].role", /legacy `function` role/],
    ["assistant function_call", { ...base, messages: [user("x"), { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }, user("y")] }, "messages[1].function_call", /tool_calls/],
    ["assistant audio", { ...base, messages: [user("x"), { role: "assistant", content: null, audio: { id: "audio_1" } }, user("y")] }, "messages[1].audio", /audio/],
    ["custom tool call without its input", { ...base, messages: [user("x"), { role: "assistant", tool_calls: [{ id: "c1", type: "custom", custom: { name: "g" } }] }, user("y")] }, "messages[1].tool_calls[0]", /custom/],
    ["custom tool whose grammar cannot be enforced exactly", { ...base, tools: [fn("f"), { type: "custom", custom: { name: "g", format: { type: "grammar", grammar: { syntax: "regex", definition: "a(?=b)" } } } }] }, "tools[1].custom.format.grammar.definition", /lookahead/],
    ["custom tool_choice", { ...base, tools: [fn("f")], tool_choice: { type: "custom", custom: { name: "g" } } }, "tool_choice", /custom/],
    ["allowed_tools naming an undeclared tool", { ...base, tools: [fn("f")], tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [fn("g")] } } }, "tool_choice.allowed_tools.tools[0]", /not declared/],
    ["allowed_tools bad mode", { ...base, tools: [fn("f")], tool_choice: { type: "allowed_tools", allowed_tools: { mode: "sometimes", tools: [] } } }, "tool_choice.allowed_tools", /mode/],
    ["legacy functions", { ...base, functions: [{ name: "f", parameters: {} }] }, "functions", /tools/],
    ["legacy function_call", { ...base, function_call: "auto" }, "function_call", /tool_choice/],
    ["audio output", { ...base, audio: { voice: "alloy", format: "wav" } }, "audio", /text only/],
    ["audio modality", { ...base, modalities: ["text", "audio"] }, "modalities", /text only/],
    ["web search", { ...base, web_search_options: {} }, "web_search_options", /hosted/],
  ];
  it.each(cases)("%s", async (_label, body, param, says) => {
    const error = await rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toMatch(says);
  });
});

describe("accepted in another form", () => {
  it("SDK fields with no local meaning are ignored; modalities [\"text\"] is fine", async () => {
    const { client } = scriptedClient(() => "ok");
    const completion = await client.chat.completions.create({
      ...base,
      store: false,
      metadata: { app: "x" },
      service_tier: "auto",
      verbosity: "low",
      safety_identifier: "u",
      prompt_cache_retention: "24h",
      prediction: { type: "content", content: "ok" },
      modalities: ["text"],
      audio: null,
      stream_options: null,
    });
    expect(completion.choices[0].message.content).toBe("ok");
  });

  it("allowed_tools shows the model only the allowed tools, with its mode as the tool choice", async () => {
    const { client, engine } = scriptedClient(() => '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
    const completion = await client.chat.completions.create({
      ...base,
      tools: [fn("get_weather"), fn("send_email")] as never,
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_weather" } }] } },
    });
    const prompt = JSON.stringify(engine.requests[0].messages);
    expect(prompt).toContain("get_weather");
    expect(prompt).not.toContain("send_email");
    expect(completion.choices[0].finish_reason).toBe("tool_calls");
    const call = completion.choices[0].message.tool_calls?.[0].function;
    expect(call?.name).toBe("get_weather");
    expect(JSON.parse(call?.arguments ?? "")).toEqual({ city: "Paris" });
  });

  it("an assistant refusal sent back (field or part) is what the assistant said", async () => {
    const { client, engine } = scriptedClient(() => "ok");
    await client.chat.completions.create({ ...base, messages: [user("a"), { role: "assistant", content: null, refusal: "I can't help with that." }, user("b")] });
    await client.chat.completions.create({ ...base, messages: [user("a"), { role: "assistant", content: [{ type: "refusal", refusal: "No." }] }, user("b")] });
    expect(engine.requests[0].messages[1]).toMatchObject({ role: "assistant", content: "I can't help with that." });
    expect(engine.requests[1].messages[1]).toMatchObject({ role: "assistant", content: "No." });
  });
});

describe("through the unchanged OpenAI SDK on client.fetch", () => {
  it("an SDK-typed custom tool whose grammar cannot be enforced is a BadRequestError naming the construct, not retried", async () => {
    const { client, engine } = scriptedClient(() => "ok");
    let attempts = 0;
    const openai = new OpenAI({ baseURL: "http://localhost.webgpu/v1", apiKey: "local", fetch: (url: string | URL | Request, init?: RequestInit) => (attempts++, client.fetch(url, init)) });
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: "custom", custom: { name: "run_sql", format: { type: "grammar", grammar: { syntax: "lark", definition: 'start: "SELECT"i' } } } }];
    const error = await openai.chat.completions.create({ model: "Qwen3-0.6B", messages: [user("x")], tools }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: "tools[0].custom.format.grammar.definition", code: "unsupported_grammar" });
    expect((error as Error).message).toContain("case-insensitive");
    expect(attempts).toBe(1);
    expect(engine.requests).toHaveLength(0);
  });
});
