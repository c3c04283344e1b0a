/**
 * Random model output built from the pieces of every format (markers, JSON
 * punctuation, escapes, names, prose): no parser throws, the message is the
 * same in any chunking, and every call has a declared name and arguments that
 * parse as JSON. Seeded, so a failure names its seed.
 */
import { describe, expect, it } from "vitest";
import type { OutputFormat } from "../../../src/parsers/index.js";
import { fold, parse, randomChunks, tool } from "./support.js";

const PIECES = [
  "<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>", "<think>", "</think>",
  "[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]", "<|tool_call|>", "<|/tool_call|>", "<|python_tag|>", "functools[",
  "<|tool_call>", "<tool_call|>", "call:", '<|"|>', "<|channel>", "thought", "<channel|>", "<｜tool▁calls▁begin｜>",
  "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "```json", "```",
  '{"name": "f", "arguments": ', '{"name": "g", "parameters": ', '"name"', '"arguments"', "f", "g", "f(", "[f(", "g(x=1)",
  "{", "}", "[", "]", "(", ")", ":", ",", ";", "=", '"', "'", "\\", "\\u00", "\\n", "\n", " ", "  ", "1", "-2.5e3", "tru", "true",
  "null", "None", "x", "héllo", "例", "😀", "a=", ">", "<", "|", "\t", "\u3000", "\r\n",
];

const FORMATS: OutputFormat[] = ["hermes", "smollm", "qwen-xml", "llama-json", "pythonic", "mistral", "ministral", "phi4", "gemma4", "deepseek-r1"];
const REASONING = [null, { open: "<think>", close: "</think>" }, { open: "[THINK]", close: "[/THINK]" }, { open: "<|channel>", close: "<channel|>" }];
/** Seeds per format (FUZZ_SEEDS to search longer). */
const SEEDS = Number(process.env.FUZZ_SEEDS ?? 150);
const TOOLS = [tool("f", { x: { type: "integer" }, s: { type: "string" } }), tool("g")];

function randomText(seed: number): string {
  let state = seed >>> 0 || 1;
  const next = () => (state = (state * 1664525 + 1013904223) >>> 0);
  let text = "";
  const n = 5 + (next() % 40);
  for (let i = 0; i < n; i++) text += PIECES[next() % PIECES.length];
  return text;
}

describe("fuzz", () => {
  for (const format of FORMATS) {
    it(`${format}: random output never throws, is chunking-independent, and calls are valid`, { timeout: 600_000 }, () => {
      for (let seed = 1; seed <= SEEDS; seed++) {
        const text = randomText(seed * 31 + format.length);
        const reasoning = REASONING[seed % REASONING.length];
        const options = { format, tools: TOOLS, reasoning, reasoningOpen: seed % 5 === 0 };
        const whole = fold(parse(options, [text]).events);
        for (const call of whole.calls) {
          expect(["f", "g"], `seed ${seed}: ${JSON.stringify(text)}`).toContain(call.name);
          expect(() => JSON.parse(call.arguments), `seed ${seed}: ${JSON.stringify(text)} → ${call.arguments}`).not.toThrow();
        }
        // Arguments compared parsed: a chunk boundary inside a surrogate pair may write it as two \u escapes.
        const norm = (f: typeof whole) => ({ ...f, calls: f.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) as unknown })) });
        expect(norm(fold(parse(options, randomChunks(text, seed, 4)).events)), `seed ${seed}: ${JSON.stringify(text)}`).toEqual(norm(whole));
        expect(fold(parse(options, Array.from(text)).events), `seed ${seed} 1-char: ${JSON.stringify(text)}`).toEqual(whole);
      }
    });
  }
});
