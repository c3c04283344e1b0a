/**
 * Grammar jump-forward against the real thing: the web-xgrammar web-llm
 * 0.2.86 bundles (families/xgrammar.ts), over a toy byte-level vocabulary.
 * Its `GrammarMatcher.findJumpForwardString()` is what the web-llm binding
 * drafts from (speculative/jump-forward.ts); the scripted engine's mirror
 * (scripted-jump-forward.ts) must force no more than it does, and the
 * forced call markup it mirrors is there.
 */
import { describe, expect, it } from "vitest";
import { xgrammar } from "./families/xgrammar.js";
import { activeMatcher, forcedDraft } from "../../src/engine/speculative/jump-forward.js";
import { scriptedForcedText } from "../../src/engine/scripted-jump-forward.js";
import { createClient } from "../../src/index.js";
import { createScriptedEngine } from "../../src/testing.js";
import type { EngineResponseFormat } from "../../src/engine/types.js";

const STOP = 128;
const VOCAB = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), "</s>"];

interface RealMatcher {
  acceptToken(id: number): boolean;
  findJumpForwardString(): string;
  dispose(): void;
}

async function matcherFor(format: EngineResponseFormat): Promise<RealMatcher> {
  const xg = xgrammar() as unknown as {
    TokenizerInfo: { createTokenizerInfo(...a: unknown[]): Promise<unknown> };
    GrammarCompiler: { createGrammarCompiler(info: unknown): Promise<{ compileStructuralTag(tag: unknown): Promise<unknown> }> };
    GrammarMatcher: { createGrammarMatcher(compiled: unknown): Promise<RealMatcher> };
  };
  const info = await xg.TokenizerInfo.createTokenizerInfo(VOCAB, "raw", false, VOCAB.length, [STOP]);
  const compiler = await xg.GrammarCompiler.createGrammarCompiler(info);
  if (format.type !== "structural_tag") throw new Error("a structural tag expected");
  return xg.GrammarMatcher.createGrammarMatcher(await compiler.compileStructuralTag(format.structural_tag));
}

/** The structural tag the host sends for a forced `set_unit` call (Qwen2.5's call format). */
async function forcedCallFormat(): Promise<EngineResponseFormat> {
  const engine = createScriptedEngine({ replies: ['<tool_call>\n{"name": "set_unit", "arguments": {"unit": "celsius"}}\n</tool_call>'] });
  const client = createClient({ engine, worker: false });
  const setUnit = { type: "function" as const, function: { name: "set_unit", parameters: { type: "object", properties: { unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["unit"] } } };
  await client.chat.completions.create({ model: "Qwen2.5-0.5B-Instruct-q4f16_1-MLC", messages: [{ role: "user", content: "Celsius." }], tools: [setUnit], tool_choice: { type: "function", function: { name: "set_unit" } } });
  return engine.requests[0].responseFormat!;
}

const encode = (text: string) => Array.from(text, (c) => c.charCodeAt(0));

describe("grammar jump-forward with web-llm 0.2.86's xgrammar", () => {
  it("a forced call: the matcher forces its opening markup, and an enum's rest once a letter chose; the scripted mirror forces a prefix of that", async () => {
    const format = await forcedCallFormat();
    const matcher = await matcherFor(format);
    try {
      const forced = matcher.findJumpForwardString();
      expect(forced.startsWith('<tool_call>\n{"name": "set_unit", "arguments": ')).toBe(true);
      const mirrored = scriptedForcedText(format, "");
      expect(mirrored.length).toBeGreaterThan(20);
      expect(forced.startsWith(mirrored)).toBe(true);
      // Fed the forced text and the key, nothing is forced where the enum lets the model choose; one letter decides the rest.
      for (const id of encode(`${forced}"unit": "`)) expect(matcher.acceptToken(id)).toBe(true);
      expect(matcher.findJumpForwardString()).toBe("");
      expect(matcher.acceptToken("c".charCodeAt(0))).toBe(true);
      expect(matcher.findJumpForwardString(), "the rest of `celsius` and the call's close").toMatch(/^elsius"/);
    } finally {
      matcher.dispose();
    }
  }, 60_000);

  it("the binding drafts the forced text but its last token, and only while the request is constrained", async () => {
    const matcher = await matcherFor(await forcedCallFormat());
    try {
      const host = { grammarMatcher: matcher, isGrammarConstrained: (f: unknown) => (f as { type?: string } | undefined)?.type === "structural_tag" };
      const active = activeMatcher(host, { response_format: { type: "structural_tag" } });
      expect(active).toBe(matcher);
      const forced = active!.findJumpForwardString();
      expect(forcedDraft(forced, encode)).toEqual(encode(forced).slice(0, -1));
      expect(activeMatcher(host, {}), "a kept matcher, an unconstrained request").toBeNull();
    } finally {
      matcher.dispose();
    }
  }, 60_000);
});

describe("forced drafts stay bounded", () => {
  it("a long forced string (a schema's constant) is tokenized up to MAX_FORCED_CHARS per pass", async () => {
    const { MAX_FORCED_CHARS } = await import("../../src/engine/speculative/jump-forward.js");
    let tokenized = 0;
    const draft = forcedDraft("x".repeat(1_000_000), (text) => {
      tokenized += text.length;
      return encode(text);
    });
    expect(tokenized).toBe(MAX_FORCED_CHARS);
    expect(draft).toHaveLength(MAX_FORCED_CHARS - 1);
  });
});
