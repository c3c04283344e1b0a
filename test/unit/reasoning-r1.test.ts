/**
 * DeepSeek-R1 distills were trained on a prompt that opens `<think>` for them
 * (the official template's generation prompt ends `<｜Assistant｜><think>\n`),
 * so they often write only `</think>`. As vLLM's R1 parser does, everything
 * before `</think>` is reasoning, a `<think>` the model writes anyway is
 * accepted, and a raw `</think>` never reaches content (issue 15, item 3).
 * Through createClient + the scripted engine, streamed and not.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const R1 = "DeepSeek-R1-Distill-Qwen-7B-q4f16_1-MLC";

async function both(reply: string, extra: Record<string, unknown> = {}) {
  const engine = createScriptedEngine({ replies: [reply, reply] });
  const client = createClient({ worker: false, engine });
  const body = { model: R1, messages: [{ role: "user" as const, content: "hi" }], ...extra };
  const message = (await client.chat.completions.create(body)).choices[0].message;
  const stream = (await client.chat.completions.create({ ...body, stream: true })) as AsyncIterable<ChatCompletionChunk>;
  let content = "";
  let reasoning = "";
  for await (const chunk of stream) {
    content += chunk.choices[0]?.delta.content ?? "";
    reasoning += chunk.choices[0]?.delta.reasoning_content ?? "";
  }
  return { content: message.content, reasoning: message.reasoning_content ?? null, streamed: { content, reasoning } };
}

describe("DeepSeek-R1 reasoning without the opening tag", () => {
  it("`This is reasoning</think>This is the rest`: reasoning, then content", async () => {
    const r = await both("This is reasoning</think>This is the rest");
    expect(r).toEqual({ content: "This is the rest", reasoning: "This is reasoning", streamed: { content: "This is the rest", reasoning: "This is reasoning" } });
  });

  it("`</think>Hi`: content `Hi`, no reasoning", async () => {
    const r = await both("</think>Hi");
    expect(r.content).toBe("Hi");
    expect(r.reasoning).toBeNull();
    expect(r.streamed).toEqual({ content: "Hi", reasoning: "" });
  });

  it("a `<think>` the model writes itself is still the opener", async () => {
    const r = await both("<think>\nLet me see.\n</think>\n\nFour.");
    expect(r).toEqual({ content: "Four.", reasoning: "Let me see.", streamed: { content: "Four.", reasoning: "Let me see." } });
  });

  it("thinking asked off (R1 cannot turn it off): the block is still split, never shown as content", async () => {
    const r = await both("Quick thought.</think>\n\nAnswer.", { reasoning_effort: "none" });
    expect(r.content).toBe("Answer.");
    expect(r.content).not.toContain("</think>");
    expect(r.streamed.content).not.toContain("</think>");
  });

  it("output cut before `</think>` is reasoning (the answer never started)", async () => {
    const r = await both("Still thinking about it");
    expect(r.content).toBe("");
    expect(r.reasoning).toBe("Still thinking about it");
  });

  it("with tools: reasoning without an opener, then the call", async () => {
    const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
    const engine = createScriptedEngine({ replies: ['Need weather.</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'] });
    const client = createClient({ worker: false, engine });
    const m = (await client.chat.completions.create({ model: R1, messages: [{ role: "user", content: "Oslo?" }], tools })).choices[0].message;
    expect(m.reasoning_content).toBe("Need weather.");
    expect(m.content).toBeNull();
    expect(m.tool_calls?.[0].function).toEqual({ name: "get_weather", arguments: '{"city": "Oslo"}' });
  });

  it("history: an earlier reply without the opener loses its reasoning in the next prompt, as the official template cuts it", async () => {
    const engine = createScriptedEngine({ replies: ["Hmm.</think>\n\nHello!", "Bye."] });
    const client = createClient({ worker: false, engine });
    const messages = [{ role: "user" as const, content: "hi" }];
    const first = (await client.chat.completions.create({ model: R1, messages })).choices[0].message;
    await client.chat.completions.create({ model: R1, messages: [...messages, first, { role: "user", content: "bye" }] as never });
    const assistant = engine.requests[1].messages.find((m) => m.role === "assistant");
    expect(assistant?.content).not.toContain("</think>");
    expect(assistant?.content).not.toContain("Hmm.");
  });
});
