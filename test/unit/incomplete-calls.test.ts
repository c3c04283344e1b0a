/**
 * A reply is calls or content, never a call plus its own leftover markup, and
 * never a call the model did not finish (issue 15, items 4–6). DESIGN: a
 * complete call missing only its closing tag counts; an incomplete or
 * malformed one stays content, as written. A call cut by a stop string or by
 * max_tokens is incomplete: the finish reason is `stop`/`length`, not
 * `tool_calls`. Through createClient + the scripted engine, streamed and not.
 */
import { describe, expect, it } from "vitest";
import { createClient, type ChatCompletionChunk } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";

const tool = (name: string) => ({
  type: "function" as const,
  function: { name, parameters: { type: "object", properties: { q: { type: "string" }, n: { type: "number" }, location: { type: "string" }, city: { type: "string" } } } },
});
const TOOLS = [tool("search"), tool("get_weather")];

interface Result {
  content: string | null;
  calls: { name: string; arguments: string }[];
  finish: string;
  streamed: { content: string; calls: { name: string; arguments: string }[]; finish: string | null };
}

async function run(model: string, reply: string, extra: Record<string, unknown> = {}): Promise<Result> {
  const engine = createScriptedEngine({ replies: [reply, reply] });
  const client = createClient({ worker: false, engine });
  const body = { model, messages: [{ role: "user" as const, content: "go" }], tools: TOOLS, ...extra };
  const choice = (await client.chat.completions.create(body)).choices[0];
  const stream = (await client.chat.completions.create({ ...body, stream: true })) as AsyncIterable<ChatCompletionChunk>;
  let content = "";
  let finish: string | null = null;
  const calls: { name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    content += c.delta.content ?? "";
    for (const d of c.delta.tool_calls ?? []) {
      if (d.function?.name !== undefined) calls[d.index] = { name: d.function.name, arguments: "" };
      calls[d.index].arguments += d.function?.arguments ?? "";
    }
    finish = c.finish_reason ?? finish;
  }
  return {
    content: choice.message.content,
    calls: (choice.message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
    finish: choice.finish_reason,
    streamed: { content, calls, finish },
  };
}

/** The reply is content exactly as the model wrote it: no call, finish `stop`. */
function expectContent(r: Result, text: string, finish = "stop"): void {
  expect(r.calls).toEqual([]);
  expect(r.content).toBe(text);
  expect(r.finish).toBe(finish);
  expect(r.streamed).toEqual({ content: text, calls: [], finish });
}

const MODELS = {
  hermes: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC",
  smollm: "SmolLM2-1.7B-Instruct-q4f16_1-MLC",
  mistral: "Mistral-7B-Instruct-v0.3-q4f16_1-MLC",
  ministral: "Ministral-3-3B-Instruct-2512-BF16-q4f16_1-MLC",
  phi4: "Phi-4-mini-instruct-q4f16_1-MLC",
  llama: "Llama-3.2-1B-Instruct-q4f16_1-MLC",
  gemma4: "gemma-4-E2B-it-q4f16_1-MLC",
  qwen35: "Qwen3.5-0.8B-q4f16_1-MLC",
};

describe("Gemma 4: an incomplete call stays content (item 4)", () => {
  it("`<|tool_call>call:get_weather{location:<|\"|>London` (no closing marker, value unterminated)", async () => {
    const text = '<|tool_call>call:get_weather{location:<|"|>London';
    expectContent(await run(MODELS.gemma4, text), text);
  });

  it("arguments object never closed", async () => {
    const text = '<|tool_call>call:get_weather{location:<|"|>London<|"|>';
    expectContent(await run(MODELS.gemma4, text), text);
  });

  it("a complete call missing only `<tool_call|>` counts", async () => {
    const r = await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London<|"|>}');
    expect(r.calls).toEqual([{ name: "get_weather", arguments: '{"location":"London"}' }]);
    expect(r.finish).toBe("tool_calls");
  });
});

describe("malformed call JSON: the whole call is content, in every JSON-body format (item 5)", () => {
  const BAD = '{"q": "x",, "n": }}';
  const cases: [string, string, string][] = [
    ["hermes, the issue's text", MODELS.hermes, `<tool_call>\n${BAD}\n</tool_call>`],
    ["hermes", MODELS.hermes, `<tool_call>\n{"name": "search", "arguments": ${BAD}}\n</tool_call>`],
    ["hermes <function=…>", MODELS.hermes, `<function=search>${BAD}</function>`],
    ["smollm list", MODELS.smollm, `<tool_call>[{"name": "search", "arguments": ${BAD}}]</tool_call>`],
    ["mistral list", MODELS.mistral, `[TOOL_CALLS][{"name": "search", "arguments": ${BAD}}]`],
    ["ministral name[ARGS]", MODELS.ministral, `[TOOL_CALLS]search[ARGS]${BAD}`],
    ["phi-4 list", MODELS.phi4, `<|tool_call|>[{"name": "search", "arguments": ${BAD}}]<|/tool_call|>`],
    ["llama <|python_tag|>", MODELS.llama, `<|python_tag|>{"name": "search", "parameters": ${BAD}}`],
    ["llama bare object", MODELS.llama, `{"name": "search", "parameters": ${BAD}}`],
    ["hermes, second call of a list malformed", MODELS.hermes, `<tool_call>\n[{"name": "search", "arguments": {"q": "a"}}, {"name": "search", "arguments": ${BAD}}]\n</tool_call>`],
  ];
  for (const [label, model, text] of cases) {
    it(`${label}: ${JSON.stringify(text)}`, async () => {
      expectContent(await run(model, text), text);
    });
  }

  it("a well-formed call next to a malformed block: the good call counts, the bad block is content", async () => {
    const good = '<tool_call>\n{"name": "search", "arguments": {"q": "a"}}\n</tool_call>';
    const bad = `<tool_call>\n{"name": "search", "arguments": ${BAD}}\n</tool_call>`;
    const r = await run(MODELS.hermes, `${good}\n${bad}`);
    expect(r.calls).toEqual([{ name: "search", arguments: '{"q": "a"}' }]);
    expect(r.content).toBe(bad);
    expect(r.streamed.content).toBe(bad);
  });
});

describe("a call cut by stop or max_tokens is not complete (item 6)", () => {
  const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

  it("a stop string inside the arguments: finish `stop`, the cut text is content, no call with closed arguments", async () => {
    const r = await run(MODELS.hermes, CALL, { stop: ["Par"] });
    expectContent(r, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "');
  });

  it("max_tokens inside the arguments: finish `length`, the cut text is content", async () => {
    const r = await run(MODELS.hermes, CALL, { max_tokens: 12 });
    expect(r.finish).toBe("length");
    expect(r.calls).toEqual([]);
    expect(CALL.startsWith(r.content ?? "")).toBe(true);
    expect(r.streamed).toEqual({ content: r.content, calls: [], finish: "length" });
  });

  it("Gemma 4 and Ministral calls cut by max_tokens are content too", async () => {
    const gemma = await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>', { max_tokens: 8 });
    expect(gemma.calls).toEqual([]);
    expect(gemma.finish).toBe("length");
    const ministral = await run(MODELS.ministral, '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', { max_tokens: 9 });
    expect(ministral.calls).toEqual([]);
    expect(ministral.finish).toBe("length");
  });

  it("a stop string after the call's JSON closed: the call is complete (only its closing tag is missing)", async () => {
    const r = await run(MODELS.hermes, CALL, { stop: ["</tool_call>"] });
    expect(r.calls).toEqual([{ name: "get_weather", arguments: '{"city": "Paris"}' }]);
    expect(r.finish).toBe("tool_calls");
    expect(r.streamed.calls).toEqual(r.calls);
  });

  it("Qwen3.5 XML call cut by max_tokens (inside a marker, inside a value) is content", async () => {
    const text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis is lovely\n</parameter>\n</function>\n</tool_call>";
    // Thinking off: web-llm's empty think block comes first (7 scripted tokens), then the cut lands in a marker / a value.
    for (const max_tokens of [21, 27]) {
      const r = await run(MODELS.qwen35, text, { max_tokens, reasoning_effort: "none" });
      expect(r.calls, `max_tokens ${max_tokens}`).toEqual([]);
      expect(r.finish).toBe("length");
      expect(r.content).toContain("<function=get_weather>");
    }
  });
});
