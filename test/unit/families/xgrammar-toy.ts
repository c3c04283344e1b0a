/**
 * What the two bundled web-xgrammar builds (web-llm 0.2.86's in xgrammar.ts,
 * web-llm 0.2.79's in xgrammar-0279.ts) are driven with in these tests: a toy
 * byte-level vocabulary (one token per ASCII character, plus a stop token), one
 * grammar compiler per build, and an acceptor that feeds text token by token.
 * Only the bundle loader and the compile call differ between the two builds.
 */

interface Matcher {
  acceptToken(id: number): boolean;
  isTerminated(): boolean;
  dispose(): void;
}

/** The part of a web-xgrammar build the toy vocabulary uses; `Compiler` is the build's grammar compiler. */
export interface ToyXGrammar<Compiler> {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], type: string, prependSpace: boolean, size: number, stop: number[]): Promise<unknown> };
  GrammarCompiler: { createGrammarCompiler(info: unknown): Promise<Compiler> };
  GrammarMatcher: { createGrammarMatcher(compiled: unknown): Promise<Matcher> };
}

const STOP = 128;
const VOCAB = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), "</s>"];

/**
 * A compile function for one web-xgrammar build: `load` gives the build (called
 * on first use), `compile` compiles a grammar with the build's compiler for the
 * toy vocabulary (created once). The compiled grammar comes back as a function
 * telling whether it accepts a text.
 */
export function toyCompile<Compiler, Grammar>(
  load: () => ToyXGrammar<Compiler>,
  compile: (compiler: Compiler, grammar: Grammar) => Promise<unknown>,
): (grammar: Grammar) => Promise<(text: string) => Promise<boolean>> {
  let compiler: Promise<Compiler> | undefined;
  return async (grammar: Grammar) => {
    const xg = load();
    compiler ??= xg.TokenizerInfo.createTokenizerInfo(VOCAB, "raw", false, VOCAB.length, [STOP]).then((info) => xg.GrammarCompiler.createGrammarCompiler(info));
    const compiled = await compile(await compiler, grammar);
    /** Whether the grammar accepts exactly `text` followed by the stop token. */
    return async (text: string) => {
      const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled);
      try {
        for (const ch of text) {
          const code = ch.charCodeAt(0);
          if (code >= 128) throw new Error(`toy vocabulary is ASCII only: ${JSON.stringify(ch)}`);
          if (!matcher.acceptToken(code)) return false;
        }
        return matcher.acceptToken(STOP) && matcher.isTerminated();
      } finally {
        matcher.dispose();
      }
    };
  };
}
