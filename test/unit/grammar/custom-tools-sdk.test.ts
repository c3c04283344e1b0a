/**
 * The unchanged openai SDK (v6 and v7) on `client.fetch`: a Lark and a regex
 * custom tool sent through Responses and chat, the call streamed back with
 * an input that matches its grammar; a grammar that cannot be enforced is a
 * BadRequestError naming the construct.
 */
import { describe, expect, it } from "vitest";
import OpenAIv6 from "openai";
import OpenAIv7 from "openai-v7";
import { scriptedClient, user } from "../support/client.js";

const BASE = "http://localhost.webgpu/v1";
const MODEL = "Qwen3-0.6B-q4f16_1-MLC";
const MATH_LARK = 'start: NUMBER (OP NUMBER)*\nOP: "+" | "-" | "*"\n%import common.NUMBER';
const DATE_REGEX = "\\d{4}-\\d{2}-\\d{2}";

const hermesCall = (name: string, input: string) => `<tool_call>\n{"name": "${name}", "arguments": {"input": ${JSON.stringify(input)}}}\n</tool_call>`;

type Fetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Both majors behind v6's types (a union of the two classes has no callable overloads); v7's own types are checked in test/types. */
const SDKS: Array<[string, (fetch: Fetch) => OpenAIv6, abstract new (...args: never[]) => Error]> = [
  ["openai v6", (fetch) => new OpenAIv6({ baseURL: BASE, apiKey: "local", maxRetries: 0, fetch }), OpenAIv6.BadRequestError],
  ["openai v7", (fetch) => new OpenAIv7({ baseURL: BASE, apiKey: "local", maxRetries: 0, fetch }) as unknown as OpenAIv6, OpenAIv7.BadRequestError],
];

describe.each(SDKS)("%s on client.fetch", (_, make, BadRequestError) => {
  function sdk(replies: string[]) {
    const { client, engine } = scriptedClient(replies);
    return { engine, openai: make(client.fetch) };
  }

  it("Responses: a Lark and a regex custom tool; the forced call streams back with an input in its grammar", async () => {
    const { openai, engine } = sdk([hermesCall("set_date", "2025-01-31")]);
    const stream = await openai.responses.create({
      model: MODEL,
      input: "Set the date to the last day of January 2025.",
      reasoning: { effort: "none" },
      tools: [
        { type: "custom", name: "math", description: "Arithmetic.", format: { type: "grammar", syntax: "lark", definition: MATH_LARK } },
        { type: "custom", name: "set_date", format: { type: "grammar", syntax: "regex", definition: DATE_REGEX } },
      ],
      tool_choice: { type: "custom", name: "set_date" },
      stream: true,
    });
    let deltas = "";
    let item: { type: string; name?: string; input?: string } | undefined;
    for await (const event of stream) {
      if (event.type === "response.custom_tool_call_input.delta") deltas += event.delta;
      if (event.type === "response.output_item.done") item = event.item as never;
    }
    expect(item).toMatchObject({ type: "custom_tool_call", name: "set_date", input: "2025-01-31" });
    expect(deltas).toBe("2025-01-31");
    expect(new RegExp(`^(?:${DATE_REGEX})$`).test(item!.input!)).toBe(true);
    expect(engine.requests[0].responseFormat?.type).toBe("structural_tag");
  });

  it("chat: the Lark tool's call streams back as a custom tool call", async () => {
    const { openai } = sdk([hermesCall("math", "6*7")]);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: [user("What is six times seven?")],
      reasoning_effort: "none",
      tools: [
        { type: "custom", custom: { name: "math", format: { type: "grammar", grammar: { syntax: "lark", definition: MATH_LARK } } } },
        { type: "custom", custom: { name: "set_date", format: { type: "grammar", grammar: { syntax: "regex", definition: DATE_REGEX } } } },
      ],
      tool_choice: { type: "custom", custom: { name: "math" } },
      stream: true,
    });
    let name: string | undefined;
    let input = "";
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        const custom = (call as { custom?: { name?: string; input?: string } }).custom;
        name ??= custom?.name;
        input += custom?.input ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe("math");
    expect(input).toBe("6*7");
    expect(finish).toBe("tool_calls");
  });

  it("a grammar with a construct that cannot be enforced is a BadRequestError naming it", async () => {
    const { openai, engine } = sdk(["x"]);
    const error = await openai.responses
      .create({ model: MODEL, input: "x", tools: [{ type: "custom", name: "t", format: { type: "grammar", syntax: "regex", definition: "(\\w+) \\1" } }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, code: "unsupported_grammar", param: "tools[0].format.definition" });
    expect((error as Error).message).toContain("backreference");
    expect(engine.requests).toHaveLength(0);
  });
});
