/**
 * A constrained reply must never sample a stop token before its grammar can
 * end: web-llm 0.2.79's xgrammar put the stop tokens' empty table text in
 * every mask while its matcher rejected them ("Grammar matcher rejected the
 * newly sampled token", seen on the real engine in a forced tool call).
 * Driven with both bundled xgrammar builds on a toy vocabulary whose table
 * comes from a pipeline's `tokenizer.idToToken`, as web-llm builds it.
 */
import { describe, expect, it } from "vitest";
import { giveStopTokensText, stopTokenText } from "../../src/engine/webllm/webllm-stop-token-text.js";
import { xgrammar079 } from "./families/xgrammar-0279.js";
import { xgrammar } from "./families/xgrammar.js";

const STOP = 128;
const SIZE = 129;

interface Matcher {
  acceptToken(id: number): boolean;
  getNextTokenBitmask(): Promise<Int32Array>;
  isTerminated(): boolean;
  dispose(): void;
}
interface Build {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], type: string, prependSpace: boolean, size: number, stop: number[]): Promise<unknown> };
  GrammarCompiler: { createGrammarCompiler(info: unknown): Promise<{ compileGrammar(ebnf: string): Promise<unknown> }> };
  GrammarMatcher: { createGrammarMatcher(compiled: unknown): Promise<Matcher> };
}

/** A loaded pipeline as web-llm has it: the tokenizer gives "" for the special (stop) token. */
function pipeline() {
  return { tokenizer: { idToToken: (id: number) => (id === STOP ? "" : String.fromCharCode(id)) }, stopTokens: [STOP] };
}

/** A matcher for `ebnf`, its token table read from `source` the way web-llm reads it. */
async function matcherFor(build: Build, source: ReturnType<typeof pipeline>, ebnf: string): Promise<Matcher> {
  const table = Array.from({ length: SIZE }, (_, id) => source.tokenizer.idToToken(id));
  const info = await build.TokenizerInfo.createTokenizerInfo(table, "raw", false, SIZE, [STOP]);
  const compiler = await build.GrammarCompiler.createGrammarCompiler(info);
  return build.GrammarMatcher.createGrammarMatcher(await compiler.compileGrammar(ebnf));
}

const allowed = (mask: Int32Array, id: number) => ((mask[id >> 5] >>> (id & 31)) & 1) === 1;
const code = (c: string) => c.charCodeAt(0);
const builds: Array<[string, () => Build]> = [
  ["0.2.79", () => xgrammar079() as unknown as Build],
  ["0.2.86", () => xgrammar() as unknown as Build],
];

describe("stop tokens in xgrammar's token table", () => {
  it("web-llm 0.2.79's xgrammar, as web-llm feeds it: the stop token is in the mask before the grammar can end, and its matcher rejects it", async () => {
    const matcher = await matcherFor(xgrammar079() as unknown as Build, pipeline(), 'root ::= "ab"');
    try {
      expect(matcher.acceptToken(code("a"))).toBe(true);
      expect(allowed(await matcher.getNextTokenBitmask(), STOP)).toBe(true);
      expect(matcher.acceptToken(STOP)).toBe(false);
    } finally {
      matcher.dispose();
    }
  });

  for (const [version, build] of builds) {
    it(`web-llm ${version}'s xgrammar with the stop token given a text: masked until the grammar can end, then allowed and accepted`, async () => {
      const source = pipeline();
      giveStopTokensText(source);
      expect(source.tokenizer.idToToken(STOP)).toBe(stopTokenText(STOP));
      expect(source.tokenizer.idToToken(code("a"))).toBe("a");
      for (const grammar of ['root ::= "ab"', 'root ::= "{\\"k\\": \\"" [^"]* "\\"}"']) {
        const matcher = await matcherFor(build(), source, grammar);
        try {
          const text = grammar.includes("[^") ? '{"k": "x"}' : "ab";
          for (const c of text) {
            expect(allowed(await matcher.getNextTokenBitmask(), STOP)).toBe(false);
            expect(matcher.acceptToken(code(c))).toBe(true);
          }
          expect(allowed(await matcher.getNextTokenBitmask(), STOP)).toBe(true);
          expect(matcher.acceptToken(STOP)).toBe(true);
          expect(matcher.isTerminated()).toBe(true);
        } finally {
          matcher.dispose();
        }
      }
    });
  }

  it("only an empty stop token is given a text, once, and a pipeline without a tokenizer or stop tokens is left alone", () => {
    const source = { tokenizer: { idToToken: (id: number) => (id === 1 ? "</s>" : id === 2 ? "" : "x") }, stopTokens: [1, 2] };
    giveStopTokensText(source);
    giveStopTokensText(source);
    expect([0, 1, 2, 3].map((id) => source.tokenizer.idToToken(id))).toEqual(["x", "</s>", stopTokenText(2), "x"]);
    expect(() => giveStopTokensText({})).not.toThrow();
    expect(() => giveStopTokensText({ tokenizer: {}, stopTokens: [1] })).not.toThrow();
  });
});
