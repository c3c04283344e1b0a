/**
 * Tool results must pair with tool calls, as the hosted API requires: an app
 * that works here must not break when it points at a hosted server (the remote
 * fallback makes that a real path). Chat: a `tool` message answering no call
 * of the assistant message before it, and an assistant message with
 * `tool_calls` not followed by one tool message per call id, → 400 with
 * `param` `messages.[i].role` (the hosted API's form, dot included). Responses:
 * a `function_call_output` whose `call_id` matches no `function_call` in the
 * input or the `previous_response_id` chain → 400 "No tool call found for
 * function call output with call_id …" (`param` `input`). Through createClient
 * and client.fetch, scripted engine; no engine request is made for a refused one.
 */
import { describe, expect, it } from "vitest";
import { refusal, scriptedClient } from "./support/client.js";

const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const BASE = "http://localhost.webgpu/v1";
const post = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const call = (id: string, city = "Paris") => ({ id, type: "function" as const, function: { name: "get_weather", arguments: JSON.stringify({ city }) } });
const answer = (id: string, content = "sunny") => ({ role: "tool" as const, tool_call_id: id, content });

describe("chat: tool messages pair with the assistant's tool_calls", () => {
  it("a tool message with no assistant tool_calls before it → 400 messages.[1].role, naming its tool_call_id; nothing runs", async () => {
    const { client, engine } = scriptedClient(["Hi."]);
    const error = await refusal(client.chat.completions.create({ model: QWEN25, tools, messages: [{ role: "user", content: "weather?" }, answer("call_orphan")] }));
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", param: "messages.[1].role", code: null });
    expect(error.message).toMatch(/messages with role 'tool' must be a response to a preceed?ing message with 'tool_calls'/);
    expect(error.message).toContain("call_orphan");
    expect(engine.requests).toHaveLength(0);
  });

  it("a tool message after a user message (the call's turn already closed) is an orphan too", async () => {
    const { client } = scriptedClient(["Hi."]);
    const messages = [{ role: "user" as const, content: "weather?" }, { role: "assistant" as const, content: null, tool_calls: [call("call_a")] }, answer("call_a"), { role: "user" as const, content: "and again" }, answer("call_a")];
    const error = await refusal(client.chat.completions.create({ model: QWEN25, tools, messages }));
    expect(error).toMatchObject({ status: 400, param: "messages.[4].role" });
  });

  it("a tool message answering an id the assistant did not call → 400 at that message, naming the id", async () => {
    const { client } = scriptedClient(["Hi."]);
    const messages = [{ role: "user" as const, content: "weather?" }, { role: "assistant" as const, content: null, tool_calls: [call("call_a")] }, answer("call_zzz")];
    const error = await refusal(client.chat.completions.create({ model: QWEN25, tools, messages }));
    expect(error).toMatchObject({ status: 400, param: "messages.[2].role" });
    expect(error.message).toContain("call_zzz");
  });

  it("tool_calls followed by a user message instead of the answers → 400 at that message, naming every unanswered id", async () => {
    const { client, engine } = scriptedClient(["Hi."]);
    const messages = [{ role: "user" as const, content: "weather?" }, { role: "assistant" as const, content: null, tool_calls: [call("call_a"), call("call_b", "Rome"), call("call_c", "Oslo")] }, answer("call_b"), { role: "user" as const, content: "well?" }];
    const error = await refusal(client.chat.completions.create({ model: QWEN25, tools, messages }));
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", param: "messages.[3].role", code: null });
    expect(error.message).toMatch(/An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'\. The following tool_call_ids did not have response messages: call_a, call_c/);
    expect(engine.requests).toHaveLength(0);
  });

  it("tool_calls as the last message (no answers at all) → 400 naming the ids", async () => {
    const { client } = scriptedClient(["Hi."]);
    const messages = [{ role: "user" as const, content: "weather?" }, { role: "assistant" as const, content: null, tool_calls: [call("call_a")] }];
    const error = await refusal(client.chat.completions.create({ model: QWEN25, tools, messages }));
    expect(error).toMatchObject({ status: 400, param: "messages.[1].role" });
    expect(error.message).toContain("call_a");
  });

  it("parallel calls answered in any order, then a new user turn, are accepted", async () => {
    const { client, engine } = scriptedClient(["Sunny in both."]);
    const messages = [
      { role: "user" as const, content: "weather?" },
      { role: "assistant" as const, content: null, tool_calls: [call("call_a"), call("call_b", "Rome")] },
      answer("call_b", "warm"),
      answer("call_a", "sunny"),
      { role: "assistant" as const, content: "Sunny in Paris, warm in Rome." },
      { role: "user" as const, content: "thanks" },
    ];
    const completion = await client.chat.completions.create({ model: QWEN25, tools, messages });
    expect(completion.choices[0].message.content).toBe("Sunny in both.");
    expect(engine.requests).toHaveLength(1);
  });

  it("client.fetch answers the OpenAI error body with status 400, streamed or not", async () => {
    const { client } = scriptedClient(["Hi."]);
    for (const stream of [false, true]) {
      const response = await client.fetch(`${BASE}/chat/completions`, post({ model: QWEN25, stream, messages: [{ role: "user", content: "weather?" }, answer("call_x")] }));
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ type: "invalid_request_error", param: "messages.[1].role", code: null });
    }
  });
});

describe("responses: function_call_output pairs with a function_call", () => {
  const fnTools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];
  const fc = (callId: string) => ({ type: "function_call" as const, call_id: callId, name: "get_weather", arguments: '{"city":"Paris"}' });
  const out = (callId: string) => ({ type: "function_call_output" as const, call_id: callId, output: "sunny" });

  it("an output whose call_id no function_call in the input names → 400 'No tool call found …' (param input); nothing runs", async () => {
    const { client, engine } = scriptedClient(["Hi."]);
    const error = await refusal(client.responses.create({ model: QWEN25, tools: fnTools, input: [{ role: "user", content: "weather?" }, fc("call_a"), out("call_nope")] }));
    expect(error).toMatchObject({ status: 400, type: "invalid_request_error", param: "input", code: null, message: "No tool call found for function call output with call_id call_nope." });
    expect(engine.requests).toHaveLength(0);
  });

  it("an output answering a call of the previous_response_id chain is accepted; one answering none of it → 400", async () => {
    const raw = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const { client } = scriptedClient([raw, "Sunny.", raw]);
    const first = await client.responses.create({ model: QWEN25, tools: fnTools, input: "weather?" });
    const callId = (first.output.find((item) => item.type === "function_call") as { call_id: string }).call_id;
    const second = await client.responses.create({ model: QWEN25, tools: fnTools, previous_response_id: first.id, input: [out(callId)] });
    expect(second.output_text).toBe("Sunny.");
    // Two turns further back in the chain still counts.
    const third = await client.responses.create({ model: QWEN25, tools: fnTools, previous_response_id: second.id, input: "and tomorrow?" });
    const error = await refusal(client.responses.create({ model: QWEN25, tools: fnTools, previous_response_id: third.id, input: [out("call_elsewhere")] }));
    expect(error).toMatchObject({ status: 400, param: "input", message: "No tool call found for function call output with call_id call_elsewhere." });
  });

  it("client.fetch: 400 with the OpenAI error body, streamed or not", async () => {
    const { client } = scriptedClient(["Hi."]);
    for (const stream of [false, true]) {
      const response = await client.fetch(`${BASE}/responses`, post({ model: QWEN25, stream, input: [{ role: "user", content: "hi" }, out("call_q")] }));
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatchObject({ message: "No tool call found for function call output with call_id call_q.", param: "input", type: "invalid_request_error" });
    }
  });
});
