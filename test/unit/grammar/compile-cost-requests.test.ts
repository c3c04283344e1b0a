/**
 * Issue 36's grammars through the client (createClient over the scripted
 * engine, worker: false, so compiling runs on this event loop as it runs on
 * the shared worker's): each request is answered, or refused with a 400,
 * without holding the event loop. Before, a chat `response_format` regex of
 * optionals nested 20 deep stalled it 2.1 s, and 30 deep did not finish.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/index.js";
import { createScriptedEngine } from "../../../src/testing.js";
import { distinctRepetitions50k, nestedLark, nestedRegex } from "./issue-36-grammars.js";

const QWEN3 = "Qwen3-0.6B-q4f16_1-MLC";

/** `run`'s outcome and the longest the event loop went without running a 5 ms timer meanwhile. */
async function withLongestStall<T>(run: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    const result = await run();
    stallMs = Math.max(stallMs, performance.now() - last);
    return { result, stallMs };
  } finally {
    clearInterval(timer);
  }
}

function setup(replies: string[]) {
  const engine = createScriptedEngine({ replies });
  return { engine, client: createClient({ worker: false, engine }) };
}

/** Far below the seconds the old compiler held the loop for, loose enough for a loaded machine. */
const STALL_CEILING_MS = 1_000;

describe("nested grammars in requests are answered without holding the event loop", () => {
  it("chat response_format regex, optionals nested 30 deep: answered", async () => {
    const { engine, client } = setup(["bba"]);
    const { result, stallMs } = await withLongestStall(() =>
      client.chat.completions.create({
        model: QWEN3,
        messages: [{ role: "user", content: "x" }],
        reasoning_effort: "none",
        response_format: { type: "grammar", syntax: "regex", definition: nestedRegex(30) },
      }),
    );
    expect(result.choices[0].message.content).toBe("bba");
    expect(engine.requests[0].responseFormat?.type).toBe("grammar");
    expect(stallMs).toBeLessThan(STALL_CEILING_MS);
  });

  it("Responses text.format Lark, `*` nested 20 deep under %ignore: answered", async () => {
    const { client } = setup(["a a"]);
    const { result, stallMs } = await withLongestStall(() =>
      client.responses.create({ model: QWEN3, input: "x", reasoning: { effort: "none" }, text: { format: { type: "grammar", syntax: "lark", definition: nestedLark(20) } } }),
    );
    expect(result.output_text).toBe("a a");
    expect(stallMs).toBeLessThan(STALL_CEILING_MS);
  });

  it("a chat custom tool with that Lark grammar (compiled for two call formats): the call comes back", async () => {
    const call = `<tool_call>\n{"name": "t", "arguments": {"input": "a a"}}\n</tool_call>`;
    const { client } = setup([call]);
    const { result, stallMs } = await withLongestStall(() =>
      client.chat.completions.create({
        model: QWEN3,
        messages: [{ role: "user", content: "x" }],
        reasoning_effort: "none",
        tools: [{ type: "custom", custom: { name: "t", format: { type: "grammar", grammar: { syntax: "lark", definition: nestedLark(20) } } } }],
        tool_choice: { type: "custom", custom: { name: "t" } },
      }),
    );
    expect(result.choices[0].message.tool_calls).toEqual([{ id: expect.any(String), type: "custom", custom: { name: "t", input: "a a" } }]);
    expect(stallMs).toBeLessThan(STALL_CEILING_MS);
  });

  it("50 KB of different `a{0,n}`: a 400 grammar_too_large naming the bound, before the engine sees it", async () => {
    const { engine, client } = setup(["a"]);
    const { result, stallMs } = await withLongestStall(() =>
      client.chat.completions
        .create({ model: QWEN3, messages: [{ role: "user", content: "x" }], response_format: { type: "grammar", syntax: "regex", definition: distinctRepetitions50k } })
        .catch((error: unknown) => error),
    );
    expect(result).toMatchObject({ status: 400, code: "grammar_too_large", param: "response_format.definition" });
    expect((result as Error).message).toContain("exceeds the bound of 250000 characters");
    expect(engine.requests).toHaveLength(0);
    expect(stallMs).toBeLessThan(STALL_CEILING_MS);
  });
});
