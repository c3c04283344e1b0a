/**
 * Every Responses request field: accepted values reach the engine request as
 * the chat face's do, every bad value → 400 naming its `param`, hosted-only
 * features → 400 saying they are not available on a local model.
 */
import { describe, expect, it } from "vitest";
import { scriptedClient } from "./support/client.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const fn = { type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } };
const base = { model: MODEL, input: "hi" };

const BAD: Array<[string, Record<string, unknown>, string]> = [
  ["model missing", { model: undefined }, "model"],
  ["model empty", { model: " " }, "model"],
  ["input wrong type", { input: 3 }, "input"],
  ["input empty array", { input: [] }, "input"],
  ["input item not an object", { input: ["x"] }, "input[0]"],
  ["unknown item type", { input: [{ type: "banana" }] }, "input[0].type"],
  ["message role", { input: [{ role: "tool", content: "x" }] }, "input[0].role"],
  ["message content missing", { input: [{ role: "user" }] }, "input[0].content"],
  ["content part type", { input: [{ role: "user", content: [{ type: "input_video" }] }] }, "input[0].content[0].type"],
  ["audio part without input_audio", { input: [{ role: "user", content: [{ type: "input_audio" }] }] }, "input[0].content[0].input_audio"],
  ["audio in an assistant message", { input: [{ role: "assistant", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }, { role: "user", content: "x" }] }, "input[0].content[0].type"],
  ["input_text without text", { input: [{ role: "user", content: [{ type: "input_text" }] }] }, "input[0].content[0].text"],
  ["remote image URL", { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }] }, "input[0].content[0].image_url"],
  ["image in a system message", { input: [{ role: "system", content: [{ type: "input_image", image_url: "data:image/png;base64,AA==" }] }] }, "input[0].content[0].type"],
  ["function_call without call_id", { input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
  ["function_call arguments not a string", { input: [{ type: "function_call", call_id: "c", name: "f", arguments: {} }] }, "input[0].arguments"],
  ["function_call_output without output", { input: [{ type: "function_call_output", call_id: "c" }] }, "input[0].output"],
  ["function_call_output with an image part", { input: [{ type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: "data:image/png;base64,AA==" }] }] }, "input[0].output[0]"],
  ["reasoning content part type", { input: [{ type: "reasoning", summary: [], content: [{ type: "text", text: "x" }] }, { role: "user", content: "x" }] }, "input[0].content[0]"],
  ["item_reference without id", { input: [{ type: "item_reference" }] }, "input[0].id"],
  ["instructions not a string", { instructions: 3 }, "instructions"],
  ["previous_response_id not a string", { previous_response_id: 3 }, "previous_response_id"],
  ["tools not an array", { tools: {} }, "tools"],
  ["tool type", { tools: [{ type: "frobnicate", name: "x" }] }, "tools[0].type"],
  ["custom tool grammar syntax", { tools: [{ type: "custom", name: "x", format: { type: "grammar", syntax: "ebnf", definition: "x" } }] }, "tools[0].format.syntax"],
  ["tool name", { tools: [{ type: "function", name: "bad name" }] }, "tools[0].name"],
  ["tool declared twice", { tools: [fn, fn] }, "tools[1].name"],
  ["tool parameters not an object", { tools: [{ ...fn, parameters: "x" }] }, "tools[0].parameters"],
  ["tool strict not boolean", { tools: [{ ...fn, strict: "yes" }] }, "tools[0].strict"],
  ["tool_choice value", { tool_choice: "sometimes", tools: [fn] }, "tool_choice"],
  ["tool_choice required without tools", { tool_choice: "required" }, "tool_choice"],
  ["tool_choice names an undeclared function", { tool_choice: { type: "function", name: "nope" }, tools: [fn] }, "tool_choice.name"],
  ["allowed_tools mode", { tool_choice: { type: "allowed_tools", mode: "sometimes", tools: [{ type: "function", name: "get_weather" }] }, tools: [fn] }, "tool_choice.mode"],
  ["parallel_tool_calls not boolean", { parallel_tool_calls: "yes" }, "parallel_tool_calls"],
  ["text not an object", { text: "json" }, "text"],
  ["text.format.type", { text: { format: { type: "yaml" } } }, "text.format.type"],
  ["json_schema without schema", { text: { format: { type: "json_schema", name: "x" } } }, "text.format.schema"],
  ["json_schema name", { text: { format: { type: "json_schema", name: "a b", schema: {} } } }, "text.format.name"],
  ["text.verbosity", { text: { verbosity: "loud" } }, "text.verbosity"],
  ["reasoning not an object", { reasoning: "high" }, "reasoning"],
  ["reasoning.effort", { reasoning: { effort: "extreme" } }, "reasoning.effort"],
  ["reasoning.summary", { reasoning: { summary: "long" } }, "reasoning.summary"],
  ["max_output_tokens zero", { max_output_tokens: 0 }, "max_output_tokens"],
  ["max_output_tokens fractional", { max_output_tokens: 1.5 }, "max_output_tokens"],
  ["max_tool_calls zero", { max_tool_calls: 0 }, "max_tool_calls"],
  ["temperature too high", { temperature: 3 }, "temperature"],
  ["top_p too high", { top_p: 1.5 }, "top_p"],
  ["presence_penalty out of range", { presence_penalty: 5 }, "presence_penalty"],
  ["top_logprobs too high", { top_logprobs: 21 }, "top_logprobs"],
  ["truncation value", { truncation: "middle" }, "truncation"],
  ["store not boolean", { store: "yes" }, "store"],
  ["background without store", { background: true, store: false }, "background"],
  ["background not boolean", { background: "yes" }, "background"],
  ["metadata not an object", { metadata: [] }, "metadata"],
  ["metadata value not a string", { metadata: { a: 1 } }, "metadata.a"],
  ["metadata too many keys", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, "metadata"],
  ["prompt_cache_key too long", { prompt_cache_key: "x".repeat(65) }, "prompt_cache_key"],
  ["safety_identifier too long", { safety_identifier: "x".repeat(65) }, "safety_identifier"],
  ["user not a string", { user: 3 }, "user"],
  ["stream not boolean", { stream: "yes" }, "stream"],
  ["stream_options without stream", { stream_options: { include_obfuscation: false } }, "stream_options"],
  ["include not an array", { include: "x" }, "include"],
  ["include unknown value", { include: ["everything"] }, "include[0]"],
];

const HOSTED: Array<[string, Record<string, unknown>, string]> = [
  ["web_search tool", { tools: [{ type: "web_search" }] }, "tools[0].type"],
  ["web_search_preview tool", { tools: [{ type: "web_search_preview" }] }, "tools[0].type"],
  ["file_search tool", { tools: [{ type: "file_search", vector_store_ids: ["x"] }] }, "tools[0].type"],
  ["code_interpreter tool", { tools: [{ type: "code_interpreter", container: { type: "auto" } }] }, "tools[0].type"],
  ["computer_use_preview tool", { tools: [{ type: "computer_use_preview" }] }, "tools[0].type"],
  ["conversation", { conversation: "conv_1" }, "conversation"],
  ["hosted include", { include: ["file_search_call.results"] }, "include[0]"],
  ["input_file part", { input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] }, "input[0].content[0].type"],
];

describe("bad values → 400 naming the param", () => {
  for (const [label, patch, param] of BAD) {
    it(label, async () => {
      const { client, engine } = scriptedClient(["never"]);
      const body = { ...base, ...patch };
      await expect(client.responses.create(body as never)).rejects.toMatchObject({ status: 400, type: "invalid_request_error", param });
      expect(engine.requests).toHaveLength(0);
    });
  }
});

describe("hosted-only features → 400 saying they are not available on a local model", () => {
  for (const [label, patch, param] of HOSTED) {
    it(label, async () => {
      const { client } = scriptedClient(["never"]);
      const error = await client.responses.create({ ...base, ...patch } as never).catch((e) => e);
      expect(error).toMatchObject({ status: 400, param, code: "unsupported_on_local_model" });
      expect(error.message).toContain("not available on a local model");
    });
  }
});

describe("accepted values reach the engine as the chat face's do", () => {
  it("sampling, limits and the cache key", async () => {
    const { client, engine } = scriptedClient(["ok"]);
    const response = await client.responses.create({ ...base, temperature: 0.3, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: -0.5, max_output_tokens: 77, prompt_cache_key: "k", safety_identifier: "s", user: "u", truncation: "auto", stream_options: undefined });
    expect(engine.requests[0].sampling).toMatchObject({ temperature: 0.3, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: -0.5, max_tokens: 77 });
    expect(response).toMatchObject({ temperature: 0.3, top_p: 0.9, max_output_tokens: 77, prompt_cache_key: "k", safety_identifier: "s", user: "u", truncation: "auto" });
  });

  it("text.format json_schema and json_object go to the grammar as chat's response_format", async () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { client, engine } = scriptedClient(['{"answer": "4"}', "{}"]);
    const response = await client.responses.create({ ...base, text: { format: { type: "json_schema", name: "answer", schema, strict: true } } });
    expect(engine.requests[0].responseFormat).toEqual({ type: "json_object", schema: JSON.stringify(schema) });
    expect(response.text).toEqual({ format: { type: "json_schema", name: "answer", schema, strict: true } });
    expect(JSON.parse(response.output_text as string)).toEqual({ answer: "4" });
    await client.responses.create({ ...base, text: { format: { type: "json_object" } } });
    expect(engine.requests[1].responseFormat).toEqual({ type: "json_object", schema: '{"type":"object"}' });
  });

  it("tool_choice required / named / allowed_tools constrain like chat's; none hides the tools", async () => {
    const other = { type: "function", name: "get_time", parameters: { type: "object", properties: {} } };
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>';
    const { client, engine } = scriptedClient([call, call, call, "plain"]);
    await client.responses.create({ ...base, tools: [fn, other], tool_choice: "required" } as never);
    expect(engine.requests[0].responseFormat).toBeDefined();
    const named = await client.responses.create({ ...base, tools: [fn, other], tool_choice: { type: "function", name: "get_weather" } } as { model: string });
    expect(named.tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(JSON.stringify(engine.requests[1].responseFormat)).toContain("get_weather");
    const allowed = await client.responses.create({ ...base, tools: [fn, other], tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "get_weather" }] } } as { model: string });
    expect(allowed.output.some((i) => i.type === "function_call")).toBe(true);
    expect(JSON.stringify(engine.requests[2].messages)).not.toContain("get_time");
    await client.responses.create({ ...base, tools: [fn], tool_choice: "none" } as never);
    expect(JSON.stringify(engine.requests[3].messages)).not.toContain("get_weather");
  });

  it("reasoning.effort maps as chat's reasoning_effort (none turns thinking off)", async () => {
    const { client, engine } = scriptedClient(["a", "b"]);
    await client.responses.create({ model: QWEN3, input: "x", reasoning: { effort: "none" } });
    expect(engine.requests[0].thinking).toEqual({ enabled: false, switchable: true });
    await client.responses.create({ model: QWEN3, input: "x", reasoning: { effort: "low" } });
    expect(engine.requests[1].thinking).toMatchObject({ enabled: true, budgetTokens: 512 });
  });

  it("include message.output_text.logprobs (with top_logprobs) puts logprobs on the output_text part", async () => {
    const { client, engine } = scriptedClient(["Hello there."]);
    const response = await client.responses.create({ ...base, include: ["message.output_text.logprobs"], top_logprobs: 2 });
    expect(engine.requests[0].topLogprobs).toBe(2);
    const part = (response.output[0] as { content: { logprobs: { token: string; top_logprobs: unknown[] }[] }[] }).content[0];
    expect(part.logprobs.map((l) => l.token).join("")).toBe("Hello there.");
    expect(part.logprobs[0].top_logprobs).toHaveLength(2);
    expect(response.top_logprobs).toBe(2);
  });

  it("an image as a data URL reaches a vision model; a text model refuses images", async () => {
    const image = "data:image/png;base64,iVBORw0KGgo=";
    const { client, engine } = scriptedClient(["A cat."]);
    await client.responses.create({ model: "Phi-3.5-vision-instruct-q4f16_1-MLC", input: [{ role: "user", content: [{ type: "input_text", text: "What?" }, { type: "input_image", image_url: image }] }] });
    expect(JSON.stringify(engine.requests[0].messages)).toContain(image);
    await expect(client.responses.create({ ...base, input: [{ role: "user", content: [{ type: "input_image", image_url: image }] }] })).rejects.toMatchObject({ status: 400, param: "input[0].content[0]", code: "unsupported_input" });
  });

  it("a prompt longer than the context window → 400 context_length_exceeded naming input (streamed or not)", async () => {
    const { client } = scriptedClient(["never"]);
    const long = "word ".repeat(40_000);
    await expect(client.responses.create({ ...base, input: long })).rejects.toMatchObject({ status: 400, code: "context_length_exceeded", param: "input" });
    await expect(client.responses.create({ ...base, input: long, stream: true })).rejects.toMatchObject({ status: 400, code: "context_length_exceeded", param: "input" });
  });

  it("truncation auto drops the oldest turns until the prompt fits; disabled fails", async () => {
    const long = "word ".repeat(20_000);
    const input = [
      { role: "user", content: long },
      { role: "assistant", content: "ok" },
      { role: "user", content: long },
      { role: "assistant", content: "ok" },
      { role: "user", content: "the question" },
    ];
    const { client, engine } = scriptedClient(["answer", "answer"]);
    await expect(client.responses.create({ ...base, instructions: "Be brief.", input })).rejects.toMatchObject({ code: "context_length_exceeded" });
    const response = await client.responses.create({ ...base, instructions: "Be brief.", input, truncation: "auto" });
    expect(response.output_text).toBe("answer");
    const sent = engine.requests.at(-1)?.messages ?? [];
    expect(String(sent[0].content)).toContain("Be brief.");
    expect(JSON.stringify(sent)).not.toContain("word word");
    expect(sent.at(-1)?.content).toContain("the question");
    const streamed = await client.responses.create({ ...base, input, truncation: "auto", stream: true });
    let text = "";
    for await (const e of streamed) if (e.type === "response.output_text.delta") text += e.delta;
    expect(text).toBe("answer");
  });

  it("reasoning items sent back are accepted (with reasoning_text content or summary only)", async () => {
    const { client } = scriptedClient(["ok"]);
    const response = await client.responses.create({
      model: QWEN3,
      input: [
        { role: "user", content: "hi" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "s" }], content: [{ type: "reasoning_text", text: "thinking" }] },
        { role: "assistant", content: [{ type: "output_text", text: "hello" }] },
        { role: "user", content: "again" },
      ],
    });
    expect(response.status).toBe("completed");
  });
});
