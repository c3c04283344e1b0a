/**
 * What the model sees is what the app sent (issue 15, items 1–2): the raw text
 * the host remembers for KV reuse replaces an assistant message only when it
 * renders to exactly that message (content, each call's id, name and
 * arguments, reasoning when sent), and only for the model that produced it.
 * Through createClient + the scripted engine; the prompt is read from the
 * engine's recorded requests.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const WEATHER = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const FORECAST = {
  type: "function" as const,
  function: { name: "get_forecast", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const QWEN25 = "Qwen2.5-0.5B-Instruct-q4f16_1-MLC";
const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const LLAMA = "Llama-3.2-1B-Instruct-q4f16_1-MLC";
const CALL_TEXT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

type Msg = Record<string, unknown>;

/** Turn 1 → the assistant message as an app sends it back (its calls as returned). */
async function firstTurn(model: string, reply: string, ...later: string[]) {
  const engine = createScriptedEngine({ replies: [reply, ...later] });
  const client = createClient({ worker: false, engine });
  const messages: Msg[] = [{ role: "user", content: "Weather in Paris?" }];
  const first = await client.chat.completions.create({ model, messages: messages as never, tools: [WEATHER, FORECAST] });
  const assistant = first.choices[0].message;
  return { engine, client, messages, assistant };
}

const assistantPrompt = (engine: ReturnType<typeof createScriptedEngine>, turn: number) =>
  engine.requests[turn].messages.filter((m) => m.role === "assistant").map((m) => m.content as string);

describe("remembered raw text is restored only when it is what the app sent back", () => {
  it("unchanged call: the raw text is restored and the KV cache is reused", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Sunny.");
    const callId = assistant.tool_calls![0].id;
    const second = await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, assistant, { role: "tool", tool_call_id: callId, content: "18C" }] as never,
    });
    expect(assistantPrompt(engine, 1)).toEqual([CALL_TEXT]);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("arguments edited by the app (Paris → Lyon): the prompt shows the app's call, not the remembered one", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Mild.");
    const edited = { ...assistant, tool_calls: assistant.tool_calls!.map((c) => ({ ...c, function: { ...c.function, arguments: '{"city": "Lyon"}' } })) };
    await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, edited, { role: "tool", tool_call_id: edited.tool_calls[0].id, content: "15C" }] as never,
    });
    const [prompt] = assistantPrompt(engine, 1);
    expect(prompt).toContain("Lyon");
    expect(prompt).not.toContain("Paris");
  });

  it("arguments edited in place on the returned message (in-process client): the prompt shows the edit", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Mild.");
    assistant.tool_calls![0].function!.arguments = '{"city": "Lyon"}';
    await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, assistant, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "15C" }] as never,
    });
    const [prompt] = assistantPrompt(engine, 1);
    expect(prompt).toContain("Lyon");
    expect(prompt).not.toContain("Paris");
  });

  it("a call renamed by the app: the prompt names the app's tool", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Rain tomorrow.");
    const renamed = { ...assistant, tool_calls: assistant.tool_calls!.map((c) => ({ ...c, function: { ...c.function, name: "get_forecast" } })) };
    await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, renamed, { role: "tool", tool_call_id: renamed.tool_calls[0].id, content: "rain" }] as never,
    });
    const [prompt] = assistantPrompt(engine, 1);
    expect(prompt).toContain("get_forecast");
    expect(prompt).not.toContain("get_weather");
  });

  it("arguments re-serialized without changing their value still restore the raw text", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Sunny.");
    const reserialized = { ...assistant, tool_calls: assistant.tool_calls!.map((c) => ({ ...c, function: { ...c.function, arguments: JSON.stringify(JSON.parse(c.function!.arguments)) } })) };
    const second = await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, reserialized, { role: "tool", tool_call_id: reserialized.tool_calls[0].id, content: "18C" }] as never,
    });
    expect(assistantPrompt(engine, 1)).toEqual([CALL_TEXT]);
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  });

  it("an extra call added by the app beside the remembered one: both calls are rendered", async () => {
    const { engine, client, messages, assistant } = await firstTurn(QWEN25, CALL_TEXT, "Both.");
    const extra = { id: "call_extra", type: "function" as const, function: { name: "get_forecast", arguments: '{"city": "Nice"}' } };
    const added = { ...assistant, tool_calls: [...assistant.tool_calls!, extra] };
    await client.chat.completions.create({
      model: QWEN25,
      tools: [WEATHER, FORECAST],
      messages: [...messages, added, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "18C" }, { role: "tool", tool_call_id: "call_extra", content: "20C" }] as never,
    });
    const [prompt] = assistantPrompt(engine, 1);
    expect(prompt).toContain("Nice");
  });

  it("reasoning sent back edited: the remembered text (with the model's reasoning) is not used", async () => {
    // Qwen3 keeps the reasoning of turns after the last user message (a tool round), so it would reach the prompt.
    const raw = '<think>\nThe user wants Paris.\n</think>\n\n' + CALL_TEXT;
    const send = async (reasoning: string | undefined) => {
      const { engine, client, messages, assistant } = await firstTurn(QWEN3, raw, "Sunny.");
      expect(assistant.reasoning_content).toBe("The user wants Paris.");
      const back = { ...assistant, reasoning_content: reasoning };
      const second = await client.chat.completions.create({
        model: QWEN3,
        tools: [WEATHER, FORECAST],
        messages: [...messages, back, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "18C" }] as never,
      });
      return { prompt: assistantPrompt(engine, 1)[0], cached: second.usage.prompt_tokens_details.cached_tokens };
    };
    const same = await send("The user wants Paris.");
    expect(same.prompt).toBe(raw);
    expect(same.cached).toBeGreaterThan(0);
    const absent = await send(undefined);
    expect(absent.prompt).toBe(raw);
    const edited = await send("The user wants Lyon.");
    expect(edited.prompt).not.toContain("The user wants Paris.");
    expect(edited.prompt).toContain('"Paris"');
  });
});

describe("the memory is per model", () => {
  it("a Qwen3 reply sent to Llama-3.2 reaches the Llama prompt in Llama's format, without Qwen markup", async () => {
    const raw = '<think>\nCheck the weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const { engine, client, messages, assistant } = await firstTurn(QWEN3, raw, "Sunny.");
    expect(assistant.tool_calls).toHaveLength(1);
    await client.chat.completions.create({
      model: LLAMA,
      tools: [WEATHER, FORECAST],
      messages: [...messages, assistant, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "18C" }] as never,
    });
    const [prompt] = assistantPrompt(engine, 1);
    expect(prompt).not.toContain("<think>");
    expect(prompt).not.toContain("<tool_call>");
    expect(JSON.parse(prompt)).toMatchObject({ name: "get_weather", parameters: { city: "Paris" } });
  });

  it("the reply is still restored for the model that wrote it after another model was used", async () => {
    const raw = '<think>\nCheck.\n</think>\n\n' + CALL_TEXT;
    const { engine, client, messages, assistant } = await firstTurn(QWEN3, raw, "Sunny.", "Still sunny.");
    const history = [...messages, assistant, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "18C" }];
    await client.chat.completions.create({ model: LLAMA, tools: [WEATHER, FORECAST], messages: history as never });
    expect(assistantPrompt(engine, 1)[0]).not.toContain("<think>");
    await client.chat.completions.create({ model: QWEN3, tools: [WEATHER, FORECAST], messages: history as never });
    expect(assistantPrompt(engine, 2)).toEqual([raw]);
  });
});

describe("the memory is per client (a shared worker's tab)", () => {
  it("a tab that sends another tab's conversation, reasoning dropped, does not get that tab's reasoning restored", async () => {
    const { EngineHost } = await import("../../src/host/engine-host.js");
    const raw = "<think>\nTab A's private plan.\n</think>\n\n" + CALL_TEXT;
    const engine = createScriptedEngine({ replies: [raw, "Sunny.", "Sunny."] });
    const host = new EngineHost({ engine });
    const messages: Msg[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await host.createChatCompletion({ model: QWEN3, messages, tools: [WEATHER, FORECAST] }, { client: "tab-1" });
    const assistant = first.choices[0].message;
    // The same visible conversation, without reasoning_content, as an app that drops it sends it.
    const back = { role: "assistant", content: assistant.content, tool_calls: assistant.tool_calls };
    const next = [...messages, back, { role: "tool", tool_call_id: assistant.tool_calls![0].id, content: "18C" }];
    await host.createChatCompletion({ model: QWEN3, messages: next, tools: [WEATHER, FORECAST] }, { client: "tab-2" });
    expect(assistantPrompt(engine, 1)[0]).not.toContain("private plan");
    expect(assistantPrompt(engine, 1)[0]).toContain('"Paris"');
    // The tab that received the reply gets it restored (and its KV reused).
    const own = await host.createChatCompletion({ model: QWEN3, messages: next, tools: [WEATHER, FORECAST] }, { client: "tab-1" });
    expect(assistantPrompt(engine, 2)[0]).toBe(raw);
    expect(own.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(first.usage.prompt_tokens);
  });

  it("Responses too: a chain's raw reply is restored only for the client that received it", async () => {
    const { EngineHost } = await import("../../src/host/engine-host.js");
    const raw = "<think>\nTab A's private plan.\n</think>\n\n" + CALL_TEXT;
    const engine = createScriptedEngine({ replies: [raw, "Sunny."] });
    const host = new EngineHost({ engine });
    const tools = [{ type: "function", name: "get_weather", parameters: WEATHER.function.parameters }];
    const first = await host.createResponse({ model: QWEN3, input: "Weather in Paris?", tools, store: false }, { client: "tab-1" });
    const call = first.output.find((item) => item.type === "function_call") as { call_id: string; name: string; arguments: string; id: string };
    const input = [
      { type: "message", role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: "18C" },
    ];
    await host.createResponse({ model: QWEN3, input, tools, store: false }, { client: "tab-2" });
    expect(assistantPrompt(engine, 1).join("")).not.toContain("private plan");
  });
});
