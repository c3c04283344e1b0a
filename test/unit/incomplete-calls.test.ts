/**
 * Calls the output cuts, and calls that break (issue 15 items 4–6, rule
 * revised by issue 20 item 8). Calls stream as generated, so a call whose
 * name is out cannot turn back into content: a call the output cuts
 * (max_tokens, a stop string, end of output) stays a call with the arguments
 * it has, closed into valid JSON, and finish_reason is `length`/`stop` (what
 * the hosted API does), not `tool_calls`. Text that never reaches a name is
 * content; markup never is (a call broken by invalid JSON keeps what it had,
 * the rest of its block is dropped). Through createClient + the scripted
 * engine, streamed and not.
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
    calls: (choice.message.tool_calls ?? []).map((c) => ({ name: c.function!.name, arguments: c.function!.arguments })),
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

/** The reply is these calls (no content), streamed and not, with this finish reason. */
function expectCalls(r: Result, calls: { name: string; arguments: string }[], finish: string, content: string | null = null): void {
  expect(r.calls).toEqual(calls);
  expect(r.content).toBe(content);
  expect(r.finish).toBe(finish);
  expect(r.streamed).toEqual({ content: content ?? "", calls, finish });
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

describe("Gemma 4: a call the output cuts stays a call (issue 15 item 4, issue 20 item 8)", () => {
  it("`<|tool_call>call:get_weather{location:<|\"|>London` (no closing marker, value unterminated): a call, finish `stop`", async () => {
    expectCalls(await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London'), [{ name: "get_weather", arguments: '{"location":"London"}' }], "stop");
  });

  it("arguments object never closed: a call, finish `stop`", async () => {
    expectCalls(await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London<|"|>'), [{ name: "get_weather", arguments: '{"location":"London"}' }], "stop");
  });

  it("a complete call missing only `<tool_call|>` counts", async () => {
    const r = await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London<|"|>}');
    expect(r.calls).toEqual([{ name: "get_weather", arguments: '{"location":"London"}' }]);
    expect(r.finish).toBe("tool_calls");
  });
});

describe("malformed call JSON: a call keeps what it had, its markup is never content (issue 15 item 5)", () => {
  const BAD = '{"q": "x",, "n": }}';
  const KEPT = [{ name: "search", arguments: '{"q": "x"}' }];

  it("no name was read (the issue's text): content as written", async () => {
    const text = `<tool_call>\n${BAD}\n</tool_call>`;
    expectContent(await run(MODELS.hermes, text), text);
  });

  const cases: [string, string, string][] = [
    ["hermes", MODELS.hermes, `<tool_call>\n{"name": "search", "arguments": ${BAD}}\n</tool_call>`],
    ["hermes <function=…>", MODELS.hermes, `<function=search>${BAD}</function>`],
    ["smollm list", MODELS.smollm, `<tool_call>[{"name": "search", "arguments": ${BAD}}]</tool_call>`],
    ["mistral list", MODELS.mistral, `[TOOL_CALLS][{"name": "search", "arguments": ${BAD}}]`],
    ["ministral name[ARGS]", MODELS.ministral, `[TOOL_CALLS]search[ARGS]${BAD}`],
    ["phi-4 list", MODELS.phi4, `<|tool_call|>[{"name": "search", "arguments": ${BAD}}]<|/tool_call|>`],
    ["llama <|python_tag|>", MODELS.llama, `<|python_tag|>{"name": "search", "parameters": ${BAD}}`],
  ];
  for (const [label, model, text] of cases) {
    it(`${label}: ${JSON.stringify(text)}`, async () => {
      const r = await run(model, text);
      expect(r.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) as unknown }))).toEqual([{ name: "search", arguments: { q: "x" } }]);
      expect(r.content).toBeNull();
      expect(r.finish).toBe("tool_calls");
      expect(r.streamed.calls).toEqual(r.calls);
      expect(r.streamed.content).toBe("");
    });
  }

  it("llama bare object (no marker: a call only when the whole reply is well-formed calls): content as written", async () => {
    const text = `{"name": "search", "parameters": ${BAD}}`;
    expectContent(await run(MODELS.llama, text), text);
  });

  it("hermes, second call of a list malformed: both calls, the rest of the block dropped", async () => {
    const r = await run(MODELS.hermes, `<tool_call>\n[{"name": "search", "arguments": {"q": "a"}}, {"name": "search", "arguments": ${BAD}}]\n</tool_call>`);
    expectCalls(r, [{ name: "search", arguments: '{"q": "a"}' }, ...KEPT], "tool_calls");
  });

  it("a well-formed call next to a malformed block: both are calls, prose after the block is content", async () => {
    const good = '<tool_call>\n{"name": "search", "arguments": {"q": "a"}}\n</tool_call>';
    const bad = `<tool_call>\n{"name": "search", "arguments": ${BAD}}\n</tool_call>`;
    const r = await run(MODELS.hermes, `${good}\n${bad}\nDone.`);
    expectCalls(r, [{ name: "search", arguments: '{"q": "a"}' }, ...KEPT], "tool_calls", "Done.");
  });
});

describe("a call cut by stop or max_tokens stays a call, finish `stop`/`length` (issue 15 item 6, issue 20 item 8)", () => {
  const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

  it("a stop string inside the arguments: finish `stop`, the call with the arguments it has", async () => {
    const r = await run(MODELS.hermes, CALL, { stop: ["Par"] });
    expectCalls(r, [{ name: "get_weather", arguments: '{"city": ""}' }], "stop");
  });

  it("max_tokens inside the arguments: finish `length`, the call with a prefix of its arguments", async () => {
    const r = await run(MODELS.hermes, CALL, { max_tokens: 27 }); // scripted tokens: the cut lands after `"city": "Paris`
    expect(r.finish).toBe("length");
    expect(r.calls.map((c) => c.name)).toEqual(["get_weather"]);
    const args = JSON.parse(r.calls[0].arguments) as { city?: string };
    expect("Paris".startsWith(args.city ?? "")).toBe(true);
    expect(r.content).toBeNull();
    expect(r.streamed).toEqual({ content: "", calls: r.calls, finish: "length" });
  });

  it("Gemma 4 and Ministral calls cut by max_tokens are calls too, finish `length`", async () => {
    const gemma = await run(MODELS.gemma4, '<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>', { max_tokens: 20 }); // after `London`
    expect(gemma.calls.map((c) => c.name)).toEqual(["get_weather"]);
    expect(() => JSON.parse(gemma.calls[0].arguments)).not.toThrow();
    expect(gemma.finish).toBe("length");
    const ministral = await run(MODELS.ministral, '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', { max_tokens: 17 }); // after `Paris`
    expect(ministral.calls.map((c) => c.name)).toEqual(["get_weather"]);
    expect(() => JSON.parse(ministral.calls[0].arguments)).not.toThrow();
    expect(ministral.finish).toBe("length");
  });

  it("cut before the name is complete: content as written", async () => {
    const r = await run(MODELS.hermes, CALL, { stop: ["_weather"] });
    expectContent(r, '<tool_call>\n{"name": "get');
  });

  it("a stop string after the call's JSON closed: the call is complete (only its closing tag is missing)", async () => {
    const r = await run(MODELS.hermes, CALL, { stop: ["</tool_call>"] });
    expect(r.calls).toEqual([{ name: "get_weather", arguments: '{"city": "Paris"}' }]);
    expect(r.finish).toBe("tool_calls");
    expect(r.streamed.calls).toEqual(r.calls);
  });

  it("Qwen3.5 XML call cut by max_tokens (inside a marker, inside a value) is a call with what it has", async () => {
    const text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis is lovely\n</parameter>\n</function>\n</tool_call>";
    // Thinking off: web-llm's empty think block comes first (7 scripted tokens), then the cut lands in a marker / a value.
    for (const max_tokens of [21, 27]) {
      const r = await run(MODELS.qwen35, text, { max_tokens, reasoning_effort: "none" });
      expect(r.calls.map((c) => c.name), `max_tokens ${max_tokens}`).toEqual(["get_weather"]);
      const args = JSON.parse(r.calls[0].arguments) as { city?: string };
      expect("Paris is lovely".startsWith(args.city ?? ""), r.calls[0].arguments).toBe(true);
      expect(r.finish).toBe("length");
      expect(r.content).toBeNull();
      expect(r.streamed.calls).toEqual(r.calls);
    }
  });
});
