/**
 * DESIGN's parsing policies and the contract rules that are the same for
 * every format: undeclared tools, no tools, bare JSON calls, prose and
 * whitespace around calls, calls cut off at the end of output.
 */
import { describe, expect, it } from "vitest";
import { fold, parse, tool } from "./support.js";

const TOOLS = [tool("get_weather", { city: { type: "string" } })];
const CALL = '{"name": "get_weather", "arguments": {"city": "Oslo"}}';

describe("declared tools", () => {
  it("a call to an undeclared tool is dropped, and its text is not content", () => {
    const out = fold(parse({ format: "hermes", tools: TOOLS }, ['Sure. <tool_call>{"name": "rm_rf", "arguments": {}}</tool_call><tool_call>' + CALL + "</tool_call>"]).events);
    expect(out.content).toBe("Sure.");
    expect(out.calls).toEqual([{ name: "get_weather", arguments: '{"city": "Oslo"}' }]);
  });

  it("calls that are kept are numbered 0, 1, … without gaps", () => {
    const { events } = parse({ format: "mistral", tools: TOOLS }, ['[TOOL_CALLS][{"name": "nope", "arguments": {}}, ' + CALL + "]"]);
    expect(events.filter((e) => e.type === "tool_call")).toEqual([{ type: "tool_call", index: 0, name: "get_weather" }]);
  });

  it("without declared tools nothing is parsed as a call", () => {
    const text = "<tool_call>" + CALL + "</tool_call>";
    expect(fold(parse({ format: "hermes", tools: [] }, [text]).events)).toEqual({ content: text, reasoning: "", calls: [] });
  });
});

describe("bare JSON calls (DESIGN: only when the whole reply is calls)", () => {
  it("a whole reply that is one call object is a call (Hermes and Llama)", () => {
    for (const format of ["hermes", "llama-json"] as const) {
      expect(fold(parse({ format, tools: TOOLS }, Array.from(`  ${CALL}\n`)).events).calls).toEqual([{ name: "get_weather", arguments: '{"city":"Oslo"}' }]);
    }
  });

  it("is held back until the end of output, then released as content when prose follows", () => {
    const { perPush, events } = parse({ format: "llama-json", tools: TOOLS }, [CALL, " and more"]);
    expect(perPush.flat()).toEqual([]);
    expect(fold(events)).toEqual({ content: CALL + " and more", reasoning: "", calls: [] });
  });

  it("is released at once when the reply stops looking like a call", () => {
    const { perPush } = parse({ format: "llama-json", tools: TOOLS }, ['{"config"', ": 1}"]);
    expect(fold(perPush[0]).content).toBe('{"config"');
  });

  it("an object naming an undeclared tool is content", () => {
    const text = '{"name": "other", "parameters": {}}';
    expect(fold(parse({ format: "llama-json", tools: TOOLS }, [text]).events)).toEqual({ content: text, reasoning: "", calls: [] });
  });
});

describe("prose and whitespace around calls", () => {
  it("prose before and after a call is content; whitespace touching the call is not, unless prose is on both sides", () => {
    const out = fold(parse({ format: "hermes", tools: TOOLS }, ["Let me check. \n<tool_call>" + CALL + "</tool_call>\n\nDone. "]).events);
    expect(out.content).toBe("Let me check. \n\n\nDone. "); // trailing whitespace of the last prose: no structure follows it
    const onlyBefore = fold(parse({ format: "hermes", tools: TOOLS }, ["Let me check. \n<tool_call>" + CALL + "</tool_call>\n"]).events);
    expect(onlyBefore.content).toBe("Let me check.");
  });

  it("a plain reply keeps its whitespace exactly", () => {
    const text = "  indented\n\ntrailing  \n";
    expect(fold(parse({ format: "hermes", tools: TOOLS }, Array.from(text)).events).content).toBe(text);
  });
});

describe("calls cut off at the end of output", () => {
  it("a complete call missing its closing tag counts", () => {
    expect(fold(parse({ format: "hermes", tools: TOOLS }, ["<tool_call>" + CALL]).events).calls).toHaveLength(1);
    expect(fold(parse({ format: "phi4", tools: TOOLS }, ["<|tool_call|>[" + CALL + "]"]).events).calls).toHaveLength(1);
  });

  it("a call whose name never completed stays content", () => {
    const text = '<tool_call>{"name": "get_wea';
    expect(fold(parse({ format: "hermes", tools: TOOLS }, [text]).events)).toEqual({ content: text, reasoning: "", calls: [] });
  });

  it("a call cut off after its name stays a call with the arguments it has, closed into valid JSON, and is marked cut", () => {
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Os';
    for (const chunks of [[text], Array.from(text)]) {
      const parsed = parse({ format: "hermes", tools: TOOLS }, chunks);
      const out = fold(parsed.events);
      expect(out.calls).toEqual([{ name: "get_weather", arguments: '{"city": "Os"}' }]);
      expect(out.content).toBe("");
      expect(parsed.cutCall).toBe(true);
    }
    expect(parse({ format: "hermes", tools: TOOLS }, ['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>']).cutCall).toBe(false);
  });

  it("every format: a cut call is a call with what it has; a malformed one keeps what it had and its markup is not content", () => {
    const cases: [Parameters<typeof parse>[0]["format"], string, string, boolean][] = [
      ["deepseek-r1", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "x",, }\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>', '{"city": "x"}', false],
      ["deepseek-r1", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Os', '{"city": "Os"}', true],
      ["pythonic", "[get_weather(city='Os", '{"city":"Os"}', true],
      ["qwen-xml", "<tool_call>\n<function=get_weather>\n<parameter=city>\nOs", '{"city":"Os"}', true],
      ["smollm", '<tool_call>[{"name": "get_weather", "arguments": {"city": "Os', '{"city": "Os"}', true],
      ["smollm", '<tool_call>[{"name": "get_weather", "arguments": {"city": "x",, }}]</tool_call>', '{"city": "x"}', false],
      ["gemma4", '<|tool_call>call:get_weather{city:<|"|>Os<|"|>', '{"city":"Os"}', true],
      ["ministral", '[TOOL_CALLS]get_weather[ARGS]{"city": "x",, "n": }} and more', '{"city": "x"}', false],
      ["llama-json", '{"name": "get_weather", "parameters": {"city": "Os', '{"city":"Os"}', true],
    ];
    for (const [format, text, args, cut] of cases) {
      for (const chunks of [[text], Array.from(text)]) {
        const parsed = parse({ format, tools: TOOLS }, chunks);
        const out = fold(parsed.events);
        expect(out.calls, `${format}: ${text}`).toEqual([{ name: "get_weather", arguments: args }]);
        expect(out.content, `${format}: ${text}`).toBe("");
        expect(parsed.cutCall, `${format}: ${text}`).toBe(cut);
      }
    }
  });

  it("after a malformed call, text past the block's closing marker is prose again", () => {
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "x",, }}</tool_call> Done.';
    const out = fold(parse({ format: "hermes", tools: TOOLS }, Array.from(text)).events);
    expect(out.calls).toEqual([{ name: "get_weather", arguments: '{"city": "x"}' }]);
    expect(out.content).toBe("Done.");
  });

  it("a complete call missing only its closing tag counts", () => {
    const out = fold(parse({ format: "hermes", tools: TOOLS }, ['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}']).events);
    expect(out.calls).toEqual([{ name: "get_weather", arguments: '{"city": "Oslo"}' }]);
  });
});

describe("arguments", () => {
  it("JSON arguments stream as the model wrote them (no re-serialising)", () => {
    const out = fold(parse({ format: "hermes", tools: TOOLS }, ['<tool_call>{"name": "get_weather", "arguments": {"city":"Oslo" , "n": 1.50}}</tool_call>']).events);
    expect(out.calls[0].arguments).toBe('{"city":"Oslo" , "n": 1.50}');
  });

  it("raw newlines and stray backslashes inside argument strings are escaped, so the arguments stay JSON", () => {
    // As the model wrote it: a raw newline, and backslashes that are not JSON escapes.
    const text = '<tool_call>{"name": "get_weather", "arguments": {"city": "line1\nline2 C:\\dir\\x \\u12zz \\q"}}</tool_call>';
    for (const chunks of [[text], Array.from(text)]) {
      const out = fold(parse({ format: "hermes", tools: TOOLS }, chunks).events);
      expect(JSON.parse(out.calls[0].arguments)).toEqual({ city: "line1\nline2 C:\\dir\\x \\u12zz \\q" });
    }
  });

  it("arguments written as a JSON-encoded string are decoded once", () => {
    const out = fold(parse({ format: "hermes", tools: TOOLS }, ['<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}</tool_call>']).events);
    expect(out.calls[0].arguments).toBe('{"city": "Oslo"}');
  });

  it("Qwen3.5 XML values are typed by the tool schema; untyped parameters stay strings", () => {
    const tools = [tool("f", { n: { type: "integer" }, b: { type: "boolean" }, o: { type: "object" }, s: { type: "string" }, maybe: { anyOf: [{ type: "number" }, { type: "null" }] } })];
    const text = "<tool_call>\n<function=f>\n<parameter=n>\n42\n</parameter>\n<parameter=b>\nTrue\n</parameter>\n<parameter=o>\n{\"a\": [1]}\n</parameter>\n<parameter=s>\n007\n</parameter>\n<parameter=maybe>\nNone\n</parameter>\n<parameter=extra>\n5\n</parameter>\n</function>\n</tool_call>";
    const out = fold(parse({ format: "qwen-xml", tools }, Array.from(text)).events);
    expect(JSON.parse(out.calls[0].arguments)).toEqual({ n: 42, b: true, o: { a: [1] }, s: "007", maybe: null, extra: "5" });
  });

  it("pythonic literals become JSON (None/True/False, tuples, dicts, escapes)", () => {
    const tools = [tool("f")];
    const out = fold(parse({ format: "pythonic", tools }, ["[f(a=None, b=True, c=(1, 2), d={'k': 'v\\n'}, e=-3.5)]"]).events);
    expect(JSON.parse(out.calls[0].arguments)).toEqual({ a: null, b: true, c: [1, 2], d: { k: "v\n" }, e: -3.5 });
  });
});
