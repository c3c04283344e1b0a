/**
 * The web-xgrammar that web-llm 0.2.86 bundles (it is not exported): its
 * module is cut out of web-llm's bundle and evaluated with `process` hidden so
 * that the Emscripten loader takes its non-Node path (the wasm is inlined as a
 * data URI). Grammars are then compiled against a toy byte-level vocabulary
 * (one token per ASCII character, plus a stop token), the way web-llm compiles
 * a `response_format` for a model's tokenizer, and text is fed token by token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

interface Matcher {
  acceptToken(id: number): boolean;
  isTerminated(): boolean;
  dispose(): void;
}
interface XGrammar {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], type: string, prependSpace: boolean, size: number, stop: number[]): Promise<unknown> };
  GrammarCompiler: { createGrammarCompiler(info: unknown): Promise<{ compileStructuralTag(tag: unknown): Promise<{ dispose(): void }> }> };
  GrammarMatcher: { createGrammarMatcher(compiled: unknown): Promise<Matcher> };
}

let loaded: XGrammar | undefined;

/** The bundled web-xgrammar module. */
export function xgrammar(): XGrammar {
  if (loaded) return loaded;
  const bundle = readFileSync(createRequire(import.meta.url).resolve("@mlc-ai/web-llm"), "utf8");
  const start = bundle.indexOf("var lib$3 = {exports: {}};");
  const end = bundle.indexOf("var libExports$1 = requireLib$1();");
  if (start < 0 || end < start) throw new Error("web-xgrammar not found in the web-llm bundle: the bundle layout changed");
  loaded = new Function("process", bundle.slice(start, end) + "\nreturn requireLib$1();")(undefined) as XGrammar;
  return loaded;
}

const STOP = 128;
const VOCAB = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), "</s>"];
let compiler: Promise<{ compileStructuralTag(tag: unknown): Promise<{ dispose(): void }> }> | undefined;

/** A structural tag compiled the way web-llm compiles `response_format: {type: "structural_tag"}`. */
export async function compileTag(tag: unknown): Promise<(text: string) => Promise<boolean>> {
  const xg = xgrammar();
  compiler ??= xg.TokenizerInfo.createTokenizerInfo(VOCAB, "raw", false, VOCAB.length, [STOP]).then((info) => xg.GrammarCompiler.createGrammarCompiler(info));
  const compiled = await (await compiler).compileStructuralTag(tag);
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
}
