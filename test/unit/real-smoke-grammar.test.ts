/**
 * The real-engine grammar step's requests and checks (test/real/grammar-smoke.ts),
 * driven here through createClient and the scripted engine: the library accepts
 * both request bodies, the constraint web-llm 0.2.79 would get accepts exactly
 * the texts in the grammar, and the step's `matches` is true for an output in the
 * grammar and false for one outside it (the real run is scripts/smoke-real.mjs
 * --steps grammar).
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import { responseFormatFor } from "../../src/engine/webllm/webllm-request.js";
import { runGrammarSmoke, LARK_AS_REGEXP, TOOL_NAME } from "../real/grammar-smoke.js";
import { compileEbnf079 } from "./families/xgrammar-0279.js";

const MODEL = "Qwen2.5-0.5B-Instruct-q4f32_1-MLC";
const hermesCall = (name: string, input: string) => `<tool_call>\n{"name": "${name}", "arguments": {"input": ${JSON.stringify(input)}}}\n</tool_call>`;

async function run(replies: string[]) {
  const engine = createScriptedEngine({ replies });
  // the scripted engine cuts text into more tokens than Qwen's tokenizer: room for the whole call
  const report = await runGrammarSmoke(createClient({ worker: false, engine }), MODEL, {}, { regex: 40, tool: 200 });
  return { engine, report: report as { regex: Record<string, unknown>; customTool: Record<string, unknown> } };
}

describe("the real-engine grammar step", () => {
  it("outputs in the grammars: both requests accepted, matches true, and the 0.2.79 constraints accept exactly those", async () => {
    const { engine, report } = await run(["123-ab", hermesCall(TOOL_NAME, "ls abc")]);
    expect(report.regex).toMatchObject({ text: "123-ab", finish_reason: "stop", matches: true });
    expect(report.customTool).toMatchObject({ input: "ls abc", finish_reason: "tool_calls", matches: true });

    const regex = await compileEbnf079((responseFormatFor(engine.requests[0].responseFormat, false) as { grammar: string }).grammar);
    expect(await regex("123-ab")).toBe(true);
    expect(await regex("123-abd")).toBe(false);
    expect(await regex("12-ab")).toBe(false);
    const tool = await compileEbnf079((responseFormatFor(engine.requests[1].responseFormat, false) as { grammar: string }).grammar);
    expect(await tool(hermesCall(TOOL_NAME, "ls abcd"))).toBe(true);
    expect(await tool(hermesCall(TOOL_NAME, "ls abcde"))).toBe(false);
    expect(await tool(hermesCall(TOOL_NAME, "ls ABC"))).toBe(false);
    expect(LARK_AS_REGEXP.test("ls abcd") && !LARK_AS_REGEXP.test("ls abcde") && !LARK_AS_REGEXP.test("ls ")).toBe(true);
  }, 30_000);

  it("outputs outside the grammars: matches false", async () => {
    const { report } = await run(["hello", hermesCall(TOOL_NAME, "rm -rf")]);
    expect(report.regex).toMatchObject({ text: "hello", matches: false });
    expect(report.customTool).toMatchObject({ input: "rm -rf", matches: false });
  });
});
