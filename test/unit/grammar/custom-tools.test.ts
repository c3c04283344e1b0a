/**
 * Custom tools with a grammar, chat and Responses, through createClient and
 * the scripted engine (scripted replies in the family's own call format):
 * calls come back as custom calls with the decoded input (streamed too),
 * the constraint the engine receives accepts exactly the inputs in the
 * grammar (checked with both bundled xgrammar builds), custom calls and
 * their outputs go back into the conversation, and what cannot be enforced
 * exactly is a 400 naming it.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { responseFormatFor } from "../../../src/engine/webllm/webllm-request.js";
import type { EngineResponseFormat } from "../../../src/engine/types.js";
import { CustomInputDecoder } from "../../../src/parsers/custom-calls.js";
import { compileEbnf079 } from "../families/xgrammar-0279.js";
import { compileTag } from "../families/xgrammar.js";

const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";
const QWEN35 = "Qwen3.5-0.8B-q4f16_1-MLC";
const GEMMA4 = "gemma-4-E2B-it-q4f16_1-MLC";

const MATH_LARK = `
start: expr
expr: NUMBER (OP NUMBER)*
OP: "+" | "-" | "*" | "/"
%import common.NUMBER
`;
const DATE_REGEX = "\\d{4}-\\d{2}-\\d{2}";

/** Qwen3's Hermes call with arguments {"input": …}. */
const hermesCall = (name: string, input: string) => `<tool_call>\n{"name": "${name}", "arguments": ${JSON.stringify({ input }).replace('{"input":', '{"input": ')}}\n</tool_call>`;
/** Qwen3.5's XML call: the input as raw text. */
const xmlCall = (name: string, input: string) => `<tool_call>\n<function=${name}>\n<parameter=input>\n${input}\n</parameter>\n</function>\n</tool_call>`;

function setup(replies: string[]) {
  const engine = createScriptedEngine({ replies });
  return { engine, client: createClient({ worker: false, engine }) };
}

/** The constraint as web-llm 0.2.79 (EBNF) and 0.2.86 (structural tag) get it: each accepts a text or not. */
async function constraints(format: EngineResponseFormat | undefined) {
  const ebnf = responseFormatFor(format, false) as { grammar: string };
  const tag = responseFormatFor(format, true) as { structural_tag: unknown };
  const [v079, v086] = await Promise.all([compileEbnf079(ebnf.grammar), compileTag(tag.structural_tag)]);
  return async (text: string) => [await v079(text), await v086(text)];
}

const chatTool = { type: "custom" as const, custom: { name: "math", description: "Evaluates arithmetic.", format: { type: "grammar" as const, grammar: { syntax: "lark" as const, definition: MATH_LARK } } } };

describe("chat custom tools", () => {
  it("a forced Lark tool: the call comes back as {type: custom, custom: {name, input}}, and the constraint enforces the grammar", async () => {
    const { engine, client } = setup([hermesCall("math", "1+2*3")]);
    const completion = await client.chat.completions.create({
      model: QWEN3,
      messages: [{ role: "user", content: "What is 1+2*3?" }],
      reasoning_effort: "none",
      tools: [chatTool],
      tool_choice: { type: "custom", custom: { name: "math" } },
    });
    const choice = completion.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toEqual([{ id: expect.any(String), type: "custom", custom: { name: "math", input: "1+2*3" } }]);

    const accepts = await constraints(engine.requests[0].responseFormat);
    expect(await accepts(hermesCall("math", "1+2*3"))).toEqual([true, true]);
    expect(await accepts(hermesCall("math", "12.5/4"))).toEqual([true, true]);
    expect(await accepts(hermesCall("math", "1+"))).toEqual([false, false]);
    expect(await accepts(hermesCall("math", "one plus two"))).toEqual([false, false]);
    expect(await accepts("It is 7.")).toEqual([false, false]);
  }, 30_000);

  it("streamed: the first delta names the custom call, the input follows in fragments", async () => {
    const { client } = setup([hermesCall("math", "10-4")]);
    const stream = await client.chat.completions.create({
      model: QWEN3,
      messages: [{ role: "user", content: "10-4?" }],
      reasoning_effort: "none",
      tools: [chatTool],
      tool_choice: "required",
      stream: true,
    });
    const deltas: NonNullable<ChatCompletionChunk["choices"][number]["delta"]["tool_calls"]> = [];
    for await (const chunk of stream) deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
    expect(deltas[0]).toMatchObject({ index: 0, type: "custom", custom: { name: "math" } });
    expect(deltas.map((d) => ("custom" in d ? (d.custom?.input ?? "") : "")).join("")).toBe("10-4");
  });

  it("a custom call and its result sent back: rendered as the function call the model wrote", async () => {
    const { engine, client } = setup(["The answer is 6."]);
    await client.chat.completions.create({
      model: QWEN3,
      reasoning_effort: "none",
      tools: [chatTool],
      messages: [
        { role: "user", content: "What is 2*3?" },
        { role: "assistant", tool_calls: [{ id: "call_1", type: "custom", custom: { name: "math", input: "2*3" } }] },
        { role: "tool", tool_call_id: "call_1", content: "6" },
      ],
    });
    const prompt = engine.requests[0].messages.map((m) => m.content).join("\n");
    expect(prompt).toContain('{"name": "math", "arguments": {"input": "2*3"}}');
  });

  it("a regex tool whose input needs JSON escapes: quotes and newlines are enforced escaped, decoded in the call", async () => {
    const tool = { type: "custom" as const, custom: { name: "say", format: { type: "grammar" as const, grammar: { syntax: "regex" as const, definition: '"[a-z]+"\\n' } } } };
    const { engine, client } = setup([hermesCall("say", '"hi"\n')]);
    const completion = await client.chat.completions.create({ model: QWEN3, messages: [{ role: "user", content: "x" }], reasoning_effort: "none", tools: [tool], tool_choice: "required" });
    expect(completion.choices[0].message.tool_calls).toEqual([{ id: expect.any(String), type: "custom", custom: { name: "say", input: '"hi"\n' } }]);
    const accepts = await constraints(engine.requests[0].responseFormat);
    expect(await accepts(hermesCall("say", '"hi"\n'))).toEqual([true, true]);
    expect(await accepts(hermesCall("say", '"hi"'))).toEqual([false, false]);
    expect(await accepts('<tool_call>\n{"name": "say", "arguments": {"input": ""hi"\n"}}\n</tool_call>')).toEqual([false, false]);
  }, 30_000);

  it("format text: free input, still a custom call; the constraint only requires a call with a string input", async () => {
    const tool = { type: "custom" as const, custom: { name: "note", format: { type: "text" as const } } };
    const { engine, client } = setup([hermesCall("note", 'Buy "milk"\nand eggs')]);
    const completion = await client.chat.completions.create({ model: QWEN3, messages: [{ role: "user", content: "x" }], reasoning_effort: "none", tools: [tool], tool_choice: "required" });
    expect(completion.choices[0].message.tool_calls).toEqual([{ id: expect.any(String), type: "custom", custom: { name: "note", input: 'Buy "milk"\nand eggs' } }]);
    const accepts = await constraints(engine.requests[0].responseFormat);
    expect(await accepts(hermesCall("note", "anything at all"))).toEqual([true, true]);
    expect(await accepts('<tool_call>\n{"name": "note", "arguments": {"input": 3}}\n</tool_call>')).toEqual([false, false]);
  }, 30_000);

  it("refusals name the construct and the param", async () => {
    const { client } = setup(["x"]);
    const error = await client.chat.completions
      .create({ model: QWEN3, messages: [{ role: "user", content: "x" }], tools: [{ type: "custom", custom: { name: "t", format: { type: "grammar", grammar: { syntax: "regex", definition: "(a)\\1" } } } }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_grammar", param: "tools[0].custom.format.grammar.definition" });
    expect((error as Error).message).toContain("backreference");
  });
});

describe("Responses custom tools", () => {
  const regexTool = { type: "custom", name: "set_date", description: "Sets the date.", format: { type: "grammar", syntax: "regex", definition: DATE_REGEX } };

  it("Qwen3.5 (raw XML parameter): a custom_tool_call item, the constraint enforces the regex on the raw input", async () => {
    const { engine, client } = setup([xmlCall("set_date", "2025-01-31")]);
    const response = await client.responses.create({ model: QWEN35, input: "Set the date to Jan 31 2025.", reasoning: { effort: "none" }, tools: [regexTool], tool_choice: { type: "custom", name: "set_date" } });
    expect(response.output).toEqual([{ type: "custom_tool_call", id: expect.stringMatching(/^ctc_/), call_id: expect.any(String), name: "set_date", input: "2025-01-31" }]);
    expect(response.tools).toEqual([regexTool]);
    expect(response.tool_choice).toEqual({ type: "custom", name: "set_date" });
    const accepts = await constraints(engine.requests[0].responseFormat);
    expect(await accepts(xmlCall("set_date", "2025-01-31"))).toEqual([true, true]);
    expect(await accepts(xmlCall("set_date", "31/01/2025"))).toEqual([false, false]);
  }, 30_000);

  it("streamed: output_item.added, custom_tool_call_input.delta…, .done, output_item.done", async () => {
    const { client } = setup([hermesCall("set_date", "2025-01-31")]);
    const stream = await client.responses.create({ model: QWEN3, input: "Date?", reasoning: { effort: "none" }, tools: [regexTool], tool_choice: "required", stream: true });
    const events: Array<{ type: string; delta?: string; input?: string }> = [];
    for await (const event of stream) events.push(event as never);
    const types = events.map((e) => e.type).filter((t) => t.startsWith("response.custom") || t.startsWith("response.output_item"));
    expect(types[0]).toBe("response.output_item.added");
    expect(types.at(-2)).toBe("response.custom_tool_call_input.done");
    expect(types.at(-1)).toBe("response.output_item.done");
    expect(events.filter((e) => e.type === "response.custom_tool_call_input.delta").map((e) => e.delta).join("")).toBe("2025-01-31");
    expect(events.find((e) => e.type === "response.custom_tool_call_input.done")?.input).toBe("2025-01-31");
  });

  it("custom_tool_call and custom_tool_call_output items go back to the model", async () => {
    const { engine, client } = setup(["Done."]);
    const response = await client.responses.create({
      model: QWEN3,
      reasoning: { effort: "none" },
      tools: [regexTool],
      input: [
        { role: "user", content: "Set the date." },
        { type: "custom_tool_call", call_id: "call_9", name: "set_date", input: "2025-01-31" },
        { type: "custom_tool_call_output", call_id: "call_9", output: "ok" },
      ],
    });
    expect(response.output_text).toBe("Done.");
    const prompt = engine.requests[0].messages.map((m) => m.content).join("\n");
    expect(prompt).toContain('{"name": "set_date", "arguments": {"input": "2025-01-31"}}');
    expect(prompt).toContain("ok");
  });

  it("refusals: a lookbehind in a regex tool; a grammar tool on a family whose calls are not JSON", async () => {
    const { client } = setup(["x"]);
    const lookbehind = await client.responses
      .create({ model: QWEN3, input: "x", tools: [{ type: "custom", name: "t", format: { type: "grammar", syntax: "regex", definition: "(?<=a)b" } }] })
      .catch((e: unknown) => e);
    expect(lookbehind).toMatchObject({ status: 400, code: "unsupported_grammar", param: "tools[0].format.definition" });
    expect((lookbehind as Error).message).toContain("lookbehind");
    const gemma = await client.responses.create({ model: GEMMA4, input: "x", tools: [regexTool], tool_choice: "required" }).catch((e: unknown) => e);
    expect(gemma).toMatchObject({ status: 400, code: "unsupported_grammar" });
    expect((gemma as Error).message).toContain("set_date");
  });
});

describe("the custom-input decoder", () => {
  it("decodes JSON escapes split anywhere across deltas, surrogate pairs included", () => {
    const args = JSON.stringify({ input: 'a "q"\n\\ \u00e9 \ud83d\ude00 end' }).replace('{"input":', '{"input": ');
    for (let cut = 1; cut < args.length; cut++) {
      const decoder = new CustomInputDecoder();
      const out = decoder.push(args.slice(0, cut)) + decoder.push(args.slice(cut)) + decoder.finish();
      expect(out, `cut at ${cut}`).toBe('a "q"\n\\ \u00e9 \ud83d\ude00 end');
    }
  });

  it("arguments of another shape are given whole at the end", () => {
    const decoder = new CustomInputDecoder();
    expect(decoder.push('{"expr": "1+1"}')).toBe("");
    expect(decoder.finish()).toBe('{"expr": "1+1"}');
    const reordered = new CustomInputDecoder();
    expect(reordered.push('{ "input" : "x"')).toBe("x");
  });
});
