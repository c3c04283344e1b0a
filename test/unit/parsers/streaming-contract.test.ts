/**
 * The streaming contract every format parser keeps (src/parsers/types.ts):
 * the message is the same whatever the chunking; a call's first event is its
 * complete name; its argument fragments concatenate to valid JSON — even when
 * the output stops anywhere inside the call (the started call is closed, never
 * retracted); and only text that could start a marker is held back.
 */
import { describe, expect, it } from "vitest";
import type { OutputFormat } from "../../../src/parsers/index.js";
import { fold, parse, randomChunks, tool } from "./support.js";

const TOOLS = [
  tool("get_weather", { city: { type: "string" }, days: { type: "integer" }, opts: { type: "object" } }),
  tool("search", { q: { type: "string" } }),
];

/** One reply per format with prose, two calls, and strings full of look-alike markers, braces, quotes and escapes. */
const SAMPLES: Record<OutputFormat, string> = {
  hermes:
    'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa\\"ris {</tool_call>}", "days": 3, "opts": {"u": [1, -2.5e3, true, null]}}}\n</tool_call>\n<tool_call>\n{"name": "search", "arguments": {"q": "\\u00e9t\\u00e9 \\\\ [x]"}}\n</tool_call>\nDone.',
  smollm: '<tool_call>[\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},\n{"name": "search", "arguments": {"q": "a]b"}}\n]</tool_call>',
  "qwen-xml":
    "Sure.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis <b>\"x\"</b> & {y}\n\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=opts>\n{\"u\": [1, 2]}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=search>\n<parameter=q>\nline1\nline2\n</parameter>\n</function>\n</tool_call>",
  "llama-json": '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris;{", "days": 3}}; {"name": "search", "parameters": {"q": "x"}}',
  pythonic: "Calling: [get_weather(city='Pa\\'ris, (x)', days=3, opts={'u': [1, None, True]}), search(q=\"a]b\")] ok",
  mistral: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris]", "days": 3}}, {"name": "search", "arguments": {"q": "[TOOL_CALLS]"}}]',
  ministral: 'Let me see.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris}", "days": 3}[TOOL_CALLS]search[ARGS]{"q": "x"}',
  phi4: '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}, {"name": "search", "arguments": {"q": "<|/tool_call|>"}}]<|/tool_call|>',
  gemma4:
    'Sure. <|tool_call>call:get_weather{city:<|"|>Pa"ris {x}<|"|>,days:3,opts:{u:[1,-2.5,true,null]}}<tool_call|><|tool_call>call:search{q:<|"|>C:\\dir<|"|>}<tool_call|>',
  "deepseek-r1":
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{"q": "x"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
};

const formats = Object.keys(SAMPLES) as OutputFormat[];

describe.each(formats)("%s", (format) => {
  const text = SAMPLES[format];
  const whole = fold(parse({ format, tools: TOOLS }, [text]).events);

  it("finds both calls, with JSON arguments", () => {
    expect(whole.calls.map((c) => c.name)).toEqual(["get_weather", "search"]);
    const first = JSON.parse(whole.calls[0].arguments) as Record<string, unknown>;
    expect(first.days).toBe(3);
    expect(typeof first.city).toBe("string");
  });

  it("gives the same message in 1-character deltas and random chunkings", () => {
    expect(fold(parse({ format, tools: TOOLS }, Array.from(text)).events)).toEqual(whole);
    for (const seed of [7, 8, 9, 10, 11]) expect(fold(parse({ format, tools: TOOLS }, randomChunks(text, seed)).events)).toEqual(whole);
  });

  it("leaves valid JSON arguments wherever the output stops", () => {
    for (let cut = 1; cut < text.length; cut++) {
      const folded = fold(parse({ format, tools: TOOLS }, [text.slice(0, cut)]).events);
      for (const call of folded.calls) {
        expect(() => JSON.parse(call.arguments), `cut at ${cut}: ${JSON.stringify(call.arguments)}`).not.toThrow();
        expect(["get_weather", "search"]).toContain(call.name);
      }
    }
  });

  it("streams the arguments of a cut-off output as a prefix of what the whole output gives", () => {
    // Never retracted: at every cut the streamed arguments (before finish) are a prefix of the final ones.
    const chars = Array.from(text);
    const parser = parse({ format, tools: TOOLS }, chars);
    const streamed = fold(parser.perPush.flat());
    streamed.calls.forEach((call, i) => expect(whole.calls[i].arguments.startsWith(call.arguments)).toBe(true));
  });
});

describe("hold-back", () => {
  it("emits prose at once and holds only a tail that could start a marker", () => {
    const { perPush } = parse({ format: "hermes", tools: TOOLS }, ["Hello there", "! <tool", "_cal", "x> more"]);
    expect(fold(perPush[0]).content).toBe("Hello there");
    expect(fold(perPush[1]).content).toBe("!"); // " <tool" could start <tool_call> (the space waits for what follows)
    expect(fold(perPush[2]).content).toBe("");
    expect(fold(perPush[3]).content).toBe(" <tool_calx> more");
  });

  it("does not hold back a bracket that cannot start a pythonic call", () => {
    const { perPush } = parse({ format: "pythonic", tools: TOOLS }, ["see [1] and [get", "_weather(city='x')]"]);
    expect(fold(perPush[0]).content).toBe("see [1] and");
    expect(fold(perPush[1]).calls).toEqual([{ name: "get_weather", arguments: '{"city":"x"}' }]);
  });

  it("sends a call's name as soon as it is complete, then its arguments as they are generated (issue 20, item 8)", () => {
    const { perPush } = parse({ format: "hermes", tools: TOOLS }, ['<tool_call>{"name": "get_wea', 'ther", "arguments": {"city": "Par', 'is"}}', "</tool_call>"]);
    expect(perPush[0]).toEqual([]);
    expect(perPush[1]).toEqual([
      { type: "tool_call", index: 0, name: "get_weather" },
      { type: "tool_args", index: 0, text: '{"city": "Par' },
    ]);
    expect(perPush[2]).toEqual([{ type: "tool_args", index: 0, text: 'is"}' }]);
    expect(perPush[3]).toEqual([]);
  });

  it("prose before a call streams at once, and so does the call", () => {
    const { perPush } = parse({ format: "hermes", tools: TOOLS }, ["Checking. ", '<tool_call>{"name": "get_weather", "arguments": {"city": "Par', 'is"}}</tool_call>']);
    expect(perPush[0]).toEqual([{ type: "content", text: "Checking." }]);
    expect(perPush[1].map((e) => e.type)).toEqual(["tool_call", "tool_args"]);
    expect(perPush[2]).toEqual([{ type: "tool_args", index: 0, text: 'is"}' }]);
  });

  it("every format streams a long argument in many fragments, before the call closes", () => {
    const long = "word ".repeat(200);
    const samples: [OutputFormat, string][] = [
      ["hermes", `<tool_call>{"name": "search", "arguments": {"q": "${long}"}}</tool_call>`],
      ["qwen-xml", `<tool_call>\n<function=search>\n<parameter=q>\n${long}\n</parameter>\n</function>\n</tool_call>`],
      ["gemma4", `<|tool_call>call:search{q:<|"|>${long}<|"|>}<tool_call|>`],
      ["pythonic", `[search(q='${long}')]`],
      ["ministral", `[TOOL_CALLS]search[ARGS]{"q": "${long}"}`],
      ["mistral", `[TOOL_CALLS][{"name": "search", "arguments": {"q": "${long}"}}]`],
    ];
    for (const [format, text] of samples) {
      const chunks = text.match(/.{1,8}/gs)!;
      const { perPush } = parse({ format, tools: TOOLS }, chunks);
      const withArgs = perPush.filter((events) => events.some((e) => e.type === "tool_args"));
      expect(withArgs.length, format).toBeGreaterThan(100);
      // The last fragment arrives before the end of the text: nothing waits for the call to close.
      const last = perPush.reduce((at, events, i) => (events.some((e) => e.type === "tool_args") ? i : at), -1);
      expect(last, format).toBeGreaterThan(chunks.length - 8);
    }
  });

  it("holds a partial number until it is complete (JSON-converted formats)", () => {
    const { perPush } = parse({ format: "gemma4", tools: TOOLS }, ["<|tool_call>call:get_weather{days:10", "8.", "5}<tool_call|>"]);
    const streamed = perPush.map((p) => fold([{ type: "tool_call", index: 0, name: "x" }, ...p.filter((e) => e.type !== "tool_call")]).calls[0]?.arguments ?? "");
    expect(streamed.join("")).toBe('{"days":108.5}');
    expect(streamed[1]).toBe("");
  });
});

describe("cost", () => {
  it("does not re-scan earlier text: 1-char deltas of a long call cost about the same per character as a few long deltas", () => {
    // A correctness check of the incremental design, not a benchmark: a quadratic parser would take seconds here.
    const content = "x\\\"{[".repeat(40_000);
    const text = `<tool_call>{"name": "search", "arguments": {"q": "${content}"}}</tool_call>`;
    const start = performance.now();
    const folded = fold(parse({ format: "hermes", tools: TOOLS }, Array.from(text)).events);
    const elapsed = performance.now() - start;
    expect(JSON.parse(folded.calls[0].arguments).q.length).toBe(content.length - 40_000);
    console.log(`[parser] ${text.length} chars in 1-char deltas: ${elapsed.toFixed(0)} ms`);
  });
});
