/**
 * Every vector of ../shared/fixtures/toolcall-vectors.jsonl through our output
 * parsers, whole and in several chunkings (1 character, seeded random): the
 * message assembled from the events (as ChoiceBuilder assembles it, for both
 * the streamed deltas and the final message) must equal the vector's
 * expectation — or, where the vector records a server behaviour that DESIGN's
 * parsing policy overrides, the policy's result, stated per vector below.
 */
import { describe, expect, it } from "vitest";
import { createOutputParser } from "../../src/parsers/index.js";
import { ChoiceBuilder } from "../../src/protocol/choice-builder.js";
import type { ChunkDelta } from "../../src/protocol/types.js";
import { chunkings, loadVectors, optionsFor, type Vector } from "./support/vectors.js";
import { POLICY } from "./support/vector-policy.js";

interface Message {
  content: string | null;
  reasoning_content: string | null;
  tool_calls: { name: string; arguments: unknown }[];
}

/** Parse one chunking; returns the final message and the message rebuilt from the streamed deltas. */
function run(v: Vector, chunks: string[]): { message: Message; streamed: Message } {
  const parser = createOutputParser(optionsFor(v, expectedFor(v).tool_calls));
  let n = 0;
  const builder = new ChoiceBuilder(0, () => `call_${n++}`);
  const deltas: ChunkDelta[] = [];
  for (const chunk of chunks) deltas.push(...builder.deltas(parser.push(chunk)));
  deltas.push(...builder.deltas(parser.finish()));
  const m = builder.message();
  const message: Message = {
    content: m.content,
    reasoning_content: m.reasoning_content ?? null,
    tool_calls: (m.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: JSON.parse(c.function.arguments) })),
  };
  // Rebuild from deltas as a client would (OpenAI SDK accumulation).
  let content = "";
  let reasoning = "";
  const calls: { name: string; arguments: string }[] = [];
  for (const d of deltas) {
    content += d.content ?? "";
    reasoning += d.reasoning_content ?? "";
    for (const c of d.tool_calls ?? []) {
      if (c.function?.name !== undefined) calls[c.index] = { name: c.function.name, arguments: "" };
      calls[c.index].arguments += c.function?.arguments ?? "";
    }
  }
  const streamed: Message = {
    content: calls.length > 0 && content.trim() === "" ? null : content,
    reasoning_content: reasoning === "" ? null : reasoning,
    tool_calls: calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments) })),
  };
  return { message, streamed };
}

/**
 * What we expect: the vector's expectation in our message shape (ChoiceBuilder
 * gives content "" rather than null when there are no calls, and leaves out
 * empty reasoning), unless DESIGN's policy says otherwise for this vector.
 */
export function expectedFor(v: Vector): Message {
  const policy = POLICY[v.id];
  const e = { ...v.expected, ...(policy?.expected ?? {}) };
  const calls = e.tool_calls.map((c) => ({ name: c.name, arguments: c.arguments }));
  return {
    content: calls.length === 0 ? (e.content ?? "") : e.content === null || e.content.trim() === "" ? null : e.content,
    reasoning_content: e.reasoning_content === "" ? null : e.reasoning_content,
    tool_calls: calls,
  };
}

const vectors = loadVectors();

describe("tool-call and reasoning vectors, parser layer", () => {
  it("covers every line of the fixture", () => {
    expect(vectors.length).toBeGreaterThan(50);
    for (const id of Object.keys(POLICY)) expect(vectors.some((v) => v.id === id), `policy entry ${id} names a vector`).toBe(true);
  });

  for (const v of vectors) {
    const policy = POLICY[v.id];
    const title = policy ? `${v.id} (policy: ${policy.rule})` : v.id;
    it(title, () => {
      const expected = expectedFor(v);
      for (const { label, chunks } of chunkings(v.model_output)) {
        const { message, streamed } = run(v, chunks);
        expect(message, `${v.id} ${label}`).toEqual(expected);
        expect(streamed, `${v.id} ${label}: streamed deltas`).toEqual(expected);
      }
    });
  }
});
