/**
 * Reasoning split off the output for each shape (model-emitted, prompt-opened,
 * [THINK], Gemma 4 channel), `inReasoning` for reasoning_tokens, thinking
 * switched off, and the DESIGN policies on Qwen3.5 and Ministral.
 */
import { describe, expect, it } from "vitest";
import { createOutputParser, type ParserOptions } from "../../../src/parsers/index.js";
import { fold, parse, randomChunks, tool } from "./support.js";

const THINK = { open: "<think>", close: "</think>" };
const TOOLS = [tool("get_weather", { city: { type: "string" } })];

function split(options: Partial<ParserOptions>, text: string) {
  const whole = fold(parse({ format: "hermes", reasoning: THINK, tools: TOOLS, ...options }, [text]).events);
  for (const seed of [1, 2, 3]) expect(fold(parse({ format: "hermes", reasoning: THINK, tools: TOOLS, ...options }, randomChunks(text, seed, 5)).events)).toEqual(whole);
  return whole;
}

describe("reasoning shapes", () => {
  it("model-emitted <think>: the block is reasoning, whitespace just inside the markers and before the answer is not", () => {
    expect(split({}, "<think>\nLet me see.\n\nYes.\n</think>\n\nThe answer.")).toEqual({ reasoning: "Let me see.\n\nYes.", content: "The answer.", calls: [] });
  });

  it("model-emitted: text that does not start with the open marker is all content, later markers included", () => {
    expect(split({}, "Answer <think>x</think>")).toEqual({ reasoning: "", content: "Answer <think>x</think>", calls: [] });
  });

  it("prompt-opened: everything up to the close marker is reasoning; a repeated open marker is not", () => {
    expect(split({ reasoningOpen: true }, "<think>\nhmm\n</think>\nok")).toEqual({ reasoning: "hmm", content: "ok", calls: [] });
    expect(split({ reasoningOpen: true }, "still thinking, cut off")).toEqual({ reasoning: "still thinking, cut off", content: "", calls: [] });
  });

  it("an empty block (web-llm's thinking-off prefill for Qwen3) leaves no reasoning", () => {
    expect(split({}, "<think>\n\n</think>\n\nHi")).toEqual({ reasoning: "", content: "Hi", calls: [] });
  });

  it("[THINK]…[/THINK] (Ministral-3-Reasoning) then a call", () => {
    const out = fold(parse({ format: "ministral", reasoning: { open: "[THINK]", close: "[/THINK]" }, tools: TOOLS }, Array.from('[THINK]Need weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}')).events);
    expect(out).toEqual({ reasoning: "Need weather.", content: "", calls: [{ name: "get_weather", arguments: '{"city": "Oslo"}' }] });
  });

  it("Ministral: a lone [/THINK] without [THINK] is not reasoning (DESIGN)", () => {
    const out = fold(parse({ format: "ministral", reasoning: { open: "[THINK]", close: "[/THINK]" }, tools: TOOLS }, ["draft[/THINK]answer"]).events);
    expect(out.reasoning).toBe("");
    expect(out.content).toBe("draft[/THINK]answer");
  });

  it("Gemma 4 channel: the `thought` label is not reasoning, also when the family gives it as part of the open marker", () => {
    for (const open of ["<|channel>", "<|channel>thought"]) {
      const options = { format: "gemma4" as const, reasoning: { open, close: "<channel|>" }, tools: TOOLS };
      const text = '<|channel>thought\nWeather needed.<channel|><|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>';
      const out = fold(parse(options, Array.from(text)).events);
      expect(out).toEqual({ reasoning: "Weather needed.", content: "", calls: [{ name: "get_weather", arguments: '{"city":"Oslo"}' }] });
    }
  });

  it("Gemma 4: <|tool_call> ends a channel the model forgot to close", () => {
    const out = fold(parse({ format: "gemma4", reasoning: { open: "<|channel>", close: "<channel|>" }, tools: TOOLS }, ['<|channel>thought\nhmm<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>']).events);
    expect(out.reasoning).toBe("hmm");
    expect(out.calls.map((c) => c.name)).toEqual(["get_weather"]);
  });
});

describe("Qwen3.5: <tool_call> inside reasoning ends it (DESIGN)", () => {
  const options = { format: "qwen-xml" as const, reasoning: THINK, reasoningOpen: true, tools: TOOLS };
  const text = "I should call it.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>\n</think>\n\nChecking.";

  it("the call is a call, the stray </think> after it is dropped, the text after is content", () => {
    const whole = fold(parse(options, [text]).events);
    expect(whole).toEqual({ reasoning: "I should call it.", content: "Checking.", calls: [{ name: "get_weather", arguments: '{"city":"Oslo"}' }] });
    expect(fold(parse(options, Array.from(text)).events)).toEqual(whole);
  });
});

describe("thinking off", () => {
  it("discardReasoning removes a block the model writes anyway, and nothing counts as reasoning", () => {
    const parser = createOutputParser({ format: "gemma4", reasoning: { open: "<|channel>", close: "<channel|>" }, reasoningOpen: false, tools: TOOLS, discardReasoning: true });
    const events = [...parser.push("<|channel>not shown"), ...parser.push("<channel|>shown")];
    expect(parser.inReasoning).toBe(false);
    expect(fold([...events, ...parser.finish()])).toEqual({ reasoning: "", content: "shown", calls: [] });
  });
});

describe("inReasoning", () => {
  it("says whether the text pushed last was reasoning", () => {
    const parser = createOutputParser({ format: "hermes", reasoning: THINK, reasoningOpen: false, tools: [] });
    const states: boolean[] = [];
    for (const piece of ["<think>", "a", "b", "</think>", "c"]) {
      parser.push(piece);
      states.push(parser.inReasoning);
    }
    expect(states).toEqual([true, true, true, false, false]);
  });

  it("is false for families without reasoning", () => {
    const parser = createOutputParser({ format: "hermes", reasoning: null, reasoningOpen: false, tools: [] });
    parser.push("<think>x");
    expect(parser.inReasoning).toBe(false);
  });
});

describe("markers inside unfinished reasoning", () => {
  it("are reasoning text, not calls", () => {
    const out = split({ reasoningOpen: true }, 'I could write <tool_call>{"name": "get_weather", "arguments": {}}</tool_call> but');
    expect(out.calls).toEqual([]);
    expect(out.reasoning).toContain("<tool_call>");
  });
});
