/**
 * The grammar extension for plain output: chat `response_format` and
 * Responses `text.format` of `{type: "grammar", syntax, definition}` reach
 * the engine as an EBNF that web-llm 0.2.86's xgrammar enforces (checked
 * here on the engine request the scripted engine received), and a construct
 * the compiler cannot express exactly is a 400 naming it.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { compileEbnf086 } from "../families/xgrammar.js";

const model = "Qwen3-0.6B-q4f16_1-MLC";

function setup(reply: string) {
  const engine = createScriptedEngine({ replies: [reply] });
  return { engine, client: createClient({ worker: false, engine }) };
}

async function grammarSent(engine: ReturnType<typeof createScriptedEngine>) {
  const format = engine.requests[0].responseFormat;
  expect(format?.type).toBe("grammar");
  return compileEbnf086((format as { grammar: string }).grammar);
}

describe("response_format / text.format {type: grammar}", () => {
  it("chat, regex: the engine gets the grammar; the reply comes back as content", async () => {
    const { engine, client } = setup("2024-05-17");
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: "user", content: "A date?" }],
      reasoning_effort: "none",
      response_format: { type: "grammar", syntax: "regex", definition: "\\d{4}-\\d{2}-\\d{2}" },
    });
    expect(completion.choices[0].message.content).toBe("2024-05-17");
    const accepts = await grammarSent(engine);
    expect(await accepts("2024-05-17")).toBe(true);
    expect(await accepts("May 17")).toBe(false);
  });

  it("Responses, Lark: enforced, and echoed in text.format", async () => {
    const { engine, client } = setup("yes");
    const definition = 'start: "yes" | "no"';
    const response = await client.responses.create({ model, input: "Yes or no?", reasoning: { effort: "none" }, text: { format: { type: "grammar", syntax: "lark", definition } } });
    expect(response.output_text).toBe("yes");
    expect(response.text.format).toEqual({ type: "grammar", syntax: "lark", definition });
    const accepts = await grammarSent(engine);
    expect(await accepts("no")).toBe(true);
    expect(await accepts("maybe")).toBe(false);
  });

  it("a construct that cannot be enforced exactly is a 400 naming it", async () => {
    const { client } = setup("x");
    const chat = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "x" }], response_format: { type: "grammar", syntax: "regex", definition: "a(?=b)" } })
      .catch((e: unknown) => e);
    expect(chat).toMatchObject({ status: 400, code: "unsupported_grammar", param: "response_format.definition" });
    expect((chat as Error).message).toContain("lookahead");
    const responses = await client.responses
      .create({ model, input: "x", text: { format: { type: "grammar", syntax: "lark", definition: 'start: "a"i' } } })
      .catch((e: unknown) => e);
    expect(responses).toMatchObject({ status: 400, code: "unsupported_grammar", param: "text.format.definition" });
    expect((responses as Error).message).toContain("case-insensitive");
  });

  it("a RegExp's flags travel with it: `s` is honoured, `i` refused rather than dropped", async () => {
    const { engine, client } = setup("a\nb");
    const re = /a.b/s;
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "x" }], reasoning_effort: "none", response_format: { type: "grammar", syntax: "regex", definition: re.source, flags: re.flags } });
    const accepts = await grammarSent(engine);
    expect(await accepts("a\nb")).toBe(true);
    const insensitive = /yes/i;
    const error = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "x" }], response_format: { type: "grammar", syntax: "regex", definition: insensitive.source, flags: insensitive.flags } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: "unsupported_grammar" });
    expect((error as Error).message).toContain("case-insensitive");
  });

  it("an unknown syntax is a 400 on `syntax`", async () => {
    const { client } = setup("x");
    const error = await client.chat.completions
      .create({ model, messages: [{ role: "user", content: "x" }], response_format: { type: "grammar", syntax: "ebnf", definition: "root ::= \"x\"" } } as never)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, param: "response_format.syntax" });
  });
});
